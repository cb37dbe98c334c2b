/**
 * The job queue's planner statistics on PostgreSQL (src/storage/pg-statistics.ts): past autovacuum's
 * rule (a threshold plus a share of the rows changed since the last ANALYZE) the keeper analyzes the
 * table, and the claim then walks jobs_due in order instead of sorting every due job.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { ANALYZE_THRESHOLD, needsAnalyze, PgStatisticsKeeper } from '../../src/storage/pg-statistics.js';
import { availableStores } from '../support/stores.js';
import { openTestStore, type TestStore } from './fixtures.js';

test('needsAnalyze: autovacuum’s rule, a table never analyzed counting as empty', () => {
  assert.equal(needsAnalyze({ table: 'jobs', changed: ANALYZE_THRESHOLD, rows: -1 }), false);
  assert.equal(needsAnalyze({ table: 'jobs', changed: ANALYZE_THRESHOLD + 1, rows: -1 }), true);
  assert.equal(needsAnalyze({ table: 'jobs', changed: 5_000, rows: 100_000 }), false);
  assert.equal(needsAnalyze({ table: 'jobs', changed: 11_001, rows: 100_000 }), true);
});

for (const kind of (await availableStores()).filter((k) => k === 'postgres')) {
  describe(`planner statistics of the job queue (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    const dueClaimPlan = async (): Promise<string> => {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        explain select id from jobs where kind in ('webhooks.deliver', 'payment.drive') and state = 'queued' and run_at <= now()
        order by run_at, id limit 64 for update skip locked`.execute(t.store.db);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };

    test('a burst of queued jobs gets the table analyzed, once; the claim then reads jobs_due in order without a sort', async () => {
      const keeper = new PgStatisticsKeeper((text, parameters) => t.store.db.executeQuery(CompiledQuery.raw(text, parameters)));
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
}
