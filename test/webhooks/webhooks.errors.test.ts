import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exceedsErrorRate } from '../../src/modules/webhooks/webhook.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advance, emit, newPath, type Receiver, register, sleep, startReceiver, waitFor } from './support.js';

const ok = { events: ['transaction.success.v1'], secret: 's3cret' };

describe('auto-pause rule (INTERFACE §8)', () => {
  test('more than 50 % of deliveries failed with at least 20 deliveries; not at exactly 50 % or below 20', () => {
    assert.equal(exceedsErrorRate({ total: 20, failed: 11 }), true);
    assert.equal(exceedsErrorRate({ total: 20, failed: 10 }), false);
    assert.equal(exceedsErrorRate({ total: 19, failed: 19 }), false);
    assert.equal(exceedsErrorRate({ total: 0, failed: 0 }), false);
  });
});

for (const kind of await availableStores()) {
  describe(`webhooks errors (${kind})`, () => {
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

    test('a url off every approved domain, or not http(s), → 422 on url', async () => {
      for (const url of ['http://example.com/hook', 'http://evillocalhost/hook', 'https://localhost.evil.com/x', 'ftp://localhost/x', 'not a url']) {
        const res = await m.api.post(`${API}/webhooks`, { ...ok, url });
        assert.equal(res.status, 422, url);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
        assert.match(res.body.errors.url[0], /^\[url\]: /, url);
      }
    });

    test('a sub-domain of the approved domain is accepted', async () => {
      const res = await m.api.post(`${API}/webhooks`, { ...ok, url: 'https://hooks.localhost/x' });
      assert.equal(res.status, 200, res.text);
      assert.equal((await m.api.delete(`${API}/webhooks/${res.body.webhook.id}`)).status, 200);
    });

    test('an unknown event → 422 [in:...] on events.N; an empty list → [min:1]', async () => {
      const res = await m.api.post(`${API}/webhooks`, { ...ok, url: rx.url('/x'), events: ['transaction.success.v1', 'payment.teleported.v9'] });
      assert.equal(res.status, 422);
      assert.deepEqual(Object.keys(res.body.errors), ['events.1']);
      assert.match(res.body.errors['events.1'][0], /^\[in:transaction\.success\.v1,.*settlement\.transfer-ready\.v1\]: /);
      const empty = await m.api.post(`${API}/webhooks`, { ...ok, url: rx.url('/x'), events: [] });
      assert.equal(empty.status, 422);
      assert.match(empty.body.errors.events[0], /^\[min:1\]/);
    });

    test('missing fields → 422 [required]; a secret that could split a header → 422 [regex]', async () => {
      const res = await m.api.post(`${API}/webhooks`, {});
      assert.equal(res.status, 422);
      for (const field of ['url', 'events', 'secret']) assert.deepEqual(res.body.errors[field], ['[required]: the field is required'], field);
      const injected = await m.api.post(`${API}/webhooks`, { ...ok, url: rx.url('/x'), secret: 'abc\r\nX-Evil: 1' });
      assert.equal(injected.status, 422);
      assert.match(injected.body.errors.secret[0], /^\[regex\]/);
      assert.equal((await m.api.get(`${API}/webhooks`)).body.total, 0, 'nothing was created');
    });

    test('at most 10 active webhooks: the 11th → 422; a paused one does not count, and cannot be resumed past the limit', async () => {
      const c = await t.createMerchant({ physical: false });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await register(c, rx, ['transaction.success.v1'])).webhook.id);
      const eleventh = await c.api.post(`${API}/webhooks`, { ...ok, url: rx.url(newPath()) });
      assert.equal(eleventh.status, 422);
      assert.equal(eleventh.body.errorCode, 'VALIDATION_ERROR');
      assert.match(eleventh.body.errors.webhooks[0], /^\[max:10\]/);
      assert.equal((await c.api.post(`${API}/webhooks/${ids[0]}/pause`)).status, 200);
      assert.equal((await c.api.post(`${API}/webhooks`, { ...ok, url: rx.url(newPath()) })).status, 200, 'room again: 9 active');
      assert.equal((await c.api.get(`${API}/webhooks`)).body.total, 11, 'the paused one stays listed');
      const resumed = await c.api.post(`${API}/webhooks/${ids[0]}/resume`);
      assert.equal(resumed.status, 422, 'resuming would make 11 active');
      assert.match(resumed.body.errors.webhooks[0], /^\[max:10\]/);
      assert.equal((await c.api.delete(`${API}/webhooks/${ids[1]}`)).status, 200);
      assert.equal((await c.api.post(`${API}/webhooks/${ids[0]}/resume`)).body.webhook.pausedAt, null);
    });

    test('unknown ids → 404 NOT_FOUND on every webhook route; a malformed id → 422 [uuid]; deleting twice → 404', async () => {
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await m.api.get(`${API}/webhooks/${unknown}`),
        await m.api.delete(`${API}/webhooks/${unknown}`),
        await m.api.post(`${API}/webhooks/${unknown}/resume`),
        await m.api.post(`${API}/webhooks/${unknown}/pause`),
        await m.api.get(`${API}/webhooks/${unknown}/deliveries`),
      ]) {
        assert.equal(res.status, 404);
        assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
      }
      const bad = await m.api.get(`${API}/webhooks/not-a-uuid`);
      assert.equal(bad.status, 422);
      assert.match(bad.body.errors.webhookId[0], /^\[uuid\]/);
      const { webhook } = await register(m, rx, ['transaction.success.v1']);
      assert.equal((await m.api.delete(`${API}/webhooks/${webhook.id}`)).status, 200);
      assert.equal((await m.api.delete(`${API}/webhooks/${webhook.id}`)).status, 404);
    });

    test('perPage out of range → 422 on perPage', async () => {
      assert.match((await m.api.get(`${API}/webhooks?perPage=0`)).body.errors.perPage[0], /^\[min:1\]/);
      assert.match((await m.api.get(`${API}/webhooks?perPage=501`)).body.errors.perPage[0], /^\[max:500\]/);
    });

    test('DELETE stops queued retries at once: no attempt after it', async () => {
      const { webhook, path } = await register(m, rx, ['transaction.voided.v1']);
      rx.answer(path, 500);
      await emit(t, m, 'transaction.voided.v1');
      await waitFor(() => rx.at(path).length === 2, 'attempts 1 and 2');
      const [delivery] = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries`)).body.items;
      assert.equal(delivery.delivery.state, 'PENDING');
      assert.equal((await m.api.delete(`${API}/webhooks/${webhook.id}`)).status, 200);
      for (const seconds of [8, 16, 32, 3600]) await advance(t, seconds);
      await sleep(800);
      assert.equal(rx.at(path).length, 2, 'no attempt after the delete');
    });

    test('a webhook failing 100 % is paused with ERROR_RATE_TOO_HIGH once ≥ 20 deliveries failed; then nothing is sent', async () => {
      const { webhook, path } = await register(m, rx, ['transaction.captured.v1']);
      rx.answer(path, 500);
      await Promise.all(Array.from({ length: 22 }, (_, i) => emit(t, m, 'transaction.captured.v1', { i })));
      const paused = await waitFor(async () => {
        const w = (await m.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook;
        return w.pausedAt ? w : null;
      }, 'the auto-pause');
      assert.equal(paused.pauseReason, 'ERROR_RATE_TOO_HIGH');
      const failedDeliveries = new Set(rx.at(path).map((h) => JSON.stringify(h.body.data)));
      assert.ok(failedDeliveries.size >= 20, `≥ 20 failed deliveries before the pause (got ${failedDeliveries.size})`);
      await sleep(500); // attempts in flight at the pause may still land
      const count = rx.at(path).length;
      const before = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries?perPage=500`)).body.items.length;
      const after = await emit(t, m, 'transaction.captured.v1', { after: true });
      for (const seconds of [8, 16, 3600]) await advance(t, seconds);
      await sleep(800);
      assert.equal(rx.at(path).length, count, 'no delivery while paused');
      const items = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries?perPage=500`)).body.items;
      const states = items.map((i: any) => i.delivery.state);
      // An event of the 22 that the relay reached only after the pause made none either (a slow host).
      assert.ok(before >= 20 && before <= 22, `the events before the pause made their deliveries (${before})`);
      assert.equal(states.length, before, 'the event after the pause made no delivery');
      assert.ok(!items.some((i: any) => i.delivery.eventId === after), 'no delivery of the event emitted while paused');
      // Concurrent attempts pausing at once must not lose their records (e.g. to a deadlock rollback).
      assert.equal(
        items.reduce((n: number, i: any) => n + i.delivery.attemptLog.length, 0),
        count,
        'every request received is in the attempt log',
      );
      assert.ok(
        states.every((s: string) => s === 'CANCELLED' || s === 'FAILED'),
        JSON.stringify(states),
      );

      // Resume: the window restarts, so one more failure does not pause it again.
      rx.answerTimes(path, 500, 1);
      rx.answer(path, 200);
      rx.answerTimes(path, 500, 1);
      assert.equal((await m.api.post(`${API}/webhooks/${webhook.id}/resume`)).body.webhook.pausedAt, null);
      await emit(t, m, 'transaction.captured.v1', { resumed: true });
      await waitFor(() => rx.at(path).some((h) => h.status === 200 && h.body.data.resumed), 'delivery after resume');
      assert.equal((await m.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook.pausedAt, null);
    });

    /** Plants `n` failed deliveries of `webhookId`, attempted `ageMs` before the service clock's now (what an outage then left). */
    async function plantFailedDeliveries(webhookId: string, n: number, ageMs: number): Promise<void> {
      const at = new Date(t.runtime.clock.now() - ageMs).toISOString();
      const deliveries = Array.from({ length: n }, () => ({
        id: randomUUID(),
        webhookId,
        accountId: m.accountId,
        eventId: randomUUID(),
        event: 'transaction.refunded.v1',
        body: '{}',
        state: 'FAILED',
        attempts: 1,
        nextAttemptAt: null,
        lastAttemptAt: at,
        createdAt: at,
        finishedAt: at,
      }));
      await t.runtime.store.db.insertInto('webhookDeliveries').values(deliveries).execute();
      await t.runtime.store.db
        .insertInto('webhookDeliveryAttempts')
        .values(
          deliveries.map((d) => ({
            id: randomUUID(),
            deliveryId: d.id,
            webhookId,
            attempt: 1,
            success: 0,
            httpStatus: 500,
            error: 'HTTP 500',
            durationMs: 3,
            attemptedAt: at,
          })),
        )
        .execute();
    }

    test('the error rate counts deliveries of the previous 7 days of service time: 20 old failures do not pause, 20 recent ones do', async () => {
      const old = await register(m, rx, ['transaction.refunded.v1']);
      const recent = await register(m, rx, ['transaction.refunded.v1']);
      await plantFailedDeliveries(old.webhook.id, 20, 8 * 24 * 3600_000);
      await plantFailedDeliveries(recent.webhook.id, 20, 6 * 24 * 3600_000);
      rx.answer(old.path, 500);
      rx.answer(recent.path, 500);
      await emit(t, m, 'transaction.refunded.v1', { n: 1 });
      const paused = await waitFor(async () => {
        const w = (await m.api.get(`${API}/webhooks/${recent.webhook.id}`)).body.webhook;
        return w.pausedAt ? w : null;
      }, 'the webhook with recent failures paused');
      assert.equal(paused.pauseReason, 'ERROR_RATE_TOO_HIGH');
      await waitFor(() => rx.at(old.path).length >= 2, 'the other webhook tried twice');
      await sleep(300);
      assert.equal((await m.api.get(`${API}/webhooks/${old.webhook.id}`)).body.webhook.pausedAt, null, 'in its window: 1 delivery, too few');
    });

    test('a delivery that fails many times counts once: one event retried 25 times does not pause', async () => {
      // An API key: the harness's access token expires after 8 h of service time.
      const api = t.client((await m.api.post(`${API}/management/api-keys`, { name: 'long-lived' })).body.key);
      const { webhook, path } = await register(m, rx, ['transaction.renewed.v1']);
      rx.answer(path, 500);
      await emit(t, m, 'transaction.renewed.v1', { once: true });
      await waitFor(
        async () => {
          await advance(t, 3 * 3600);
          return rx.at(path).length >= 25;
        },
        '25 attempts of one delivery',
        20_000,
      );
      const after = await api.get(`${API}/webhooks/${webhook.id}`);
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.webhook.pausedAt, null);
    });
  });
}
