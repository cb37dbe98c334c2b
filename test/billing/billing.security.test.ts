import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { billingMerchant, chargesOf, createAgreement, createPlan, moveClockTo, ok, subscribe, waitForCharge } from './support.js';

for (const kind of await availableStores()) {
  describe(`billing security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let plan: any;
    let agreement: any;
    let charge: any;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await billingMerchant(t);
      b = await billingMerchant(t);
      plan = await createPlan(a.api);
      agreement = await createAgreement(a.api, (await subscribe(t, a)).subscriptionId, plan.id);
      await moveClockTo(t, Date.parse(agreement.nextChargeAt) + 1000);
      [charge] = await waitForCharge(a.api, agreement.id, (c) => c.length === 1, 'charge');
    });
    after(() => t.close());

    test("another merchant's plan, agreement and charge are 404 and never listed", async () => {
      for (const url of [
        `${API}/subscriptions/billing/plans/${plan.id}`,
        `${API}/subscriptions/billing/agreements/${agreement.id}`,
        `${API}/subscriptions/billing/charges/${charge.id}`,
      ]) {
        const res = await b.api.get(url);
        assert.equal(res.status, 404, url);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.ok(!res.text.includes(a.accountId), 'no data of the owner');
      }
      for (const action of ['stop', 'resume']) {
        assert.equal(
          (await b.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/${action}`, { nextChargeAt: '2099-01-01' })).status,
          404,
          action,
        );
      }
      for (const list of ['plans', 'agreements', 'charges']) {
        assert.equal(ok(await b.api.get(`${API}/subscriptions/billing/${list}`), list).total, 0, list);
      }
      assert.deepEqual(await chargesOf(b.api, agreement.id), [], 'filtering by a foreign agreement shows nothing');
      assert.equal(await getState(), 'ACTIVE', 'the foreign stop changed nothing');
    });

    test("another merchant's plan or subscription cannot be used for an agreement (422, nothing created)", async () => {
      const bSub = (await subscribe(t, b)).subscriptionId;
      const withForeignPlan = await b.api.post(`${API}/subscriptions/billing/agreements`, { billingPlanId: plan.id, subscriptionId: bSub });
      assert.equal(withForeignPlan.status, 422);
      assert.ok(withForeignPlan.body.errors.billingPlanId);
      const bPlan = await createPlan(b.api);
      const aSub = (await subscribe(t, a)).subscriptionId;
      const withForeignSub = await b.api.post(`${API}/subscriptions/billing/agreements`, { billingPlanId: bPlan.id, subscriptionId: aSub });
      assert.equal(withForeignSub.status, 422);
      assert.ok(withForeignSub.body.errors.subscriptionId);
      assert.equal(ok(await b.api.get(`${API}/subscriptions/billing/agreements`), 'list').total, 0);
    });

    test('no credential → 401; the operator key on a merchant route → 403', async () => {
      for (const url of ['plans', 'agreements', 'charges']) {
        assert.equal((await t.client(null).get(`${API}/subscriptions/billing/${url}`)).status, 401, url);
        assert.equal((await t.operator.get(`${API}/subscriptions/billing/${url}`)).status, 403, url);
      }
      assert.equal((await t.client('sk_test_not-a-key').post(`${API}/subscriptions/billing/plans`, { name: 'x' })).status, 401);
    });

    async function getState() {
      return ok(await a.api.get(`${API}/subscriptions/billing/agreements/${agreement.id}`), 'get').billingAgreement.state;
    }
  });
}
