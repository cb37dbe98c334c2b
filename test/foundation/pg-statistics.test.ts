/**
 * The planner statistics of the job queue and the payment tables on PostgreSQL
 * (src/storage/postgres/statistics.ts): past autovacuum's rule (a threshold plus a share of the rows
 * changed since the last ANALYZE) the keeper analyzes the table; the claim then walks jobs_due in
 * order instead of sorting every due job, and a capture's read finds the authorization through
 * its transaction instead of a bitmap of every final operation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { ANALYZE_THRESHOLD, needsAnalyze, PgStatisticsKeeper } from '../../src/storage/postgres/statistics.js';
import { availableStores } from '../support/stores.js';
import { newOperation, newPointOfSale, newTransaction, openTestStore, seedAccount, type TestStore } from './fixtures.js';

test('needsAnalyze: autovacuum’s rule, a table never analyzed counting as empty', () => {
  assert.equal(needsAnalyze({ table: 'jobs', changed: ANALYZE_THRESHOLD, rows: -1 }), false);
  assert.equal(needsAnalyze({ table: 'jobs', changed: ANALYZE_THRESHOLD + 1, rows: -1 }), true);
  assert.equal(needsAnalyze({ table: 'jobs', changed: 5_000, rows: 100_000 }), false);
  assert.equal(needsAnalyze({ table: 'jobs', changed: 11_001, rows: 100_000 }), true);
});

/** A keeper on the test store's connection. */
const keeperOf = (t: TestStore) => new PgStatisticsKeeper((text, parameters) => t.store.db.executeQuery(CompiledQuery.raw(text, parameters)));

/** PostgreSQL's plan for `query`, as text. */
async function planOf(t: TestStore, query: RawBuilder<unknown>): Promise<string> {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(t.store.db);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

for (const kind of (await availableStores()).filter((k) => k === 'postgres')) {
  describe(`planner statistics of the job queue (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    const dueClaimPlan = () =>
      planOf(
        t,
        sql`select id from jobs where kind in ('webhooks.deliver', 'payment.drive') and state = 'queued' and run_at <= now()
        order by run_at, id limit 64 for update skip locked`,
      );

    test('a burst of queued jobs gets the table analyzed, once; the claim then reads jobs_due in order without a sort', async () => {
      const keeper = keeperOf(t);
      await t.store.db.transaction().execute(async (trx) => {
        await sql`
          insert into jobs (id, kind, payload, state, dedupe_key, run_at, attempts, max_attempts, created_at, updated_at)
          select 'burst-' || g, 'webhooks.deliver', '{}', 'queued', 'burst-' || g, now() - interval '1 minute', 0, 25, now(), now()
          from generate_series(1, 20000) g`.execute(trx);
        // The inserting backend reports its counts when it goes idle, at most once a second unless told.
        await sql`select pg_stat_force_next_flush()`.execute(trx);
      });
      let analyzed: string[] = [];
      for (let i = 0; i < 30 && analyzed.length === 0; i++) {
        analyzed = await keeper.check();
        if (analyzed.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(analyzed, ['jobs']);
      const { rows } = await sql<{
        changed: string;
      }>`select n_mod_since_analyze::text as changed from pg_stat_user_tables where relid = 'jobs'::regclass`.execute(t.store.db);
      assert.ok(Number(rows[0]!.changed) < ANALYZE_THRESHOLD, `changes left after ANALYZE: ${rows[0]!.changed}`);
      assert.deepEqual(await keeper.check(), [], 'nothing changed since: no second ANALYZE');

      const plan = await dueClaimPlan();
      assert.match(plan, /Index Scan using jobs_due/, plan);
      assert.doesNotMatch(plan, /Sort|Bitmap/, plan);
    });
  });

  describe(`planner statistics of the payment tables (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    /** How a capture, void or renew finds the authorization it refers to (selectWithPrimaryOperation's subquery). */
    const primaryOperationPlan = (transactionId: string) =>
      planOf(
        t,
        sql`select o.id from operations o
        where o.transaction_id = ${sql.lit(transactionId)} and o.type in ('AUTHORIZATION', 'SALE') and o.state = 'SUCCESS' limit 1`,
      );

    test('a burst of final operations gets operations analyzed; the primary operation is then found by its transaction, not by a scan of every final operation', async () => {
      const account = await seedAccount(t.store);
      const pointOfSale = newPointOfSale(account.id, 'ONLINE');
      await t.store.pointsOfSale.insert(pointOfSale, 'sealed');
      const tx = newTransaction(account.id, pointOfSale.id);
      await t.store.transactions.insert([tx]);
      await t.store.transactions.insertOperations([newOperation(tx, { type: 'AUTHORIZATION' })]);
      // Many final operations of other transactions, as a day of captures leaves them.
      await t.store.db.transaction().execute(async (trx) => {
        await sql`
          insert into transactions (id, account_id, point_of_sale_id, type, flow, state, amount, currency, created_at, updated_at)
          select 'burst-' || g, ${account.id}, ${pointOfSale.id}, 'PAYMENT', 'MIT', 'SUCCESS', 1000, 'DKK', now(), now()
          from generate_series(1, 20000) g`.execute(trx);
        await sql`
          insert into operations (id, account_id, transaction_id, point_of_sale_id, type, state, amount, created_at, finalized_at)
          select 'burst-op-' || g, ${account.id}, 'burst-' || g, ${pointOfSale.id}, 'AUTHORIZATION', 'SUCCESS', 1000, now(), now()
          from generate_series(1, 20000) g`.execute(trx);
        await sql`select pg_stat_force_next_flush()`.execute(trx);
      });
      const keeper = keeperOf(t);
      let analyzed: string[] = [];
      for (let i = 0; i < 30 && !analyzed.includes('operations'); i++) {
        analyzed = analyzed.concat(await keeper.check());
        if (!analyzed.includes('operations')) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual([...analyzed].sort(), ['operations', 'transactions']);

      const plan = await primaryOperationPlan(tx.id);
      assert.match(plan, /Index Scan using operations_transaction/, plan);
      assert.doesNotMatch(plan, /operations_final|Bitmap/, plan);
    });
  });
}
