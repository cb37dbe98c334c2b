import { sql, type QueryCreator } from 'kysely';
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
 * when refused. Alone (addWithin, addAhead) or as a CTE of the charge read (subscriptions.ts).
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
