/**
 * Random ids can be taken: the store reports a new row whose primary key exists as DuplicateId
 * (both drivers' spellings, src/storage/duplicate-id.ts), and withNewIdsOnCollision makes the
 * create again with new ids — for its own table only, at most NEW_ID_TRIES times. (The engine's
 * retry with new transaction ids: test/lifecycle/transaction-id-collision.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DuplicateId, NEW_ID_TRIES, withNewIdsOnCollision } from '../../src/shared/errors.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { API } from '../support/harness.js';
import { motoBody } from '../online/helpers.js';

test('withNewIdsOnCollision: tries again on its table’s DuplicateId only, NEW_ID_TRIES times at most', async () => {
  let calls = 0;
  assert.equal(
    await withNewIdsOnCollision('payment_links', async () => {
      if (++calls < NEW_ID_TRIES) throw new DuplicateId('payment_links');
      return 'made';
    }),
    'made',
  );
  assert.equal(calls, NEW_ID_TRIES);

  calls = 0;
  await assert.rejects(
    withNewIdsOnCollision('payment_links', async () => {
      calls++;
      throw new DuplicateId('payment_links');
    }),
    DuplicateId,
  );
  assert.equal(calls, NEW_ID_TRIES, 'then the error is the caller’s');

  for (const error of [new DuplicateId('sessions'), new Error('a constraint')]) {
    calls = 0;
    await assert.rejects(
      withNewIdsOnCollision('payment_links', async () => {
        calls++;
        throw error;
      }),
      (err) => err === error,
    );
    assert.equal(calls, 1, `${error.message}: not tried again`);
  }
});

for (const kind of await availableStores()) {
  describe(`a taken id in a commit (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('a new row whose id exists → DuplicateId naming the table; nothing of that commit stays', async () => {
      const moto = await m.api.post(`${API}/moto`, motoBody(m));
      assert.equal(moto.status, 200, moto.text);
      const store = t.runtime.store;
      const taken = (await store.transactions.findById(m.accountId, moto.body.transaction.id))!;
      const rows = async () => (await store.db.selectFrom('transactions').select('id').execute()).length;
      const before = await rows();
      await assert.rejects(
        store.transaction(async (repos) => {
          await repos.transactions.insert([{ ...taken, id: 'FRESHTX0001', reference: 'fresh' }]);
          await repos.transactions.insert([{ ...taken, reference: 'again' }]);
        }),
        (err) => err instanceof DuplicateId && err.table === 'transactions',
      );
      assert.equal(await rows(), before, 'the commit was rolled back whole');
      assert.equal((await store.transactions.findById(m.accountId, taken.id))?.reference, taken.reference);
    });
  });
}
