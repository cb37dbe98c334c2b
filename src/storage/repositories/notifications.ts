import type { Kysely, Selectable } from 'kysely';
import type { Notification, NotificationAttempt, NotificationsRepository, NotificationState } from '../../delivery/notification.js';
import type { Database, NotificationsTable } from '../schema.js';

const toNotification = (row: Selectable<NotificationsTable>): Notification => ({ ...row, state: row.state as NotificationState });

export class KyselyNotificationsRepository implements NotificationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertOnce(n: Notification): Promise<Notification> {
    await this.db
      .insertInto('notifications')
      .values(n)
      .onConflict((oc) => oc.columns(['transactionId', 'event']).doNothing())
      .execute();
    const row = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('transactionId', '=', n.transactionId)
      .where('event', '=', n.event)
      .executeTakeFirstOrThrow();
    return toNotification(row);
  }

  async insertIfAbsent(n: Notification): Promise<boolean> {
    const result = await this.db
      .insertInto('notifications')
      .values(n)
      .onConflict((oc) => oc.columns(['transactionId', 'event']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async findById(accountId: string, id: string): Promise<Notification | null> {
    const row = await this.db.selectFrom('notifications').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
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
    await this.db.insertInto('notificationAttempts').values(attempt).execute();
    await this.db
      .updateTable('notifications')
      .set((eb) => ({ ...update, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', attempt.notificationId)
      .execute();
  }

  async markPending(id: string, at: string): Promise<void> {
    await this.db.updateTable('notifications').set({ state: 'PENDING', nextAttemptAt: at, updatedAt: at }).where('id', '=', id).execute();
  }
}
