/** The event outbox as stored, for assertions: every event, oldest first (the service reads none back this way). */
import type { Kysely } from 'kysely';
import type { OutboxEvent } from '../../src/modules/events/event-outbox.js';
import type { Database } from '../../src/storage/schema.js';

export async function storedEvents(store: { db: Kysely<Database> }): Promise<OutboxEvent[]> {
  const rows = await store.db.selectFrom('events').selectAll().orderBy('createdAt').orderBy('id').execute();
  return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as unknown }));
}
