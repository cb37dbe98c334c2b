/**
 * What one billing charge costs, counted on both stores: the charge's attempt reads its
 * subscription, payment method and point of sale once (as a MIT does) and its drive reads
 * nothing; the charge-due job reads the agreement with its plan in one statement and ends in the
 * charge's own commit; a first attempt's success reads neither the agreement, the charge nor the
 * charge's transactions again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { describeLog, statementsTouching, type Touching } from '../support/statements.js';
import { billingMerchant, chargesOf, createAgreement, createPlan, DAY_MS, getAgreement, subscribe } from './support.js';

for (const kind of await availableStores()) {
  describe(`cost of one billing charge (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await billingMerchant(t);
    });
    after(() => t.close());

    test('one subscription read, the agreement with its plan in one read, no point-of-sale, drive, charge or charge-transactions read; the charge-due job done in the charge’s commit', async () => {
      const plan = await createPlan(m.api);
      const { subscriptionId } = await subscribe(t, m);
      const dueAt = t.runtime.clock.now() + DAY_MS;
      const agreement = await createAgreement(m.api, subscriptionId, plan.id, { nextChargeAt: new Date(dueAt).toISOString() });
      await t.runtime.runner.drain();
      await t.runtime.clock.moveTo(dueAt + 60_000);

      const jobs = t.runtime.store.jobs;
      const completedApart: string[] = [];
      const complete = jobs.complete.bind(jobs);
      jobs.complete = async (id, workerId, nowMs) => {
        completedApart.push(id);
        return complete(id, workerId, nowMs);
      };
      const counters = t.runtime.store.counters;
      counters.log = [];
      counters.start();
      try {
        await t.runtime.runner.drain();
      } finally {
        counters.stop();
        jobs.complete = complete;
      }

      const [charge] = await chargesOf(m.api, agreement.id);
      assert.equal(charge?.state, 'SUCCESS', JSON.stringify(charge));
      assert.equal((await getAgreement(m.api, agreement.id)).lastChargeAt, charge.finalizedAt, 'the agreement’s last charge, written without reading it');
      const log = describeLog(counters);
      const count = (touching: Touching) => statementsTouching(counters, touching).length;
      // (The daily card-expiry sweep the clock move set off reads subscriptions with their payment methods too, not their points of sale.)
      assert.equal(count({ reads: ['subscriptions', 'payment_methods', 'points_of_sale'] }), 1, `one subscription read:\n${log}`);
      assert.equal(
        statementsTouching(counters, { reads: ['points_of_sale'] }).filter((s) => !s.tables!.reads.has('subscriptions')).length,
        0,
        `the point of sale comes with the subscription:\n${log}`,
      );
      // The drive's read: an operation with its transaction and payment method. (The daily settlement
      // run the clock move set off reads operations with their transactions too, nothing more.)
      assert.equal(
        count({ kind: 'read', reads: ['operations', 'transactions', 'payment_methods'] }),
        0,
        `the drive starts from what the attempt read:\n${log}`,
      );
      assert.equal(count({ kind: 'read', reads: ['billing_agreements'] }), 1, `the agreement read once, by the charge-due job:\n${log}`);
      assert.equal(count({ kind: 'read', reads: ['billing_agreements', 'billing_plans'] }), 1, `the plan comes with the agreement:\n${log}`);
      assert.equal(count({ kind: 'read', reads: ['billing_plans'] }), 1, `no read of the plan alone:\n${log}`);
      assert.equal(count({ reads: ['billing_agreement_charges'] }), 0, `the attempt’s success moves the charge without reading it:\n${log}`);
      // A charge's transactions would be read from transactions alone (by their charge).
      assert.equal(count({ kind: 'read', readsOnly: ['transactions'] }), 0, `a first attempt’s transaction is known:\n${log}`);
      const dueJob = await t.runtime.store.db
        .selectFrom('jobs')
        .select(['id', 'state'])
        .where('kind', '=', 'billing.charge-due')
        .where('payload', 'like', `%${agreement.id}%`)
        .orderBy('createdAt')
        .executeTakeFirstOrThrow();
      assert.equal(dueJob.state, 'done');
      assert.ok(!completedApart.includes(dueJob.id), 'the charge-due job ended in the charge’s commit, not in a commit of its own');
    });
  });
}
