import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { citBody, complete } from '../online/cit-flows.js';
import { card } from '../online/helpers.js';
import {
  CARDS,
  chargesOf,
  createAgreement,
  createPlan,
  DAILY,
  DAY_MS,
  eventsOf,
  getAgreement,
  LATER_MIT_DECLINED,
  startBillingSuite,
  moveClockTo,
  now,
  ok,
  startOfDay,
  subscribe,
  utcDate,
  waitFor,
  waitForCharge,
} from './support.js';

for (const kind of await availableStores()) {
  describe(`billing happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => ({ t, m } = await startBillingSuite(kind)));
    after(() => t.close());

    test('a plan is created, read and listed as {billingPlan} with null optional fields and instantCapture OFF', async () => {
      const plan = await createPlan(m.api, { name: 'Gold', amount: 12_900, maxAttempts: 5, interval: { period: 'MONTH', frequency: 3 } });
      assert.deepEqual(
        { ...plan, id: undefined, createdAt: undefined },
        {
          id: undefined,
          createdAt: undefined,
          name: 'Gold',
          amount: 12_900,
          currency: 'DKK',
          maxAttempts: 5,
          interval: { period: 'MONTH', frequency: 3 },
          instantCapture: 'OFF',
          color: null,
          emoji: null,
        },
      );
      const styled = await createPlan(m.api, { color: '#00FF7f', emoji: '⭐', instantCapture: 'VOID' });
      assert.equal(styled.color, '#00FF7f');
      assert.equal(styled.emoji, '⭐');
      assert.equal(styled.instantCapture, 'VOID');
      assert.deepEqual(ok(await m.api.get(`${API}/subscriptions/billing/plans/${plan.id}`), 'get').billingPlan, plan);
      const list = ok(await m.api.get(`${API}/subscriptions/billing/plans?perPage=1`), 'list');
      assert.equal(list.total, 2);
      assert.equal(list.lastPage, 2);
      assert.equal(list.items.length, 1);
      assert.equal(list.items[0].billingPlan.id, styled.id, 'newest first');
    });

    test('an agreement is ACTIVE with nextChargeAt today + one interval; it charges once due and moves one interval', async () => {
      const plan = await createPlan(m.api);
      const sub = await subscribe(t, m);
      const today = startOfDay(await now(t));
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { reference: 'agr-1' });
      assert.equal(agreement.state, 'ACTIVE');
      assert.equal(agreement.nextChargeAt, new Date(today + DAY_MS).toISOString());
      assert.equal(agreement.desiredDate, null, 'desiredDate is for monthly plans only (INTERFACE §11.7)');
      assert.equal(agreement.lastChargeAt, null);
      assert.equal(agreement.sessionId, null);
      assert.equal(agreement.reference, 'agr-1');

      await moveClockTo(t, today + DAY_MS - 60_000);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(await chargesOf(m.api, agreement.id), [], 'nothing before nextChargeAt');

      await moveClockTo(t, today + DAY_MS + 1000);
      const [charge] = await waitForCharge(m.api, agreement.id, (c) => c.length === 1 && c[0].state !== 'PROCESSING', 'charge done');
      assert.equal(charge.state, 'SUCCESS');
      assert.equal(charge.attempts, 1);
      assert.equal(charge.amount, plan.amount);
      assert.equal(charge.periodStart, agreement.nextChargeAt);
      assert.equal(charge.deadlineAt, new Date(today + 2 * DAY_MS).toISOString());
      assert.equal(charge.nextAttemptAt, null);
      assert.deepEqual(charge.transactionIds, [charge.transactionId]);

      const detail = ok(await m.api.get(`${API}/subscriptions/billing/charges/${charge.id}`), 'get charge');
      assert.equal(detail.billingAgreementCharge.id, charge.id);
      assert.equal(detail.transactions.length, 1);
      const tx = detail.transactions[0].transaction;
      assert.equal(tx.id, charge.transactionId);
      assert.equal(tx.billingAgreementChargeId, charge.id);
      assert.equal(tx.subscriptionId, sub.subscriptionId);
      assert.equal(tx.state, 'SUCCESS');
      assert.equal(tx.amount, 4900);
      assert.equal(tx.reference, 'agr-1');

      const moved = await getAgreement(m.api, agreement.id);
      assert.equal(moved.nextChargeAt, new Date(today + 2 * DAY_MS).toISOString());
      assert.equal(moved.lastChargeAt, charge.finalizedAt);

      const events = (await eventsOf(t, m.accountId)).filter(
        (e) =>
          e.event.startsWith('subscription-billing.') &&
          (e.data.billingAgreement?.id === agreement.id || e.data.billingAgreementCharge?.billingAgreementId === agreement.id),
      );
      assert.deepEqual(
        events.map((e) => e.event),
        ['subscription-billing.agreement-active.v1', 'subscription-billing.charge-created.v1', 'subscription-billing.charge-success.v1'],
      );
      assert.equal(events[2]!.data.billingAgreementCharge.state, 'SUCCESS');
    });

    test('a declined charge is retried up to maxAttempts, each retry in the future and before the deadline, then FAILED', async () => {
      const plan = await createPlan(m.api, { maxAttempts: 3 });
      const sub = await subscribe(t, m, LATER_MIT_DECLINED);
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id);
      const due = Date.parse(agreement.nextChargeAt);
      await moveClockTo(t, due + 1000);
      const seenRetries: string[] = [];
      for (let attempt = 1; attempt < 3; attempt++) {
        const [charge] = await waitForCharge(
          m.api,
          agreement.id,
          (c) => c[0]?.attempts === attempt && c[0].nextAttemptAt !== null,
          `retry after attempt ${attempt}`,
        );
        const clock = await now(t);
        assert.equal(charge.state, 'PROCESSING');
        assert.ok(Date.parse(charge.nextAttemptAt) > clock, 'the retry is in the future');
        assert.ok(Date.parse(charge.nextAttemptAt) < Date.parse(charge.deadlineAt), 'the retry is before the deadline');
        seenRetries.push(charge.nextAttemptAt);
        await moveClockTo(t, Date.parse(charge.nextAttemptAt) + 1000);
      }
      const [failed] = await waitForCharge(m.api, agreement.id, (c) => c[0]?.state === 'FAILED', 'charge FAILED');
      assert.equal(failed.attempts, 3);
      assert.equal(failed.transactionIds.length, 3);
      assert.ok(Date.parse(failed.finalizedAt) < Date.parse(failed.deadlineAt), 'all attempts made before the deadline');
      // Spread over the period: slots at +8 h and +16 h of a daily period.
      assert.deepEqual(seenRetries, [new Date(due + DAY_MS / 3).toISOString(), new Date(due + (2 * DAY_MS) / 3).toISOString()]);
      const detail = ok(await m.api.get(`${API}/subscriptions/billing/charges/${failed.id}`), 'get charge');
      for (const { transaction } of detail.transactions) {
        assert.equal(transaction.state, 'FAILED');
        assert.equal(transaction.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      }
      const again = await getAgreement(m.api, agreement.id);
      assert.equal(again.state, 'ACTIVE', 'a failed charge does not stop the agreement');
      assert.equal(again.nextChargeAt, new Date(due + DAY_MS).toISOString());
      assert.equal(again.lastChargeAt, null);
      const names = (await eventsOf(t, m.accountId)).filter((e) => e.data.billingAgreementCharge?.id === failed.id).map((e) => e.event);
      assert.deepEqual(names, ['subscription-billing.charge-created.v1', 'subscription-billing.charge-failed.v1']);
    });

    test('stop → STOPPED with nextChargeAt null and no charges; resume {nextChargeAt} → ACTIVE, charged on that date', async () => {
      const plan = await createPlan(m.api);
      const sub = await subscribe(t, m);
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id);
      const stopped = ok(await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/stop`), 'stop').billingAgreement;
      assert.equal(stopped.state, 'STOPPED');
      assert.equal(stopped.nextChargeAt, null);
      const twice = ok(await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/stop`), 'stop again').billingAgreement;
      assert.deepEqual(twice, stopped, 'stopping a stopped agreement changes nothing');
      await moveClockTo(t, Date.parse(agreement.nextChargeAt) + 3 * DAY_MS);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(await chargesOf(m.api, agreement.id), []);

      const date = utcDate((await now(t)) + 2 * DAY_MS);
      const resumed = ok(await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/resume`, { nextChargeAt: date }), 'resume').billingAgreement;
      assert.equal(resumed.state, 'ACTIVE');
      assert.equal(resumed.nextChargeAt, `${date}T00:00:00.000Z`);
      assert.equal(resumed.desiredDate, null, 'a daily plan has no desiredDate, resumed or not');
      await moveClockTo(t, Date.parse(`${date}T00:00:00.000Z`) - 1000);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(await chargesOf(m.api, agreement.id), [], 'not before the resume date');
      await moveClockTo(t, Date.parse(`${date}T00:00:00.000Z`) + 1000);
      const [charge] = await waitForCharge(m.api, agreement.id, (c) => c.length === 1, 'charge after resume');
      assert.equal(charge.periodStart, `${date}T00:00:00.000Z`);
      const names = (await eventsOf(t, m.accountId)).filter((e) => e.data.billingAgreement?.id === agreement.id).map((e) => e.event);
      assert.deepEqual(names, [
        'subscription-billing.agreement-active.v1',
        'subscription-billing.agreement-stopped.v1',
        'subscription-billing.agreement-active.v1',
      ]);
    });

    test('a CIT session with subscription.billingAgreement makes a PENDING agreement that becomes ACTIVE when the customer pays', async () => {
      const plan = await createPlan(m.api);
      const init = ok(
        await m.api.post(
          `${API}/cit`,
          citBody(m, {
            amount: 100,
            customerId: 'cust-cit-billing',
            subscription: { type: 'SCHEDULED', interval: DAILY, billingAgreement: { billingPlanId: plan.id, reference: 'from-cit' } },
          }),
        ),
        'POST /cit',
      );
      const pending = (await listAgreements()).find((a) => a.sessionId === init.session.id);
      assert.ok(pending, 'the agreement exists while the session is open');
      assert.equal(pending.state, 'PENDING');
      assert.equal(pending.subscriptionId, null);
      ok(await complete(t, init.session.id, { card: card(CARDS.VISA) }), 'complete');
      const active = await waitFor(async () => {
        const a = await getAgreement(m.api, pending.id);
        return a.state === 'ACTIVE' ? a : null;
      }, 'agreement ACTIVE');
      const session = ok(await m.api.get(`${API}/sessions/${init.session.id}`), 'session').session;
      assert.equal(active.subscriptionId, session.subscriptionId);
      assert.equal(active.customerId, 'cust-cit-billing');
      assert.equal(active.reference, 'from-cit');
      assert.equal(active.nextChargeAt, new Date(startOfDay(await now(t)) + DAY_MS).toISOString());
    });

    async function listAgreements(): Promise<any[]> {
      return ok(await m.api.get(`${API}/subscriptions/billing/agreements?perPage=500`), 'list agreements').items.map((i: any) => i.billingAgreement);
    }
  });
}
