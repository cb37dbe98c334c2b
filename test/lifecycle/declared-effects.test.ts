/**
 * Declared effects (payment-engine.ts): a flow names its payment's effects, each kind is declared
 * once, and the declared effect is part of the commit that applies the final answer — when it
 * fails, nothing of that answer is written, and the drive job's next run applies all of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import type { PaymentEngine } from '../../src/modules/transactions/payment-engine.js';
import type { Repositories } from '../../src/storage/store.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { engineOver } from './fixtures.js';

for (const kind of await availableStores()) {
  describe(`declared effects (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let engine: PaymentEngine<Repositories>;
    let failNext = 0;
    const ran: string[] = [];
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
      engine = engineOver(t);
      engine.declareEffects('TERMINAL_SALE', async (repos, transaction) => {
        if (failNext > 0) {
          failNext--;
          throw new Error('the effect failed');
        }
        ran.push(transaction.id);
        // Writes of the effect see the answer's commit: the transaction is already SUCCESS there.
        assert.equal((await repos.transactions.findById(transaction.accountId, transaction.id))?.state, 'SUCCESS');
      });
    });
    after(() => t.close());

    const submit = (effects: 'TERMINAL_SALE' | 'SESSION') =>
      engine.submit({
        accountId: m.accountId,
        pointOfSaleId: m.onlinePointOfSaleId,
        flow: 'MIT',
        type: 'PAYMENT',
        operation: 'AUTHORIZATION',
        amount: 500,
        currency: 'DKK',
        paymentMethod: null,
        effects,
      });

    test('each kind is declared once; a payment naming an undeclared kind is refused before anything is written', async () => {
      assert.throws(() => engine.declareEffects('TERMINAL_SALE', async () => undefined), /declared twice/);
      await assert.rejects(submit('SESSION'), /not declared/);
      // The service's own engine is checked at start (buildServices): this one lacks two kinds.
      assert.throws(() => engine.checkEffectsDeclared(), /no effects declared for SESSION, BILLING_CHARGE$/);
      assert.doesNotThrow(() => t.runtime.services.payments.checkEffectsDeclared());
    });

    test('a failing effect leaves nothing of the answer; the next run of the drive job applies it with the effect, once', async () => {
      failNext = 1;
      const tx = await submit('TERMINAL_SALE');
      const store = t.runtime.store;
      const runner = new JobRunner({ store: store.jobs, clock: t.runtime.clock, logger: createLogger('silent'), definitions: [engine.driveJob()] as never[] });
      await runner.drain(1);
      const events = async () => (await store.db.selectFrom('events').select('data').execute()).filter((e) => e.data.includes(tx.id)).length;
      const operations = () => store.transactions.operationsOf(tx.id);
      assert.equal((await store.transactions.findById(m.accountId, tx.id))?.state, 'PENDING', 'the answer was rolled back with its effect');
      assert.equal((await operations())[0]?.state, 'PROCESSING');
      assert.equal(await events(), 0, 'no event without its answer');
      assert.deepEqual(ran, []);

      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 2 });
      await runner.drain();
      assert.equal((await store.transactions.findById(m.accountId, tx.id))?.state, 'SUCCESS');
      assert.equal((await operations())[0]?.state, 'SUCCESS');
      assert.equal(await events(), 1, 'transaction.success.v1, once');
      assert.deepEqual(ran, [tx.id], 'the effect ran once, in the commit that applied the answer');
      const job = await store.db
        .selectFrom('jobs')
        .select(['state', 'attempts'])
        .where('dedupeKey', '=', `payment.drive:${(await operations())[0]!.id}`)
        .executeTakeFirstOrThrow();
      assert.deepEqual(job, { state: 'done', attempts: 2 });
    });
  });
}
