/**
 * Exactly one charge per agreement period, whatever races for it: two runtimes (two pools, two
 * job runners) on the same PostgreSQL schema calling the scheduler at once, and a restart. The
 * unique key (agreement, period start) decides; the loser's MIT transaction is rolled back with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { newId } from '../../src/shared/ids.js';
import { type TestMerchant, type TestRuntime, startTestRuntime, testConfig } from '../support/harness.js';
import { availableStores, POSTGRES_SKIP_MESSAGE, postgresReachable } from '../support/stores.js';
import { billingMerchant, createAgreement, createPlan, DAY_MS, moveClockTo, subscribe, waitFor } from './support.js';

const AGREEMENTS = 8;

/** A second runtime on the database of `t` (same schema or file, same keys). */
function sibling(t: TestRuntime): Promise<Runtime> {
  const config = testConfig(t.database, { operatorKey: t.operatorKey });
  return createRuntime(config, { logger: createLogger('silent'), connectOptions: t.database.schema ? { schema: t.database.schema } : {}, startWorkers: false });
}

async function chargeRows(t: TestRuntime, agreementIds: string[]) {
  return t.runtime.store.db.selectFrom('billingAgreementCharges').selectAll().where('billingAgreementId', 'in', agreementIds).execute();
}

async function chargeTransactions(t: TestRuntime, accountId: string) {
  return t.runtime.store.db
    .selectFrom('transactions')
    .select(['id', 'billingAgreementChargeId', 'state'])
    .where('accountId', '=', accountId)
    .where('billingAgreementChargeId', 'is not', null)
    .execute();
}

for (const kind of await availableStores()) {
  describe(`billing: the unique period key (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
    });
    after(() => t.close());

    test('a second charge for the same agreement and period start is refused by the store', async () => {
      const m = await billingMerchant(t);
      const plan = await createPlan(m.api);
      const sub = await subscribe(t, m);
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id);
      const charge = (id: string) => ({
        id,
        accountId: m.accountId,
        billingAgreementId: agreement.id,
        billingPlanId: plan.id,
        periodStart: agreement.nextChargeAt,
        state: 'PROCESSING' as const,
        amount: 4900,
        currency: 'DKK',
        maxAttempts: 3,
        attempts: 1,
        transactionId: null,
        deadlineAt: agreement.nextChargeAt,
        nextAttemptAt: null,
        createdAt: agreement.createdAt,
        updatedAt: agreement.createdAt,
        finalizedAt: null,
      });
      const repo = t.runtime.store.billingCharges;
      assert.equal(await repo.insertIfAbsent(charge(newId())), true);
      assert.equal(await repo.insertIfAbsent(charge(newId())), false);
      assert.equal((await chargeRows(t, [agreement.id])).length, 1);
    });
  });
}

const reachable = await postgresReachable();
if (!reachable) console.log(`# ${POSTGRES_SKIP_MESSAGE}`);

describe('billing: two runtimes on one PostgreSQL schema race for the same periods', () => {
  let t: TestRuntime;
  let other: Runtime | null = null;
  let m: TestMerchant;
  const agreements: Array<{ id: string; nextChargeAt: string }> = [];

  before(async () => {
    if (!reachable) return;
    t = await startTestRuntime('postgres', {}, { startWorkers: false });
    other = await sibling(t);
    m = await billingMerchant(t);
    const plan = await createPlan(m.api);
    for (let i = 0; i < AGREEMENTS; i++) {
      const sub = await subscribe(t, m);
      agreements.push(await createAgreement(m.api, sub.subscriptionId, plan.id));
    }
  });
  after(async () => {
    await other?.close();
    if (reachable) await t.close();
  });

  test(
    'concurrent chargeDue calls from both runtimes make exactly one charge and one MIT transaction per agreement',
    { skip: !reachable && POSTGRES_SKIP_MESSAGE },
    async () => {
      const due = Date.parse(agreements[0]!.nextChargeAt);
      await moveClockTo(t, due + 1000);
      await other!.clock.refresh();
      const schedulers = [t.runtime.services.billing.scheduler, other!.services.billing.scheduler];
      const calls = agreements.flatMap((a) =>
        [0, 1, 2].flatMap(() => schedulers.map((s) => s.chargeDue({ accountId: m.accountId, agreementId: a.id, periodStart: a.nextChargeAt }))),
      );
      const results = await Promise.all(calls);
      assert.equal(results.filter((r) => r !== null).length, AGREEMENTS, 'one winner per agreement');

      const ids = agreements.map((a) => a.id);
      const charges = await chargeRows(t, ids);
      assert.equal(charges.length, AGREEMENTS);
      assert.deepEqual(new Set(charges.map((c) => c.billingAgreementId)), new Set(ids));
      const txs = await chargeTransactions(t, m.accountId);
      assert.equal(txs.length, AGREEMENTS, 'the losers left no MIT transaction behind');
      assert.deepEqual(new Set(txs.map((x) => x.billingAgreementChargeId)), new Set(charges.map((c) => c.id)));
      for (const a of agreements) {
        const row = await t.runtime.store.billingAgreements.findById(m.accountId, a.id);
        assert.equal(row!.nextChargeAt, new Date(Date.parse(a.nextChargeAt) + DAY_MS).toISOString(), 'moved exactly one interval');
      }
    },
  );

  test('both job runners draining at once, then a restart, still give one charge per period', { skip: !reachable && POSTGRES_SKIP_MESSAGE }, async () => {
    const ids = agreements.map((a) => a.id);
    // The triggers enqueued at creation are still queued: both runners take them (and the MIT jobs) at once.
    await Promise.all([t.runtime.runner.drain(), other!.runner.drain()]);
    let charges = await chargeRows(t, ids);
    assert.equal(charges.length, AGREEMENTS);
    assert.ok(
      charges.every((c) => c.state === 'SUCCESS'),
      `all charged: ${charges.map((c) => c.state).join(',')}`,
    );

    // Restart: the second runtime goes away, a fresh one takes its place; the next period falls due.
    await other!.close();
    other = await sibling(t);
    await moveClockTo(t, Date.parse(agreements[0]!.nextChargeAt) + DAY_MS + 1000);
    await other.clock.refresh();
    t.runtime.runner.start();
    other.runner.start();
    charges = await waitFor(
      async () => {
        const rows = await chargeRows(t, ids);
        return rows.length >= 2 * AGREEMENTS && rows.every((c) => c.state === 'SUCCESS') ? rows : null;
      },
      'second period charged',
      20_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    charges = await chargeRows(t, ids);
    assert.equal(charges.length, 2 * AGREEMENTS, 'exactly one charge per agreement and period');
    for (const id of ids) {
      const periods = charges
        .filter((c) => c.billingAgreementId === id)
        .map((c) => new Date(c.periodStart).toISOString())
        .sort();
      assert.equal(periods.length, 2);
      assert.equal(Date.parse(periods[1]!) - Date.parse(periods[0]!), DAY_MS);
    }
    assert.equal((await chargeTransactions(t, m.accountId)).length, 2 * AGREEMENTS);
  });
});
