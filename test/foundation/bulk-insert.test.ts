/**
 * Multi-row inserts built without Kysely's per-value work (bulk-insert.ts): the same statement
 * Kysely would build, on both stores; rows of different columns fall back to Kysely; a batch of
 * payments is recorded on PostgreSQL in one statement and reads back as written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { bulkInsert, insertRows } from '../../src/storage/bulk-insert.js';
import { availableStores } from '../support/stores.js';
import { iso, newOperation, newTransaction, openTestStore, seedAccount, T0, type TestStore } from './fixtures.js';

const jobRow = (i: number, dedupeKey: string | null = null) => ({
  id: newId(),
  kind: 'test.bulk',
  payload: JSON.stringify({ i, text: "it's" }),
  state: 'queued',
  dedupeKey,
  runAt: iso(T0 + i),
  attempts: 0,
  maxAttempts: 3,
  createdAt: iso(T0),
  updatedAt: iso(T0),
});

for (const kind of await availableStores()) {
  describe(`bulk insert (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    const countJobs = async (column: 'dedupeKey' | 'kind', op: '=' | 'like', value: string) =>
      Number(
        (
          await t.store.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(column, op, value)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('builds the statement Kysely builds for the same rows, with the same parameters', () => {
      const rows = [jobRow(1, 'k1'), jobRow(2, 'k2'), jobRow(3)];
      const kysely = t.store.db
        .insertInto('jobs')
        .values(rows)
        .onConflict((oc) => oc.column('dedupeKey').doNothing())
        .compile();
      const bulk = bulkInsert(t.store.db, 'jobs', rows, { conflictColumn: 'dedupeKey' });
      assert.equal(bulk?.sql, kysely.sql);
      assert.deepEqual(bulk?.parameters, kysely.parameters);
    });

    test('numbers PostgreSQL placeholders from firstParameter (to join a larger statement)', () => {
      const bulk = bulkInsert(t.store.db, 'jobs', [jobRow(1), jobRow(2)], { firstParameter: 7 })!;
      const placeholders = bulk.sql.slice(bulk.sql.indexOf(' values ')).match(/\$\d+|\?/g);
      assert.deepEqual(placeholders, kind === 'postgres' ? Array.from({ length: 20 }, (_, i) => `$${i + 7}`) : Array(20).fill('?'));
    });

    test('rows whose defined columns differ are left to Kysely (null), and insertRows still writes them', async () => {
      const rows = [jobRow(1), { ...jobRow(2), leasedBy: 'w' }];
      assert.equal(bulkInsert(t.store.db, 'jobs', rows), null);
      assert.equal(bulkInsert(t.store.db, 'jobs', [jobRow(1), { ...jobRow(2), dedupeKey: undefined }]), null);
      await insertRows(t.store.db, 'jobs', rows);
      const stored = await t.store.db
        .selectFrom('jobs')
        .select(['id', 'leasedBy', 'payload'])
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .orderBy('runAt')
        .execute();
      assert.deepEqual(
        stored.map((r) => [r.id, r.leasedBy, JSON.parse(r.payload).text]),
        [
          [rows[0]!.id, null, "it's"],
          [rows[1]!.id, 'w', "it's"],
        ],
      );
    });

    test('insertRows splits rows over statements within the parameter limit and skips conflicting dedupe keys', async () => {
      const rows = Array.from({ length: 3_500 }, (_, i) => jobRow(i, `bulk-split-${i % 2_500}`));
      const counters = t.store.counters;
      counters.start();
      await insertRows(t.store.db, 'jobs', rows, 'dedupeKey');
      const counts = counters.stop();
      assert.equal(counts.writes, 2, '3 500 rows of 10 columns: two statements of at most 30 000 parameters');
      assert.equal(await countJobs('dedupeKey', 'like', 'bulk-split-%'), 2_500);
    });

    test('a batch of payments is recorded in one commit (one statement on PostgreSQL) and reads back as written', async () => {
      const accountId = (await seedAccount(t.store)).id;
      const pos = newId();
      const txs = Array.from({ length: 300 }, (_, i) =>
        newTransaction(accountId, pos, { amount: 1_000 + i, reference: `bulk-${i}`, attributes: { i: String(i) } }),
      );
      const ops = txs.map((tx) => newOperation(tx, { amount: tx.amount }));
      const jobs = ops.map((op, i) => ({ kind: 'test.bulk-drive', payload: { operationId: op.id }, runAt: T0 + i, dedupeKey: `bulk-drive:${op.id}` }));
      const counters = t.store.counters;
      counters.start();
      await t.store.transaction((repos) => repos.paymentRecords.record(txs, ops, jobs));
      const counts = counters.stop();
      if (kind === 'postgres') assert.equal(counts.writes, 1, 'operations, transactions and jobs in one statement');
      const listed = await t.store.transactions.list(accountId, {}, null, 500);
      assert.equal(listed.length, 300);
      const found = new Map(listed.map((tx) => [tx.id, tx]));
      for (const tx of txs) {
        const stored = found.get(tx.id);
        assert.equal(stored?.amount, tx.amount);
        assert.equal(stored?.reference, tx.reference);
        assert.deepEqual(stored?.attributes, tx.attributes);
      }
      const stored = await t.store.db.selectFrom('operations').select(['id', 'transactionId']).where('accountId', '=', accountId).execute();
      assert.deepEqual(new Set(stored.map((o) => o.id)), new Set(ops.map((o) => o.id)));
      assert.equal(await countJobs('kind', '=', 'test.bulk-drive'), 300);
    });
  });
}
