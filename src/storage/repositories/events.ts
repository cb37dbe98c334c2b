import type { Kysely } from 'kysely';
import type { EventOutbox } from '../../modules/events/event-outbox.js';
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
}
