import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advance, emit, newPath, type Receiver, register, sleep, startReceiver, waitFor } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const kind of await availableStores()) {
  describe(`webhooks happy path (${kind})`, () => {
    let t: TestRuntime;
    let rx: Receiver;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      rx = await startReceiver();
      m = await t.createMerchant();
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    test('register → {webhook}; GET and the list show it; the secret is never returned (the signing secret only by create and GET)', async () => {
      const url = rx.url(newPath());
      const events = ['transaction.success.v1', 'settlement.transfer-ready.v1'];
      const secret = 'whsec-never-shown-1234';
      const res = await m.api.post(`${API}/webhooks`, { url, events, secret });
      assert.equal(res.status, 200, res.text);
      const { webhook } = res.body;
      assert.deepEqual(Object.keys(webhook).sort(), ['createdAt', 'events', 'id', 'pauseReason', 'pausedAt', 'signingSecret', 'url']);
      assert.match(webhook.signingSecret, /^whsec_/);
      assert.match(webhook.id, UUID);
      assert.equal(webhook.url, url);
      assert.deepEqual(webhook.events, events);
      assert.equal(webhook.pausedAt, null);
      assert.equal(webhook.pauseReason, null);
      assert.ok(!Number.isNaN(Date.parse(webhook.createdAt)));
      assert.ok(!res.text.includes(secret));

      const got = await m.api.get(`${API}/webhooks/${webhook.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, { webhook });
      const list = await m.api.get(`${API}/webhooks?perPage=500`);
      assert.equal(list.status, 200);
      const { signingSecret: _signingSecret, ...listed } = webhook;
      assert.deepEqual(
        list.body.items.find((i: any) => i.id === webhook.id),
        listed,
        'list items are bare records (INTERFACE §11.9), without the signing secret',
      );
      assert.ok(!got.text.includes(secret) && !list.text.includes(secret));
    });

    test('an event is delivered as {event, data} with Authorization = secret and a stable X-Delivery-Id', async () => {
      const { webhook, path, secret } = await register(m, rx, ['transaction.captured.v1']);
      const data = { transaction: { id: 'ABCDEFGH123', amount: 1000 } };
      await emit(t, m, 'transaction.captured.v1', data);
      const [hit] = await waitFor(() => (rx.at(path).length ? rx.at(path) : null), 'the delivery');
      assert.equal(hit!.headers.authorization, secret);
      assert.equal(hit!.headers['content-type'], 'application/json');
      assert.deepEqual(hit!.body, { event: 'transaction.captured.v1', data });
      assert.match(String(hit!.headers['x-delivery-id']), UUID);

      const deliveries = await waitFor(async () => {
        const res = await m.api.get(`${API}/webhooks/${webhook.id}/deliveries`);
        return res.body.items[0]?.delivery.state === 'DELIVERED' ? res.body : null;
      }, 'the delivery to be recorded');
      assert.equal(deliveries.total, 1);
      const { delivery } = deliveries.items[0];
      assert.equal(delivery.id, hit!.headers['x-delivery-id']);
      assert.equal(delivery.event, 'transaction.captured.v1');
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.attemptLog.length, 1);
      assert.equal(delivery.attemptLog[0].success, true);
      assert.equal(delivery.attemptLog[0].httpStatus, 200);
    });

    test('only subscribed events are delivered, and each webhook gets its own delivery', async () => {
      const a = await register(m, rx, ['transaction.refunded.v1']);
      const b = await register(m, rx, ['transaction.refunded.v1', 'transaction.voided.v1']);
      await emit(t, m, 'transaction.voided.v1');
      await emit(t, m, 'transaction.refunded.v1');
      await waitFor(() => rx.at(b.path).length === 2 && rx.at(a.path).length === 1, 'both deliveries');
      await sleep(300);
      assert.deepEqual(
        rx.at(a.path).map((h) => h.body.event),
        ['transaction.refunded.v1'],
      );
      assert.deepEqual(
        rx
          .at(b.path)
          .map((h) => h.body.event)
          .sort(),
        ['transaction.refunded.v1', 'transaction.voided.v1'],
      );
      const ids = new Set([...rx.at(a.path), ...rx.at(b.path)].map((h) => h.headers['x-delivery-id']));
      assert.equal(ids.size, 3, 'one delivery id per (event, webhook)');
    });

    test('end to end through the API: MOTO approved → success, capture → captured, MOTO declined → failed', async () => {
      const { path, secret } = await register(m, rx, ['transaction.success.v1', 'transaction.failed.v1', 'transaction.captured.v1']);
      const moto = (number: string, amount: number) =>
        m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount, currency: 'DKK' },
          card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' },
        });
      const approved = await moto('4111111111111111', 2500);
      assert.equal(approved.status, 200, approved.text);
      const txId = approved.body.transaction.id;
      const capture = await m.api.post(`${API}/transactions/${txId}/capture`, { amount: 2500 });
      assert.equal(capture.body.success, true, capture.text);
      const declined = await moto('4000000000000002', 700);
      assert.equal(declined.body.transaction.state, 'FAILED', declined.text);

      const hits = await waitFor(() => (rx.at(path).length >= 3 ? rx.at(path) : null), 'three events');
      await sleep(300);
      assert.equal(rx.at(path).length, 3, 'exactly one event per outcome');
      const byEvent = new Map(hits.map((h) => [h.body.event, h]));
      assert.equal(byEvent.get('transaction.success.v1')!.body.data.transaction.id, txId);
      assert.equal(byEvent.get('transaction.captured.v1')!.body.data.transaction.id, txId);
      assert.equal(byEvent.get('transaction.failed.v1')!.body.data.transaction.id, declined.body.transaction.id);
      assert.equal(byEvent.get('transaction.failed.v1')!.body.data.transaction.state, 'FAILED');
      for (const h of hits) {
        assert.equal(h.headers.authorization, secret);
        assert.ok(!JSON.stringify(h.body).includes('4111111111111111'), 'no card number in an event');
      }
    });

    test('failed attempts are retried on the schedule with the same delivery id: 1 and 2 at once, 3 after 8 s', async () => {
      const { webhook, path } = await register(m, rx, ['transaction.renewed.v1']);
      rx.answerTimes(path, 503, 2);
      await emit(t, m, 'transaction.renewed.v1');
      await waitFor(() => rx.at(path).length >= 2, 'attempts 1 and 2');
      await sleep(400);
      assert.equal(rx.at(path).length, 2, 'attempt 3 waits for 2^3 s of service time');
      const pending = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries`)).body.items[0].delivery;
      assert.equal(pending.state, 'PENDING');
      assert.equal(pending.attempts, 2);
      assert.ok(pending.nextAttemptAt);
      await advance(t, 8);
      await waitFor(() => rx.at(path).length === 3, 'attempt 3');
      const hits = rx.at(path);
      assert.deepEqual(
        hits.map((h) => h.status),
        [503, 503, 200],
      );
      assert.equal(new Set(hits.map((h) => h.headers['x-delivery-id'])).size, 1, 'stable delivery id');
      const done = await waitFor(async () => {
        const d = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries`)).body.items[0].delivery;
        return d.state === 'DELIVERED' ? d : null;
      }, 'DELIVERED');
      assert.deepEqual(
        done.attemptLog.map((a: any) => [a.attempt, a.httpStatus, a.success]),
        [
          [1, 503, false],
          [2, 503, false],
          [3, 200, true],
        ],
      );
      assert.equal(done.nextAttemptAt, null);
    });

    test('POST /webhooks honours Idempotency-Key: the replay returns the same webhook and creates nothing', async () => {
      const body = { url: rx.url(newPath()), events: ['subscription.disabled.v1'], secret: 'idem-secret' };
      const before = (await m.api.get(`${API}/webhooks`)).body.total;
      const first = await m.api.post(`${API}/webhooks`, body, { idempotencyKey: 'wh-idem-1' });
      const second = await m.api.post(`${API}/webhooks`, body, { idempotencyKey: 'wh-idem-1' });
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body.webhook.id, first.body.webhook.id);
      assert.equal((await m.api.get(`${API}/webhooks`)).body.total, before + 1);
    });

    test('pause by the merchant stops deliveries; resume brings them back', async () => {
      const { webhook, path } = await register(m, rx, ['subscription-billing.charge-created.v1']);
      const paused = await m.api.post(`${API}/webhooks/${webhook.id}/pause`);
      assert.equal(paused.status, 200);
      assert.equal(paused.body.webhook.pauseReason, 'PAUSED_BY_MERCHANT');
      assert.ok(paused.body.webhook.pausedAt);
      await emit(t, m, 'subscription-billing.charge-created.v1');
      await advance(t, 2);
      await sleep(500);
      assert.equal(rx.at(path).length, 0, 'nothing while paused');
      const listed = (await m.api.get(`${API}/webhooks?perPage=500`)).body.items.map((i: any) => i.id);
      assert.ok(listed.includes(webhook.id), 'a paused webhook stays listed');

      const resumed = await m.api.post(`${API}/webhooks/${webhook.id}/resume`);
      assert.equal(resumed.status, 200);
      assert.equal(resumed.body.webhook.pausedAt, null);
      assert.equal(resumed.body.webhook.pauseReason, null);
      await emit(t, m, 'subscription-billing.charge-created.v1', { n: 2 });
      const [hit] = await waitFor(() => (rx.at(path).length ? rx.at(path) : null), 'delivery after resume');
      assert.deepEqual(hit!.body.data, { n: 2 });
    });

    test('DELETE → 200; not listed, GET 404, and nothing more is delivered', async () => {
      const { webhook, path } = await register(m, rx, ['subscription-billing.agreement-active.v1']);
      const res = await m.api.delete(`${API}/webhooks/${webhook.id}`);
      assert.equal(res.status, 200);
      assert.equal((await m.api.get(`${API}/webhooks/${webhook.id}`)).status, 404);
      const listed = (await m.api.get(`${API}/webhooks?perPage=500`)).body.items.map((i: any) => i.id);
      assert.ok(!listed.includes(webhook.id));
      await emit(t, m, 'subscription-billing.agreement-active.v1');
      await advance(t, 2);
      await sleep(500);
      assert.equal(rx.at(path).length, 0);
    });
  });
}
