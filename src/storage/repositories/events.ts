import type { Kysely } from 'kysely';
import type { EventOutbox, OutboxEvent } from '../../modules/events/event-outbox.js';
import { newId } from '../../shared/ids.js';
import type { Database } from '../schema.js';

export class KyselyEventOutbox implements EventOutbox {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  async append(accountId: string, event: string, data: unknown): Promise<string> {
    const id = newId();
    await this.db
      .insertInto('events')
      .values({ id, accountId, event, data: JSON.stringify(data), createdAt: new Date(this.now()).toISOString() })
      .execute();
    return id;
  }

  async listSince(after: { createdAt: string; id: string } | null, limit: number): Promise<OutboxEvent[]> {
    let q = this.db.selectFrom('events').selectAll();
    if (after) {
      q = q.where((eb) => eb.or([eb('createdAt', '>', after.createdAt), eb.and([eb('createdAt', '=', after.createdAt), eb('id', '>', after.id)])]));
    }
    const rows = await q.orderBy('createdAt').orderBy('id').limit(limit).execute();
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as unknown }));
  }
}
