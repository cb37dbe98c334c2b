import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { Database } from '../schema.js';

/** One count to take: `count` more in the (merchant, channel, minute) row, within `limit`. */
export interface CountTake {
  accountId: string;
  channel: string;
  windowStart: string;
  count: number;
  limit: number;
}

/**
 * The ingestion count's conditional upsert: inserts the window's row, or adds to it only while the
 * sum stays within the limit (on PostgreSQL under the row's lock). Returns the new total; no row
 * when refused. Alone (addWithin) or as the CTE of countingAhead.
 */
export function countWithinLimit(db: QueryCreator<Database>, p: CountTake) {
  return db
    .insertInto('ingestionCounters')
    .values({ accountId: p.accountId, channel: p.channel, windowStart: p.windowStart, count: p.count })
    .onConflict((oc) =>
      oc
        .columns(['accountId', 'channel', 'windowStart'])
        .doUpdateSet({ count: sql<number>`ingestion_counters.count + excluded.count` })
        .where(sql<number>`ingestion_counters.count + excluded.count`, '<=', p.limit),
    )
    .returning('count');
}

/**
 * countWithinLimit in a commit of its own that does not wait for its WAL flush (PostgreSQL addAhead):
 * the counter row is locked for the statement, not through a payment commit's flush. The payment
 * commit that follows is synchronous and later in the WAL, so it flushes this one with it; lost in a
 * crash before that, the count was for MITs that were not stored either. One row: `ingestionCount`,
 * the new total (null: refused). The charge read of POST /mit joins it (subscriptions.ts).
 */
export function countingAhead(db: Kysely<Database>, p: CountTake) {
  return db
    .with('counted', (qb) => countWithinLimit(qb, p))
    .with('asyncCommit', (qb) => qb.selectNoFrom(sql<string>`set_config('synchronous_commit', 'off', true)`.as('setting')))
    .selectFrom('asyncCommit')
    .select((eb) => eb.selectFrom('counted').select('count').as('ingestionCount'));
}

/** countingAhead's `ingestionCount` as the new total (null: refused; PostgreSQL may give it as text). */
export function totalOf(ingestionCount: unknown): number | null {
  return ingestionCount === null || ingestionCount === undefined ? null : Number(ingestionCount);
}
