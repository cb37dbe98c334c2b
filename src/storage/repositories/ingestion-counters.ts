import { sql, type Kysely } from 'kysely';
import type { IngestionChannel, IngestionCountersRepository } from '../../modules/mit/ingestion-cap.js';
import type { Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

/** The conditional upsert of addWithin, compiled once (query-template.ts). */
const addWithinUpsert = queryTemplate(
  (db: Kysely<Database>, p: Params<{ accountId: string; channel: string; windowStart: string; count: number; limit: number }>) =>
    db
      .insertInto('ingestionCounters')
      .values({ accountId: p.accountId, channel: p.channel, windowStart: p.windowStart, count: p.count })
      .onConflict((oc) =>
        oc
          .columns(['accountId', 'channel', 'windowStart'])
          .doUpdateSet({ count: sql<number>`ingestion_counters.count + excluded.count` })
          .where(sql<number>`ingestion_counters.count + excluded.count`, '<=', p.limit),
      )
      .returning('count'),
);

/**
 * The ingestion caps' counters (016_ingestion_caps). One conditional upsert takes the count: it
 * inserts the window's row, or adds to it only while the sum stays within the limit (on
 * PostgreSQL under the row's lock, so concurrent processes cannot both pass the cap).
 */
const pruneWindows = queryTemplate((db: Kysely<Database>, p: Params<{ accountId: string; channel: string; windowStart: string }>) =>
  db.deleteFrom('ingestionCounters').where('accountId', '=', p.accountId).where('channel', '=', p.channel).where('windowStart', '<', p.windowStart),
);

export class KyselyIngestionCounters implements IngestionCountersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async addWithin(accountId: string, channel: IngestionChannel, windowStart: string, count: number, limit: number): Promise<number | null> {
    const row = await addWithinUpsert.executeTakeFirst(this.db, { accountId, channel, windowStart, count, limit });
    return row ? Number(row.count) : null;
  }

  async current(accountId: string, channel: IngestionChannel, windowStart: string): Promise<number> {
    const row = await this.db
      .selectFrom('ingestionCounters')
      .select('count')
      .where('accountId', '=', accountId)
      .where('channel', '=', channel)
      .where('windowStart', '=', windowStart)
      .executeTakeFirst();
    return row ? Number(row.count) : 0;
  }

  async pruneBefore(accountId: string, channel: IngestionChannel, windowStart: string): Promise<void> {
    await pruneWindows.execute(this.db, { accountId, channel, windowStart });
  }
}
