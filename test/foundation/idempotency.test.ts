/**
 * Idempotency-Key (INTERFACE §4) over real HTTP on both stores: one effect under concurrency,
 * replay, key reuse with another body, refusals that are not stored, and the 24 h expiry swept by
 * the maintenance job on the service clock.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { availableStores } from '../support/stores.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';

const posBody = (name: string) => ({ name, domain: 'localhost', webhookAuthentication: 'Bearer cb', type: 'ONLINE' });

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

for (const kind of await availableStores()) {
  describe(`idempotency (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let baseUrl: string;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant({ physical: false });
      baseUrl = await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => t.close());

    const countPos = async (accountId: string, name: string) =>
      Number(
        (
          await t.runtime.store.db
            .selectFrom('pointsOfSale')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('accountId', '=', accountId)
            .where('name', '=', name)
            .executeTakeFirstOrThrow()
        ).n,
      );

    const post = (path: string, body: unknown, key: string, token = m.token) =>
      fetch(`${baseUrl}${API}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });

    test('N concurrent identical requests over HTTP with one key: exactly one effect; the rest 409 or a replay', async () => {
      const key = randomUUID();
      const name = `concurrent-${key}`;
      const responses = await Promise.all(Array.from({ length: 25 }, () => post('/management/point-of-sales', posBody(name), key)));
      const results = await Promise.all(
        responses.map(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as any })),
      );
      assert.equal(await countPos(m.accountId, name), 1, 'one point of sale created');
      const ok = results.filter((r) => r.status === 200);
      const fresh = ok.filter((r) => r.replayed === null);
      assert.equal(fresh.length, 1, 'exactly one request executed');
      assert.ok(ok.every((r) => r.replayed === null || r.replayed === 'true'));
      assert.equal(new Set(ok.map((r) => r.body.pointOfSale.id)).size, 1, 'every 200 names the same point of sale');
      for (const r of results.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 409);
        assert.deepEqual(r.body, { success: false, errorCode: 'IDEMPOTENCY_KEY_IN_USE', message: r.body.message });
      }
      const later = await post('/management/point-of-sales', posBody(name), key);
      assert.equal(later.status, 200);
      assert.equal(later.headers.get('idempotent-replayed'), 'true');
      assert.equal(((await later.json()) as any).pointOfSale.id, ok[0]!.body.pointOfSale.id);
    });

    test('a replay returns the stored status and body byte for byte, and does nothing else', async () => {
      const key = randomUUID();
      const name = `replay-${key}`;
      const first = await m.api.post(`${API}/management/point-of-sales`, posBody(name), { idempotencyKey: key });
      assert.equal(first.status, 200);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // Key order does not change the request hash (canonical JSON).
      const reordered = { type: 'ONLINE', webhookAuthentication: 'Bearer cb', domain: 'localhost', name };
      const second = await m.api.post(`${API}/management/point-of-sales`, reordered, { idempotencyKey: key });
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.text, first.text);
      assert.equal(await countPos(m.accountId, name), 1);
    });

    test('same key, different body → 422 IDEMPOTENCY_KEY_REUSED, nothing executed', async () => {
      const key = randomUUID();
      assert.equal((await m.api.post(`${API}/management/point-of-sales`, posBody(`a-${key}`), { idempotencyKey: key })).status, 200);
      const res = await m.api.post(`${API}/management/point-of-sales`, posBody(`b-${key}`), { idempotencyKey: key });
      assert.equal(res.status, 422);
      assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
      assert.equal(res.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await countPos(m.accountId, `b-${key}`), 0);
    });

    test('refusals before execution are not stored: schema 422, business-rule 422, 401, 403', async () => {
      const key = randomUUID();
      const name = `fixed-${key}`;
      const invalid = await m.api.post(`${API}/management/point-of-sales`, { name }, { idempotencyKey: key });
      assert.equal(invalid.status, 422);
      const offDomain = await m.api.post(
        `${API}/management/point-of-sales`,
        { ...posBody(name), hostedConfiguration: { successUrl: 'https://elsewhere.example/' } },
        { idempotencyKey: key },
      );
      assert.equal(offDomain.status, 422);
      assert.equal(offDomain.body.errorCode, 'VALIDATION_ERROR');
      assert.equal((await m.api.post(`${API}/management/point-of-sales`, posBody(name), { idempotencyKey: key, token: 'wrong' })).status, 401);
      assert.equal((await t.operator.post(`${API}/management/point-of-sales`, posBody(name), { idempotencyKey: key })).status, 403);
      const fixed = await m.api.post(`${API}/management/point-of-sales`, posBody(name), { idempotencyKey: key });
      assert.equal(fixed.status, 200, fixed.text);
      assert.equal(fixed.headers['idempotent-replayed'], undefined);
    });

    test('a business refusal decided after the claim is stored and replayed (404)', async () => {
      const key = randomUUID();
      const missing = `${API}/management/point-of-sales/${randomUUID()}/terminals`;
      const first = await m.api.post(missing, { name: 'x' }, { idempotencyKey: key });
      assert.equal(first.status, 404);
      const again = await m.api.post(missing, { name: 'x' }, { idempotencyKey: key });
      assert.equal(again.status, 404);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text);
    });

    test('keys are scoped per merchant and per path', async () => {
      const other = await t.createMerchant({ physical: false });
      const key = randomUUID();
      const a = await m.api.post(`${API}/management/point-of-sales`, posBody(`scope-${key}`), { idempotencyKey: key });
      const b = await other.api.post(`${API}/management/point-of-sales`, posBody(`scope-${key}`), { idempotencyKey: key });
      assert.equal(b.status, 200);
      assert.equal(b.headers['idempotent-replayed'], undefined, 'another merchant, same key: its own request');
      assert.notEqual(a.body.pointOfSale.id, b.body.pointOfSale.id);
      const keyRes = await m.api.post(`${API}/management/api-keys`, { name: 'k' }, { idempotencyKey: key });
      assert.equal(keyRes.status, 200);
      assert.equal(keyRes.headers['idempotent-replayed'], undefined, 'another path, same key: its own request');
    });

    test('the operator (partner API) gets idempotent account creation too', async () => {
      const key = randomUUID();
      const body = { name: `Partner ${key}`, email: 'p@example.com', currencyCode: 'EUR', timezone: 'UTC', domain: 'example.com' };
      const first = await t.operator.post(`${API}/partner/accounts`, body, { idempotencyKey: key });
      const second = await t.operator.post(`${API}/partner/accounts`, body, { idempotencyKey: key });
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body.account.id, first.body.account.id);
    });

    test('a replayed credential (API key, access token) comes back whole, but is stored encrypted', async () => {
      const key = randomUUID();
      const first = await post('/management/api-keys', { name: `k-${key}` }, key);
      const replay = await post('/management/api-keys', { name: `k-${key}` }, key);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      const created = (await first.json()) as { key: string };
      assert.equal(((await replay.json()) as { key: string }).key, created.key);
      const tokenKey = randomUUID();
      const token = (await (await post(`/partner/accounts/${m.accountId}/access-token`, { environment: 'test' }, tokenKey, t.operatorKey)).json()) as {
        accessToken: string;
      };
      const tokenReplay = await post(`/partner/accounts/${m.accountId}/access-token`, { environment: 'test' }, tokenKey, t.operatorKey);
      assert.equal(((await tokenReplay.json()) as { accessToken: string }).accessToken, token.accessToken);
      const stored = await t.runtime.store.db.selectFrom('idempotencyKeys').select('responseBody').where('key', 'in', [key, tokenKey]).execute();
      assert.equal(stored.length, 2);
      for (const row of stored) {
        assert.ok(row.responseBody && !row.responseBody.includes(created.key) && !row.responseBody.includes(token.accessToken), 'no credential in clear');
      }
    });

    test('an invalid Idempotency-Key → 422 on the header, nothing executed', async () => {
      for (const key of ['x'.repeat(256), 'with space', 'tab\tkey', 'ünïcode']) {
        const res = await m.api
          .request('POST', `${API}/management/point-of-sales`, { body: posBody(`badkey-${key.length}`), headers: { 'idempotency-key': key } })
          .catch(() => null);
        if (res === null) continue; // the HTTP layer refuses some header bytes itself
        assert.equal(res.status, 422, res.text);
        assert.deepEqual(Object.keys(res.body.errors), ['Idempotency-Key']);
      }
      assert.equal(await countPos(m.accountId, 'badkey-256'), 0);
    });

    test('a record lives 24 h on the service clock; the maintenance job sweeps it and the key is new again', async () => {
      // An API key, not the 8 h access token: the clock moves by a day.
      const apiKey = (await m.api.post(`${API}/management/api-keys`, { name: 'long-lived' })).body.key as string;
      const api = t.client(apiKey);
      const key = randomUUID();
      const first = await api.post(`${API}/management/point-of-sales`, posBody(`exp-a-${key}`), { idempotencyKey: key });
      assert.equal(first.status, 200);
      const rows = () => t.runtime.store.db.selectFrom('idempotencyKeys').select('key').where('key', '=', key).execute();
      assert.equal((await rows()).length, 1);
      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 23 * 3600 });
      const stillThere = await api.post(`${API}/management/point-of-sales`, posBody(`exp-a-${key}`), { idempotencyKey: key });
      assert.equal(stillThere.headers['idempotent-replayed'], 'true', 'replayed within 24 h');
      assert.equal((await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 2 * 3600 })).status, 200);
      await waitFor('the maintenance job to sweep the expired record', async () => (await rows()).length === 0);
      const fresh = await api.post(`${API}/management/point-of-sales`, posBody(`exp-b-${key}`), { idempotencyKey: key });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
      assert.equal(await countPos(m.accountId, `exp-b-${key}`), 1);
    });
  });
}
