/**
 * Transaction ids are 11 characters, the last 6 random (30 bits after the second they are made
 * in, src/shared/ids.ts): a new one can be taken. The create commit is then refused by the store
 * (a primary-key violation, translated to DuplicateId) and made again with new ids, so the payment
 * is created once and nothing of the refused try stays; after NEW_ID_TRIES collisions in a row the
 * error is the caller's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PaymentEngine, PaymentRequest } from '../../src/modules/transactions/payment-engine.js';
import { DuplicateId, NEW_ID_TRIES } from '../../src/shared/errors.js';
import type { Repositories } from '../../src/storage/store.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { engineOver } from './fixtures.js';

for (const kind of await availableStores()) {
  describe(`a taken transaction id (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let engine: PaymentEngine<Repositories>;
    /** The ids the engine takes next, in order; then random ones. */
    const nextIds: string[] = [];
    let made = 0;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
      engine = engineOver(t, {
        newTransactionId: () => {
          made++;
          return nextIds.shift() ?? `Z${String(made).padStart(10, '0')}`;
        },
      });
    });
    after(() => t.close());

    const request = (reference: string): PaymentRequest<Repositories> => ({
      accountId: m.accountId,
      pointOfSaleId: m.onlinePointOfSaleId,
      flow: 'MIT',
      type: 'PAYMENT',
      operation: 'AUTHORIZATION',
      amount: 500,
      currency: 'DKK',
      paymentMethod: null,
      reference,
    });
    const rowsOf = async (table: 'transactions' | 'operations') => (await t.runtime.store.db.selectFrom(table).select('id').execute()).length;

    test('the asynchronous path (MIT, batch): a taken id → the same payments with new ids, each once', async () => {
      nextIds.push('TAKEN000001');
      const first = await engine.submit(request('first'));
      assert.equal(first.id, 'TAKEN000001');
      const [transactions, operations] = [await rowsOf('transactions'), await rowsOf('operations')];
      // The batch's second transaction takes the id of the first payment: the whole commit is made again.
      nextIds.push('FRESH000001', 'TAKEN000001', 'FRESH000002', 'FRESH000003');
      const batch = await engine.submitMany([request('second'), request('third')]);
      assert.deepEqual(
        batch.map((tx) => [tx.id, tx.reference]),
        [
          ['FRESH000002', 'second'],
          ['FRESH000003', 'third'],
        ],
      );
      assert.equal(await rowsOf('transactions'), transactions + 2, 'two transactions, nothing of the refused try');
      assert.equal(await rowsOf('operations'), operations + 2);
      assert.equal((await t.runtime.store.transactions.findById(m.accountId, 'FRESH000001'))?.id, undefined, 'the refused try left nothing');
      assert.equal((await t.runtime.store.transactions.findById(m.accountId, 'TAKEN000001'))?.reference, 'first', 'the first payment is untouched');
    });

    test('the synchronous path (MOTO): a taken id → a new one; taken every time → DuplicateId, nothing written', async () => {
      nextIds.push('TAKEN000002');
      await engine.authorize(request('moto-first'));
      nextIds.push('TAKEN000002', 'FRESH000004');
      const moto = await engine.authorize(request('moto-second'));
      assert.equal(moto.id, 'FRESH000004');
      assert.equal(moto.state, 'SUCCESS');

      const [transactions, operations] = [await rowsOf('transactions'), await rowsOf('operations')];
      nextIds.push(...Array<string>(NEW_ID_TRIES).fill('TAKEN000002'), 'NEVER000001');
      await assert.rejects(engine.submit(request('unlucky')), (err) => err instanceof DuplicateId && err.table === 'transactions');
      assert.deepEqual(nextIds, ['NEVER000001'], `${NEW_ID_TRIES} tries`);
      nextIds.length = 0;
      assert.equal(await rowsOf('transactions'), transactions);
      assert.equal(await rowsOf('operations'), operations);
    });
  });
}
