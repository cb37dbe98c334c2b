import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { ok, storedCard } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`subscriptions: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let aSub: string;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      aSub = (await storedCard(t, a, 'cust-private', undefined, { type: 'UNSCHEDULED', reference: 'private-ref' })).subscriptionId;
    });
    after(() => t.close());

    test('no credential → 401; operator key → 403', async () => {
      assert.equal((await a.api.get(`${API}/subscriptions/${aSub}`, { token: null })).status, 401);
      assert.equal((await t.operator.get(`${API}/subscriptions`)).status, 403);
      assert.equal((await t.operator.delete(`${API}/subscriptions/${aSub}`)).status, 403);
    });

    test("another merchant's subscription → 404 on GET, PATCH and DELETE, without its data; the owner's stays ACTIVE", async () => {
      for (const res of [
        await b.api.get(`${API}/subscriptions/${aSub}`),
        await b.api.patch(`${API}/subscriptions/${aSub}`, { amount: 1, type: 'UNSCHEDULED' }),
        await b.api.delete(`${API}/subscriptions/${aSub}`),
      ]) {
        assert.equal(res.status, 404, res.text);
        assert.ok(!res.text.includes('private-ref') && !res.text.includes('cust-private'));
      }
      assert.equal(ok(await a.api.get(`${API}/subscriptions/${aSub}`), 'owner').subscription.state, 'ACTIVE');
    });

    test("lists never show another merchant's subscriptions, whatever the filter", async () => {
      const theirs = ok(await b.api.get(`${API}/subscriptions?customerId=cust-private`), 'B list');
      assert.equal(theirs.total, 0);
      assert.equal(ok(await b.api.get(`${API}/subscriptions?pointOfSaleId=${a.onlinePointOfSaleId}`), 'B list').total, 0);
      assert.equal(ok(await a.api.get(`${API}/subscriptions?customerId=cust-private`), 'A list').total, 1);
    });
  });
}
