import type { Kysely } from 'kysely';
import type { EventOutbox, OutboxEvent } from '../../modules/events/event-outbox.js';
import { joinable } from '../postgres/write-combining.js';
import { newId } from '../../shared/ids.js';
import type { Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

/** Compiled once (query-template.ts). A new row: joinable (postgres/write-combining.ts). */
const insertEvent = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string; event: string; data: string; createdAt: string }>) =>
  joinable(db.insertInto('events').values({ id: p.id, accountId: p.accountId, event: p.event, data: p.data, createdAt: p.createdAt })),
);

export class KyselyEventOutbox implements EventOutbox {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  async append(accountId: string, event: string, data: unknown): Promise<string> {
    const id = newId();
    await insertEvent.execute(this.db, { id, accountId, event, data: JSON.stringify(data), createdAt: new Date(this.now()).toISOString() });
    return id;
  }

  async listSince(after: { createdAt: string; id: string } | null, limit: number): Promise<OutboxEvent[]> {
    let q = this.db.selectFrom('events').selectAll();
    if (after) {
      // A row value: the index scan starts at the position (an OR would be a filter on a scan from the start).
      q = q.where((eb) => eb(eb.refTuple('createdAt', 'id'), '>', eb.tuple(after.createdAt, after.id)));
    }
    const rows = await q.orderBy('createdAt').orderBy('id').limit(limit).execute();
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as unknown }));
  }
}
