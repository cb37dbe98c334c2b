import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, ok, storedCard } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`MIT: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let aSub: string;
    const cb = 'http://localhost:9/cb';
    before(async () => {
      t = await startTestRuntime(kind, { rateLimits: 'default' });
      a = await t.createMerchant();
      b = await t.createMerchant();
      aSub = (await storedCard(t, a, 'cust-a')).subscriptionId;
    });
    after(() => t.close());

    test('no credential → 401 before the body is validated; operator key → 403', async () => {
      assert.equal((await a.api.post(`${API}/mit`, { amount: 'nope' }, { token: null })).status, 401);
      assert.equal((await t.operator.post(`${API}/mit`, mitBody(aSub, cb))).status, 403);
      assert.equal((await t.operator.post(`${API}/mit/batch`, { transactions: [mitBody(aSub, cb)] })).status, 403);
    });

    test("another merchant's subscription reads as unknown (422), single or in a batch; nothing is charged", async () => {
      const res = await b.api.post(`${API}/mit`, mitBody(aSub, cb));
      assert.equal(res.status, 422);
      assert.match(res.body.errors.subscriptionId[0], /no ACTIVE subscription/);
      const batch = ok(await b.api.post(`${API}/mit/batch`, { transactions: [mitBody(aSub, cb, { reference: 'x' })] }), 'batch');
      assert.equal(batch.transactions[0].transaction, null);
      assert.equal(ok(await b.api.get(`${API}/transactions`), 'B list').items.length, 0);
      assert.equal(ok(await a.api.get(`${API}/transactions?subscriptionId=${aSub}`), 'A list').items.length, 1, 'only the CIT payment');
    });

    test('rate limits: /mit sends X-RateLimit headers; /mit/batch allows a burst of 10 requests, then 429', async () => {
      const one = await a.api.post(`${API}/mit`, mitBody(aSub, cb));
      assert.equal(one.status, 200);
      assert.equal(one.headers['x-ratelimit-limit'], '300');
      const c = await t.createMerchant({ physical: false }); // a fresh bucket
      const statuses: number[] = [];
      let limited = null;
      // The bucket refills at 1/s: a slow machine may need a few extra requests to empty it.
      for (let i = 0; i < 20 && !limited; i++) {
        const res = await c.api.post(`${API}/mit/batch`, { transactions: [{}] });
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      assert.deepEqual(statuses.slice(0, 10), Array(10).fill(200));
      assert.ok(limited, `a 429 after the burst: ${statuses.join(',')}`);
      assert.equal(limited.body.errorCode, 'RATE_LIMIT_REACHED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
    });
  });
}
