import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { capture, detail, ok, seedAuthorized } from './fixtures.js';

const ACTIONS: Array<[string, unknown]> = [
  ['capture', { amount: 100 }],
  ['refund', { amount: 100 }],
  ['void', { amount: 100 }],
  ['renew', undefined],
];

for (const kind of await availableStores()) {
  describe(`lifecycle tiers, tenants and idempotency (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      a = await t.createMerchant();
      b = await t.createMerchant();
    });
    after(() => t.close());

    test("another merchant's transaction → 404 NOT_FOUND on every operation, and nothing moves", async () => {
      const tx = await seedAuthorized(t, a, { amount: 1000, paymentMethodType: 'KLARNA' });
      ok(await capture(a, tx.id, 200));
      for (const [action, body] of ACTIONS) {
        const res = await b.api.post(`${API}/transactions/${tx.id}/${action}`, body);
        assert.equal(res.status, 404, `${action}: ${res.text}`);
        assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.doesNotMatch(res.text, new RegExp(tx.id), 'the refusal does not echo the other tenant data');
      }
      const d = await detail(a, tx.id);
      assert.deepEqual(d.aggregates, { authorized: 1000, captured: 200, refunded: 0, voided: 0, remaining: 800, paidOut: 0 });
      assert.equal(d.operations.length, 2);
    });

    test('an unknown transaction → 404 on every operation', async () => {
      for (const [action, body] of ACTIONS) {
        const res = await a.api.post(`${API}/transactions/ZZZZZZZZZZZ/${action}`, body);
        assert.equal(res.status, 404, `${action}: ${res.text}`);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
      }
    });

    test('no credential → 401; the operator key → 403 FORBIDDEN', async () => {
      const tx = await seedAuthorized(t, a, { amount: 1000 });
      for (const [action, body] of ACTIONS) {
        const anonymous = await t.client(null).post(`${API}/transactions/${tx.id}/${action}`, body);
        assert.equal(anonymous.status, 401, `${action}: ${anonymous.text}`);
        const operator = await t.operator.post(`${API}/transactions/${tx.id}/${action}`, body);
        assert.equal(operator.status, 403, `${action}: ${operator.text}`);
        assert.equal(operator.body.errorCode, 'FORBIDDEN');
      }
      assert.equal((await detail(a, tx.id)).operations.length, 1);
    });

    test('a retried capture with the same Idempotency-Key replays the first answer and captures once', async () => {
      const tx = await seedAuthorized(t, a, { amount: 1000 });
      const first = await capture(a, tx.id, 400, {}, 'cap-key-1');
      ok(first);
      const again = await capture(a, tx.id, 400, {}, 'cap-key-1');
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      const reused = await capture(a, tx.id, 500, {}, 'cap-key-1');
      assert.equal(reused.status, 422);
      assert.equal(reused.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
      const d = await detail(a, tx.id);
      assert.equal(d.operations.filter((o) => o.type === 'CAPTURE').length, 1);
      assert.equal(d.aggregates.captured, 400);
    });

    test('20 concurrent captures with one Idempotency-Key create exactly one operation', async () => {
      const tx = await seedAuthorized(t, a, { amount: 1000 });
      acquirer.latencyMs = 20;
      try {
        const responses = await Promise.all(Array.from({ length: 20 }, () => capture(a, tx.id, 100, {}, 'same-key')));
        const ids = new Set(responses.filter((r) => r.status === 200).map((r) => r.body.operationId));
        assert.equal(ids.size, 1, 'every 200 names the same operation');
        for (const r of responses) assert.ok(r.status === 200 || (r.status === 409 && r.body.errorCode === 'IDEMPOTENCY_KEY_IN_USE'), r.text);
      } finally {
        acquirer.latencyMs = 0;
      }
      const d = await detail(a, tx.id);
      assert.equal(d.operations.filter((o) => o.type === 'CAPTURE').length, 1);
      assert.equal(d.aggregates.captured, 100);
    });
  });

  describe(`lifecycle rate limit (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, { rateLimits: 'default' }, { acquirer: new ScriptedAcquirer() });
      a = await t.createMerchant();
    });
    after(() => t.close());

    test('5 operations per transaction in a burst; the 6th → 429 with Retry-After; another transaction has its own bucket', async () => {
      const tx = await seedAuthorized(t, a, { amount: 1000 });
      for (let i = 0; i < 5; i++) {
        const res = await capture(a, tx.id, 10);
        ok(res);
        assert.equal(res.headers['x-ratelimit-limit'], '5');
      }
      const limited = await a.api.post(`${API}/transactions/${tx.id}/refund`, { amount: 10 });
      assert.equal(limited.status, 429, limited.text);
      assert.equal(limited.body.errorCode, 'RATE_LIMIT_REACHED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal((await detail(a, tx.id)).aggregates.refunded, 0);
      const other = await seedAuthorized(t, a, { amount: 1000 });
      ok(await capture(a, other.id, 10));
    });
  });
}
