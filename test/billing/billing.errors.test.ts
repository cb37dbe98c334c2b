import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestResponse, type TestRuntime, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import {
  billingMerchant,
  chargesOf,
  createAgreement,
  createPlan,
  DAY_MS,
  getAgreement,
  moveClockTo,
  now,
  ok,
  startOfDay,
  subscribe,
  utcDate,
  waitFor,
} from './support.js';

function expect422(res: TestResponse, field: string, rule: string) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  const messages: string[] = res.body.errors?.[field] ?? [];
  assert.ok(
    messages.some((msg) => msg.startsWith(`[${rule}`)),
    `expected [${rule}…] on ${field}, got ${JSON.stringify(res.body.errors)}`,
  );
}

for (const kind of await availableStores()) {
  describe(`billing errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let plan: any;
    let subscriptionId: string;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await billingMerchant(t);
      plan = await createPlan(m.api);
      subscriptionId = (await subscribe(t, m)).subscriptionId;
    });
    after(() => t.close());

    const plans = `${API}/subscriptions/billing/plans`;
    const agreements = `${API}/subscriptions/billing/agreements`;
    const valid = { name: 'P', amount: 100, currency: 'DKK', maxAttempts: 3, interval: { period: 'DAY', frequency: 1 } };

    test('plan bodies are validated field by field', async () => {
      const { name: _name, ...noName } = valid;
      expect422(await m.api.post(plans, noName), 'name', 'required');
      expect422(await m.api.post(plans, { ...valid, name: '' }), 'name', 'min:1');
      expect422(await m.api.post(plans, { ...valid, name: 'x'.repeat(257) }), 'name', 'max:256');
      expect422(await m.api.post(plans, { ...valid, amount: 0 }), 'amount', 'min:1');
      expect422(await m.api.post(plans, { ...valid, amount: 12.5 }), 'amount', 'int');
      expect422(await m.api.post(plans, { ...valid, currency: 'dkk' }), 'currency', 'regex');
      expect422(await m.api.post(plans, { ...valid, maxAttempts: 0 }), 'maxAttempts', 'min:1');
      expect422(await m.api.post(plans, { ...valid, maxAttempts: 32 }), 'maxAttempts', 'max:31');
      expect422(await m.api.post(plans, { ...valid, interval: { period: 'FORTNIGHT', frequency: 1 } }), 'interval.period', 'in:');
      expect422(await m.api.post(plans, { ...valid, interval: { period: 'DAY', frequency: 32 } }), 'interval.frequency', 'max:31');
      expect422(await m.api.post(plans, { ...valid, interval: { period: 'DAY' } }), 'interval.frequency', 'required');
      expect422(await m.api.post(plans, { ...valid, instantCapture: 'SOMETIMES' }), 'instantCapture', 'in:');
      expect422(await m.api.post(plans, { ...valid, color: 'red' }), 'color', 'regex');
    });

    test('agreement creation refuses unknown plans and subscriptions, other currencies and past dates (422 on the field)', async () => {
      expect422(await m.api.post(agreements, { subscriptionId }), 'billingPlanId', 'required');
      expect422(await m.api.post(agreements, { billingPlanId: plan.id, subscriptionId: 'nope' }), 'subscriptionId', 'uuid');
      expect422(await m.api.post(agreements, { billingPlanId: '00000000-0000-4000-8000-000000000000', subscriptionId }), 'billingPlanId', 'uuid');
      expect422(
        await m.api.post(agreements, { billingPlanId: plan.id, subscriptionId: '00000000-0000-4000-8000-000000000000' }),
        'subscriptionId',
        'in:ACTIVE',
      );
      const euro = await createPlan(m.api, { currency: 'EUR' });
      expect422(await m.api.post(agreements, { billingPlanId: euro.id, subscriptionId }), 'billingPlanId', 'in:DKK');
      const yesterday = utcDate(startOfDay(await now(t)) - DAY_MS);
      expect422(await m.api.post(agreements, { billingPlanId: plan.id, subscriptionId, nextChargeAt: yesterday }), 'nextChargeAt', 'date');
      expect422(await m.api.post(agreements, { billingPlanId: plan.id, subscriptionId, nextChargeAt: 'soon' }), 'nextChargeAt', 'date');
      const list = ok(await m.api.get(`${agreements}?perPage=500`), 'list');
      assert.equal(list.total, 0, 'nothing was created');
    });

    test('an agreement on a DISABLED subscription → 422 on subscriptionId', async () => {
      const other = await subscribe(t, m);
      ok(await m.api.delete(`${API}/subscriptions/${other.subscriptionId}`), 'disable');
      expect422(await m.api.post(agreements, { billingPlanId: plan.id, subscriptionId: other.subscriptionId }), 'subscriptionId', 'in:ACTIVE');
    });

    test('resume needs nextChargeAt and a STOPPED agreement; unknown ids are 404', async () => {
      const agreement = await createAgreement(m.api, subscriptionId, plan.id);
      const resumeUrl = `${agreements}/${agreement.id}/resume`;
      expect422(await m.api.post(resumeUrl, {}), 'nextChargeAt', 'required');
      const tomorrow = utcDate(startOfDay(await now(t)) + DAY_MS);
      const active = await m.api.post(resumeUrl, { nextChargeAt: tomorrow });
      assert.equal(active.status, 409, active.text);
      assert.match(active.body.message, /ACTIVE/);
      ok(await m.api.post(`${agreements}/${agreement.id}/stop`), 'stop');
      expect422(await m.api.post(resumeUrl, { nextChargeAt: '2001-01-01' }), 'nextChargeAt', 'date');
      assert.equal((await getAgreement(m.api, agreement.id)).state, 'STOPPED', 'a refused resume changes nothing');
      for (const url of [
        `${agreements}/${'0'.repeat(8)}-0000-4000-8000-000000000000`,
        `${plans}/nope`,
        `${API}/subscriptions/billing/charges/00000000-0000-4000-8000-000000000000`,
      ]) {
        const res = await m.api.get(url);
        assert.equal(res.status, 404, `${url}: ${res.text}`);
      }
      assert.equal((await m.api.post(`${agreements}/nope/stop`)).status, 404);
      expect422(await m.api.get(`${API}/subscriptions/billing/charges?billingAgreementId=nope`), 'billingAgreementId', 'uuid');
      expect422(await m.api.get(`${API}/subscriptions/billing/charges?perPage=501`), 'perPage', 'max:500');
    });

    test('when its subscription was disabled, a due agreement makes no charge and stops', async () => {
      const sub = await subscribe(t, m);
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id);
      ok(await m.api.delete(`${API}/subscriptions/${sub.subscriptionId}`), 'disable');
      await moveClockTo(t, Date.parse(agreement.nextChargeAt) + 1000);
      const stopped = await waitFor(async () => {
        const a = await getAgreement(m.api, agreement.id);
        return a.state === 'STOPPED' ? a : null;
      }, 'agreement STOPPED');
      assert.equal(stopped.nextChargeAt, null);
      assert.deepEqual(await chargesOf(m.api, agreement.id), []);
      const resume = await m.api.post(`${agreements}/${agreement.id}/resume`, { nextChargeAt: utcDate(await now(t)) });
      expect422(resume, 'subscriptionId', 'in:ACTIVE');
    });

    test('a CIT session naming an unknown plan is refused before the customer pays', async () => {
      const res = await m.api.post(`${API}/cit`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 100,
        currency: 'DKK',
        subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: '00000000-0000-4000-8000-000000000000' } },
      });
      expect422(res, 'subscription.billingAgreement.billingPlanId', 'uuid');
    });
  });
}
