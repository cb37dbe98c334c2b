/**
 * GET /transactions/{transactionId}/events (issue 12): the ordered timeline of a transaction —
 * operations with their acquirer answers, events, callback attempts and webhook deliveries —
 * in the page envelope, on both stores; another merchant's transaction is a 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, motoBody, startOnlineSuite, stopOnlineSuite, waitFor } from '../online/helpers.js';
import { orderTimeline, type TimelineEntry } from '../../src/modules/transactions/timeline.js';

describe('timeline order (unit)', () => {
  test('at the same instant: created, operations in creation order (started before finished), state, events, deliveries', () => {
    const at = '2026-11-23T10:00:00.000Z';
    const e = (id: string, kind: TimelineEntry['kind'], operationId: string | null = null, when = at) => ({ id, kind, at: when, operationId }) as TimelineEntry;
    const ordered = orderTimeline(
      [
        e('w', 'WEBHOOK_DELIVERY_ATTEMPT'),
        e('ev', 'EVENT'),
        e('cap-s', 'OPERATION_STARTED', 'cap'),
        e('st', 'STATE_CHANGED'),
        e('auth-f', 'OPERATION_FINISHED', 'auth'),
        e('later', 'TRANSACTION_CREATED', null, '2026-11-23T10:00:00.001Z'),
        e('cb', 'CALLBACK_ATTEMPT'),
        e('cap-f', 'OPERATION_FINISHED', 'cap'),
        e('auth-s', 'OPERATION_STARTED', 'auth'),
        e('c', 'TRANSACTION_CREATED'),
      ],
      new Map([
        ['auth', '2026-11-23T09:59:59.000Z'],
        ['cap', at],
      ]),
    );
    assert.deepEqual(
      ordered.map((x) => x.id),
      ['c', 'auth-s', 'auth-f', 'cap-s', 'cap-f', 'st', 'ev', 'cb', 'w', 'later'],
    );
  });
});

for (const kind of await availableStores()) {
  describe(`transaction timeline API (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    const timeline = (id: string, query = '') => m.api.get(`${API}/transactions/${id}/events${query}`);

    test('authorize, capture, partial refund: every step in order, with callback and webhook attempts', async () => {
      const hook = await m.api.post(`${API}/webhooks`, { url: rx.url('/wh'), events: ['transaction.refunded.v1'], secret: 'whsec-timeline' });
      assert.equal(hook.status, 200, hook.text);
      rx.respond('/cb', [500]);
      const moto = await m.api.post(`${API}/moto`, motoBody(m, { amount: 1000, notificationUrl: rx.url('/cb') }));
      assert.equal(moto.status, 200, moto.text);
      const id = moto.body.transaction.id as string;
      assert.equal((await m.api.post(`${API}/transactions/${id}/capture`, { amount: 1000 })).body.success, true);
      assert.equal((await m.api.post(`${API}/transactions/${id}/refund`, { amount: 400 })).body.success, true);

      // The callback's first attempt is answered 500, the second 200; the refund's webhook is delivered.
      const page = await waitFor(async () => {
        const res = await timeline(id, '?perPage=500');
        const kinds = (res.body?.items ?? []).map((e: { kind: string; state: string }) => `${e.kind}:${e.state}`);
        return kinds.includes('CALLBACK_ATTEMPT:DELIVERED') && kinds.includes('WEBHOOK_DELIVERY_ATTEMPT:DELIVERED') ? res : null;
      }, 'callback and webhook attempts in the timeline');
      assert.equal(page.status, 200);
      const items = page.body.items as Array<Record<string, any>>;
      assert.equal(page.body.total, items.length);
      assert.equal(page.body.page, 1);

      // Ordered by time, and the life runs in order.
      for (let i = 1; i < items.length; i++) assert.ok(items[i - 1]!.at <= items[i]!.at, `entry ${i} is not before the previous one`);
      assert.equal(items[0]!.kind, 'TRANSACTION_CREATED');
      assert.equal(items[0]!.amount, 1000);
      const finished = items.filter((e) => e.kind === 'OPERATION_FINISHED');
      assert.deepEqual(
        finished.map((e) => [e.operationType, e.state, e.amount]),
        [
          ['AUTHORIZATION', 'SUCCESS', 1000],
          ['CAPTURE', 'SUCCESS', 1000],
          ['REFUND', 'SUCCESS', 400],
        ],
      );
      // The acquirer's raw codes travel with its answers.
      for (const f of finished)
        assert.ok('externalStatusCodes' in f && (f.externalStatusCodes === null || typeof f.externalStatusCodes.acquirer !== 'undefined'));
      const refundAt = finished[2]!.at as string;
      const events = items.filter((e) => e.kind === 'EVENT').map((e) => e.event);
      assert.ok(events.includes('transaction.refunded.v1'), `events: ${events.join(', ')}`);
      assert.ok(events.includes('transaction.captured.v1'), `events: ${events.join(', ')}`);
      assert.ok(items.find((e) => e.kind === 'EVENT' && e.event === 'transaction.refunded.v1')!.at >= refundAt);

      const attempts = items.filter((e) => e.kind === 'CALLBACK_ATTEMPT');
      assert.deepEqual(
        attempts.slice(0, 2).map((a) => [a.attempt, a.statusCode, a.state]),
        [
          [1, 500, 'FAILED'],
          [2, 200, 'DELIVERED'],
        ],
      );
      assert.equal(attempts[0]!.excerpt, 'HTTP 500');
      assert.equal(attempts[0]!.url, rx.url('/cb'));
      assert.ok(Number.isInteger(attempts[0]!.durationMs) && attempts[0]!.durationMs >= 0);
      const delivery = items.find((e) => e.kind === 'WEBHOOK_DELIVERY_ATTEMPT')!;
      assert.equal(delivery.event, 'transaction.refunded.v1');
      assert.equal(delivery.webhookId, hook.body.webhook.id);
      assert.equal(delivery.statusCode, 200);

      // Page envelope: two per page walks the same list.
      const first = await timeline(id, '?perPage=2');
      assert.equal(first.status, 200);
      assert.equal(first.body.items.length, 2);
      assert.equal(first.body.nextPage, 2);
      assert.equal(first.body.lastPage, Math.ceil(first.body.total / 2));
      assert.deepEqual(
        first.body.items.map((e: { id: string }) => e.id),
        items.slice(0, 2).map((e) => e.id),
      );
      const past = await timeline(id, '?page=999');
      assert.equal(past.status, 200);
      assert.deepEqual(past.body.items, []);
      assert.equal(past.body.from, null);
    });

    test("another merchant's transaction is 404, no credential is 401, bad paging is 422", async () => {
      const moto = await m.api.post(`${API}/moto`, motoBody(m, { amount: 500 }));
      const id = moto.body.transaction.id as string;
      const other = await t.createMerchant({ physical: false });
      const foreign = await other.api.get(`${API}/transactions/${id}/events`);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.errorCode, 'NOT_FOUND');
      assert.equal((await t.client(null).get(`${API}/transactions/${id}/events`)).status, 401);
      assert.equal((await m.api.get(`${API}/transactions/NOSUCHTX000/events`)).status, 404);
      const bad = await timeline(id, '?perPage=0');
      assert.equal(bad.status, 422);
      assert.equal(bad.body.errorCode, 'VALIDATION_ERROR');
    });

    test('the route is documented in OpenAPI', async () => {
      const doc = await t.client(null).get('/openapi.json');
      const op = doc.body.paths['/public/api/v1/transactions/{transactionId}/events']?.get;
      assert.ok(op, 'documented');
      assert.ok(op.responses['200']);
    });
  });
}
