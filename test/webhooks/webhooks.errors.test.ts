import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exceedsErrorRate } from '../../src/modules/webhooks/webhook.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advance, emit, newPath, type Receiver, register, sleep, startReceiver, waitFor } from './support.js';

const ok = { events: ['transaction.success.v1'], secret: 's3cret' };

describe('auto-pause rule (INTERFACE §8)', () => {
  test('more than 50 % failed with at least 20 attempts; not at exactly 50 % or below 20', () => {
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

    test('the 11th webhook → 422 (paused ones count); after a delete there is room again', async () => {
      const c = await t.createMerchant({ physical: false });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await register(c, rx, ['transaction.success.v1'])).webhook.id);
      assert.equal((await c.api.post(`${API}/webhooks/${ids[0]}/pause`)).status, 200);
      const eleventh = await c.api.post(`${API}/webhooks`, { ...ok, url: rx.url(newPath()) });
      assert.equal(eleventh.status, 422);
      assert.equal(eleventh.body.errorCode, 'VALIDATION_ERROR');
      assert.match(eleventh.body.errors.webhooks[0], /^\[max:10\]/);
      assert.equal((await c.api.get(`${API}/webhooks`)).body.total, 10);
      assert.equal((await c.api.delete(`${API}/webhooks/${ids[1]}`)).status, 200);
      assert.equal((await c.api.post(`${API}/webhooks`, { ...ok, url: rx.url(newPath()) })).status, 200);
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

    test('a webhook failing 100 % is paused with ERROR_RATE_TOO_HIGH after ≥ 20 failed attempts; then nothing is sent', async () => {
      const { webhook, path } = await register(m, rx, ['transaction.captured.v1']);
      rx.answer(path, 500);
      await Promise.all(Array.from({ length: 12 }, (_, i) => emit(t, m, 'transaction.captured.v1', { i })));
      const paused = await waitFor(async () => {
        const w = (await m.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook;
        return w.pausedAt ? w : null;
      }, 'the auto-pause');
      assert.equal(paused.pauseReason, 'ERROR_RATE_TOO_HIGH');
      assert.ok(rx.at(path).length >= 20, `≥ 20 attempts before the pause (got ${rx.at(path).length})`);
      await sleep(500); // attempts in flight at the pause may still land
      const count = rx.at(path).length;
      await emit(t, m, 'transaction.captured.v1', { after: true });
      for (const seconds of [8, 16, 3600]) await advance(t, seconds);
      await sleep(800);
      assert.equal(rx.at(path).length, count, 'no delivery while paused');
      const items = (await m.api.get(`${API}/webhooks/${webhook.id}/deliveries?perPage=500`)).body.items;
      const states = items.map((i: any) => i.delivery.state);
      assert.equal(states.length, 12, 'the event after the pause made no delivery');
      // Concurrent attempts pausing at once must not lose their records (e.g. to a deadlock rollback).
      assert.equal(items.reduce((n: number, i: any) => n + i.delivery.attemptLog.length, 0), count, 'every request received is in the attempt log');
      assert.ok(states.every((s: string) => s === 'CANCELLED' || s === 'FAILED'), JSON.stringify(states));

      // Resume: the window restarts, so one more failure does not pause it again.
      rx.answerTimes(path, 500, 1);
      rx.answer(path, 200);
      rx.answerTimes(path, 500, 1);
      assert.equal((await m.api.post(`${API}/webhooks/${webhook.id}/resume`)).body.webhook.pausedAt, null);
      await emit(t, m, 'transaction.captured.v1', { resumed: true });
      await waitFor(() => rx.at(path).some((h) => h.status === 200 && h.body.data.resumed), 'delivery after resume');
      assert.equal((await m.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook.pausedAt, null);
    });

    test('failures older than 7 days of service time do not count toward the error rate', async () => {
      // An API key: the harness's access token expires after 8 h of service time.
      const key = await m.api.post(`${API}/management/api-keys`, { name: 'long-lived' });
      assert.equal(key.status, 200, key.text);
      const api = t.client(key.body.key);
      const { webhook, path } = await register(m, rx, ['transaction.refunded.v1']);
      rx.answerTimes(path, 500, 10);
      for (let i = 0; i < 5; i++) await emit(t, m, 'transaction.refunded.v1', { i });
      await waitFor(() => rx.at(path).length === 10, '10 failed attempts');
      // Advancing again until all 5 retries ran: a retry whose failure was still being recorded
      // at the first move is scheduled from the moved clock.
      await waitFor(async () => {
        await advance(t, 8);
        await sleep(100);
        return rx.at(path).length === 15;
      }, 'the 5 retries that succeed');
      await advance(t, 8 * 24 * 3600);
      rx.answer(path, 500);
      for (let i = 0; i < 6; i++) await emit(t, m, 'transaction.refunded.v1', { late: i });
      await waitFor(() => rx.at(path).length === 27, '12 more failed attempts');
      await sleep(300);
      // All-time: 22 of 27 failed (> 50 %, ≥ 20); in the window: 12 of 12, too few to pause.
      const after = await api.get(`${API}/webhooks/${webhook.id}`);
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.webhook.pausedAt, null);
      const attempts = (await api.get(`${API}/webhooks/${webhook.id}/deliveries?perPage=500`)).body.items.flatMap((i: any) => i.delivery.attemptLog);
      assert.equal(attempts.length, 27);
      assert.equal(attempts.filter((a: any) => !a.success).length, 22);
    });
  });
}
