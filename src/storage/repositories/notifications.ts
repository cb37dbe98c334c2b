import type { Kysely, Selectable } from 'kysely';
import type { Notification, NotificationAttempt, NotificationsRepository, NotificationState } from '../../delivery/notification.js';
import type { Database, NotificationsTable } from '../schema.js';
import { deferrable } from '../pg-write-combining.js';
import { keyedTemplates, queryTemplate, type Params } from '../query-template.js';

const toNotification = (row: Selectable<NotificationsTable>): Notification => ({ ...row, state: row.state as NotificationState });

// Statements compiled once (query-template.ts).
// Its result unused: deferrable (pg-write-combining.ts; a read of the table sends it first).
const addNotification = keyedTemplates((db: Kysely<Database>, n: Params<Notification>) =>
  deferrable(
    db
      .insertInto('notifications')
      .values(n)
      .onConflict((oc) => oc.columns(['transactionId', 'event']).doNothing()),
  ),
);
const selectNotification = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('notifications').selectAll().where('id', '=', p.id).where('accountId', '=', p.accountId),
);
// The attempt and its update are deferrable: on PostgreSQL a delivery's commit is then one statement (pg-write-combining.ts).
const insertAttempt = keyedTemplates((db: Kysely<Database>, attempt: Params<NotificationAttempt>) =>
  deferrable(db.insertInto('notificationAttempts').values(attempt)),
);
/** The attempt's update: `set:<column>` values, attempts + 1, of the notification `id`. */
const updateAfterAttempt = keyedTemplates((db: Kysely<Database>, p: Params<Record<string, unknown>>) => {
  const set: Record<string, unknown> = {};
  for (const key of Object.keys(p)) if (key.startsWith('set:')) set[key.slice(4)] = p[key];
  return deferrable(
    db
      .updateTable('notifications')
      .set((eb) => ({ ...(set as object), attempts: eb('attempts', '+', 1) }))
      .where('id', '=', p.id as string),
  );
});

export class KyselyNotificationsRepository implements NotificationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertOnce(n: Notification): Promise<Notification> {
    await addNotification.execute(this.db, n);
    const row = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('transactionId', '=', n.transactionId)
      .where('event', '=', n.event)
      .executeTakeFirstOrThrow();
    return toNotification(row);
  }

  async addIfAbsent(n: Notification): Promise<void> {
    await addNotification.execute(this.db, n);
  }

  async findById(accountId: string, id: string): Promise<Notification | null> {
    const row = await selectNotification.executeTakeFirst(this.db, { id, accountId });
    return row ? toNotification(row) : null;
  }

  async listForTransaction(accountId: string, transactionId: string): Promise<Notification[]> {
    const rows = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('accountId', '=', accountId)
      .where('transactionId', '=', transactionId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
    return rows.map(toNotification);
  }

  async attemptsOf(notificationIds: string[]): Promise<NotificationAttempt[]> {
    if (notificationIds.length === 0) return [];
    return this.db.selectFrom('notificationAttempts').selectAll().where('notificationId', 'in', notificationIds).orderBy('attempt').execute();
  }

  async recordAttempt(
    attempt: NotificationAttempt,
    update: Pick<Notification, 'state' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'deliveredAt' | 'updatedAt'>,
  ): Promise<void> {
    await insertAttempt.execute(this.db, attempt);
    const p: Record<string, unknown> = { id: attempt.notificationId };
    for (const [key, value] of Object.entries(update)) p[`set:${key}`] = value;
    await updateAfterAttempt.execute(this.db, p);
  }

  async markPending(id: string, at: string): Promise<void> {
    await this.db.updateTable('notifications').set({ state: 'PENDING', nextAttemptAt: at, updatedAt: at }).where('id', '=', id).execute();
  }
}
