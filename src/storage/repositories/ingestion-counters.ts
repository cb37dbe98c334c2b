import { sql, type Kysely } from 'kysely';
import type { IngestionChannel, IngestionCountersRepository } from '../../modules/mit/ingestion-cap.js';
import type { Dialect } from '../connect.js';
import type { Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';
import { countingAhead, countWithinLimit, type CountTake, totalOf } from './ingestion-upsert.js';
import { findForChargeCountingAhead } from './subscriptions.js';

/** The conditional upsert of addWithin, compiled once (query-template.ts). */
const addWithinUpsert = queryTemplate((db: Kysely<Database>, p: Params<CountTake>) => countWithinLimit(db, p));

/**
 * The ingestion caps' counters (016_ingestion_caps). One conditional upsert takes the count: it
 * inserts the window's row, or adds to it only while the sum stays within the limit (on
 * PostgreSQL under the row's lock, so concurrent processes cannot both pass the cap).
 */
const pruneWindows = queryTemplate((db: Kysely<Database>, p: Params<{ accountId: string; channel: string; windowStart: string }>) =>
  db.deleteFrom('ingestionCounters').where('accountId', '=', p.accountId).where('channel', '=', p.channel).where('windowStart', '<', p.windowStart),
);

/** addAhead's statement (countingAhead), compiled once. */
const addAheadStatement = queryTemplate((db: Kysely<Database>, p: Params<CountTake>) => countingAhead(db, p));

export class KyselyIngestionCounters implements IngestionCountersRepository {
  readonly countsAhead: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    dialect: Dialect,
  ) {
    this.countsAhead = dialect === 'postgres';
  }

  async addAhead(accountId: string, channel: IngestionChannel, windowStart: string, count: number, limit: number): Promise<number | null> {
    if (!this.countsAhead) return this.addWithin(accountId, channel, windowStart, count, limit);
    const row = await addAheadStatement.executeTakeFirst(this.db, { accountId, channel, windowStart, count, limit });
    return totalOf(row?.ingestionCount);
  }

  async addAheadReading(accountId: string, channel: IngestionChannel, windowStart: string, count: number, limit: number, subscriptionId: string) {
    if (!this.countsAhead) throw new Error('addAheadReading: this store counts in the commit');
    return findForChargeCountingAhead(this.db, { accountId, id: subscriptionId }, { channel, windowStart, count, limit });
  }

  async subtract(accountId: string, channel: IngestionChannel, windowStart: string, count: number): Promise<void> {
    // A count given back to zero leaves no row: a refused request (4xx) changes nothing. A count
    // taken meanwhile by another request finds no row and inserts one, as for a new window.
    const emptied = await this.db
      .deleteFrom('ingestionCounters')
      .where('accountId', '=', accountId)
      .where('channel', '=', channel)
      .where('windowStart', '=', windowStart)
      .where('count', '=', count)
      .executeTakeFirst();
    if (Number(emptied.numDeletedRows) > 0) return;
    await this.db
      .updateTable('ingestionCounters')
      .set({ count: sql<number>`count - ${count}` })
      .where('accountId', '=', accountId)
      .where('channel', '=', channel)
      .where('windowStart', '=', windowStart)
      .where('count', '>=', count)
      .execute();
  }

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
