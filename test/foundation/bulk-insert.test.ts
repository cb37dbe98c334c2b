/**
 * Multi-row inserts built without Kysely's per-value work (bulk-insert.ts): the same statement
 * Kysely would build, on both stores; rows of different columns fall back to Kysely; a batch of
 * payments is recorded on PostgreSQL in one statement and reads back as written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { sql } from 'kysely';
import { bulkInsert, insertRows, PG_ARRAYS_FROM_ROWS } from '../../src/storage/bulk-insert.js';
import { PG_BULK_COLUMN_TYPES } from '../../src/storage/postgres/column-types.js';
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

    const eventRow = (i: number) => ({ id: newId(), accountId: 'acct', event: 'test.bulk', data: JSON.stringify({ i }), createdAt: iso(T0 + i) });

    test('builds the statement Kysely builds for the same rows, with the same parameters (PostgreSQL: a table outside PG_BULK_COLUMN_TYPES)', () => {
      const rows = [jobRow(1, 'k1'), jobRow(2, 'k2'), jobRow(3)];
      const kysely = t.store.db
        .insertInto('jobs')
        .values(rows)
        .onConflict((oc) => oc.column('dedupeKey').doNothing())
        .compile();
      const bulk = bulkInsert(t.store.db, 'jobs', rows, { conflictColumn: 'dedupeKey' });
      if (kind === 'sqlite') {
        assert.equal(bulk?.sql, kysely.sql);
        assert.deepEqual(bulk?.parameters, kysely.parameters);
      }
      const events = [eventRow(1), eventRow(2)];
      const kyselyEvents = t.store.db.insertInto('events').values(events).compile();
      const bulkEvents = bulkInsert(t.store.db, 'events', events);
      assert.equal(bulkEvents?.sql, kyselyEvents.sql);
      assert.deepEqual(bulkEvents?.parameters, kyselyEvents.parameters);
    });

    test('numbers PostgreSQL placeholders from firstParameter (to join a larger statement)', () => {
      const placeholdersOf = (rows: number) => {
        const bulk = bulkInsert(
          t.store.db,
          'jobs',
          Array.from({ length: rows }, (_, i) => jobRow(i)),
          { firstParameter: 7 },
        )!;
        return bulk.sql.slice(bulk.sql.search(/ values | unnest\(/)).match(/\$\d+|\?/g);
      };
      const numbered = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 7}`);
      // One placeholder per value (10 columns); PostgreSQL, from PG_ARRAYS_FROM_ROWS rows: one array per column.
      assert.deepEqual(placeholdersOf(2), kind === 'postgres' ? numbered(20) : Array(20).fill('?'));
      if (kind === 'postgres') assert.deepEqual(placeholdersOf(PG_ARRAYS_FROM_ROWS), numbered(10));
    });

    if (kind === 'postgres') {
      test('PostgreSQL: fewer than PG_ARRAYS_FROM_ROWS rows of a table of PG_BULK_COLUMN_TYPES go in through VALUES, as Kysely builds them', () => {
        // unnest's arrays cost the server ~1 MB of malloc'd memory per statement (see bulk-insert.ts).
        for (const count of [1, PG_ARRAYS_FROM_ROWS - 1]) {
          const rows = Array.from({ length: count }, (_, i) => jobRow(i, `v${i}`));
          const kysely = t.store.db
            .insertInto('jobs')
            .values(rows)
            .onConflict((oc) => oc.column('dedupeKey').doNothing())
            .compile();
          const bulk = bulkInsert(t.store.db, 'jobs', rows, { conflictColumn: 'dedupeKey' })!;
          assert.equal(bulk.sql, kysely.sql);
          assert.deepEqual(bulk.parameters, kysely.parameters);
        }
      });

      test('PostgreSQL: PG_ARRAYS_FROM_ROWS rows or more of a table of PG_BULK_COLUMN_TYPES take one array per column, cast to its type, the same text for any such row count', async () => {
        const rows = [jobRow(1, 'u1'), ...Array.from({ length: PG_ARRAYS_FROM_ROWS - 1 }, (_, i) => jobRow(i + 2))];
        const bulk = bulkInsert(t.store.db, 'jobs', rows, { conflictColumn: 'dedupeKey' })!;
        const columns = Object.keys(rows[0]!);
        assert.equal(
          bulk.sql,
          'insert into "jobs" ("id", "kind", "payload", "state", "dedupe_key", "run_at", "attempts", "max_attempts", "created_at", "updated_at") ' +
            'select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::int4[], $8::int4[], $9::timestamptz[], $10::timestamptz[]) ' +
            'on conflict ("dedupe_key") do nothing',
        );
        assert.deepEqual(
          bulk.parameters,
          columns.map((c) => rows.map((r) => r[c as keyof typeof r])),
        );
        const more = Array.from({ length: PG_ARRAYS_FROM_ROWS + 5 }, (_, i) => jobRow(i, `u${i + 3}`));
        assert.equal(bulkInsert(t.store.db, 'jobs', more, { conflictColumn: 'dedupeKey' })!.sql, bulk.sql);
      });

      test('PG_BULK_COLUMN_TYPES is the migrated schema: every column of its tables not listed is text (a domain: its base type)', async () => {
        const { rows } = await sql<{ table: string; column: string; type: string }>`
          select c.relname as table, a.attname as column, base.typname as type
          from pg_attribute a
          join pg_class c on c.oid = a.attrelid
          join pg_type t on t.oid = a.atttypid
          join pg_type base on base.oid = case when t.typtype = 'd' then t.typbasetype else t.oid end
          where c.relnamespace = current_schema()::regnamespace and a.attnum > 0 and not a.attisdropped
            and c.relname in (${sql.join(Object.keys(PG_BULK_COLUMN_TYPES))})`.execute(t.store.db);
        const nonText: Record<string, Record<string, string>> = {};
        for (const r of rows) if (r.type !== 'text') (nonText[r.table] ??= {})[r.column] = r.type;
        assert.deepEqual(nonText, PG_BULK_COLUMN_TYPES);
      });

      test('PostgreSQL: values that need quoting in an array (quotes, backslashes, commas, braces, NULL, the word NULL, empty, unicode) read back as written', async () => {
        const accountId = (await seedAccount(t.store)).id;
        const awkward = ['it\'s "quoted"', 'back\\slash\\', 'a,b', '{braces}', 'NULL', '', 'ø 💳 \n tab\t', null];
        // As many rows as go in as arrays, each awkward value several times.
        const txs = Array.from({ length: PG_ARRAYS_FROM_ROWS }, (_, i) =>
          newTransaction(accountId, newId(), { amount: i, reference: awkward[i % awkward.length]! }),
        );
        await t.store.transaction((repos) =>
          repos.paymentRecords.record(
            txs,
            txs.map((tx) => newOperation(tx, { amount: tx.amount })),
            [],
          ),
        );
        const stored = await t.store.db.selectFrom('transactions').select(['id', 'reference', 'amount']).where('accountId', '=', accountId).execute();
        const byId = new Map(stored.map((r) => [r.id, r]));
        for (const tx of txs) {
          assert.equal(byId.get(tx.id)?.reference, tx.reference, `reference ${JSON.stringify(tx.reference)}`);
          assert.equal(Number(byId.get(tx.id)?.amount), tx.amount);
        }
      });
    }

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
