import type { Kysely, Selectable } from 'kysely';
import type { NewNotificationAttempt, Notification, NotificationAttempt, NotificationsRepository, NotificationState } from '../../delivery/notification.js';
import type { Database, NotificationsTable } from '../schema.js';
import { deferrable, joinable } from '../postgres/write-combining.js';
import { keyedTemplates, queryTemplate, type Params } from '../query-template.js';

const toNotification = (row: Selectable<NotificationsTable>): Notification => ({ ...row, state: row.state as NotificationState });

// Statements compiled once (query-template.ts).
// Its result unused: deferrable (postgres/write-combining.ts; a read of the table sends it first). A new
// row (one per transaction and event): joinable with other commits' writes.
const addNotification = keyedTemplates((db: Kysely<Database>, n: Params<Notification>) =>
  joinable(
    db
      .insertInto('notifications')
      .values(n)
      .onConflict((oc) => oc.columns(['transactionId', 'event']).doNothing()),
  ),
);
const selectNotification = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('notifications').selectAll().where('id', '=', p.id).where('accountId', '=', p.accountId),
);
// The attempt and its update are deferrable: on PostgreSQL a delivery's commit is then one statement (postgres/write-combining.ts).
// The attempt's number is the row's count plus one, read in the statement, not the caller's copy of
// the row: a delivery started from the row its commit wrote (JobHandoff) may find it moved by a resend.
// It runs before the update (SQLite runs them in order; on PostgreSQL both see the statement's snapshot).
// A new row: joinable (a resend's commit is not joined all the same: its update is not joinable).
const insertAttempt = keyedTemplates((db: Kysely<Database>, attempt: Params<NewNotificationAttempt>) =>
  joinable(
    db.insertInto('notificationAttempts').values({
      ...attempt,
      attempt: (eb) =>
        eb
          .selectFrom('notifications')
          .select((n) => n('attempts', '+', 1).as('next'))
          .where('id', '=', attempt.notificationId),
    }),
  ),
);
type AttemptUpdate = Pick<Notification, 'state' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'deliveredAt' | 'updatedAt'>;
/**
 * The attempt's update of the notification `id` (attempts + 1). `keepDelivered`: a row already
 * DELIVERED stays so, with its delivery time and no next attempt — an attempt that is not a
 * merchant's resend found it delivered only by a resend that came after its row was read.
 * A delivery's update is joinable (postgres/write-combining.ts): the row is the one its job, under the
 * caller's lease, delivers. A resend's is not: it may come while that job delivers the same row.
 */
const updateAfterAttempt = (keepDelivered: boolean) =>
  queryTemplate((db: Kysely<Database>, p: Params<AttemptUpdate & { id: string }>) =>
    (keepDelivered ? joinable : deferrable)(
      db
        .updateTable('notifications')
        .set((eb) => {
          const unlessDelivered = <C extends 'state' | 'nextAttemptAt' | 'deliveredAt'>(column: C, value: Notification[C]) =>
            keepDelivered ? eb.case().when('state', '=', 'DELIVERED').then(eb.ref(column)).else(value).end() : eb.val(value);
          return {
            state: unlessDelivered('state', p.state),
            nextAttemptAt: unlessDelivered('nextAttemptAt', p.nextAttemptAt),
            deliveredAt: unlessDelivered('deliveredAt', p.deliveredAt),
            lastStatus: p.lastStatus,
            lastError: p.lastError,
            updatedAt: p.updatedAt,
            attempts: eb('attempts', '+', 1),
          };
        })
        .where('id', '=', p.id),
    ),
  );
const updateAfterResend = updateAfterAttempt(false);
const updateAfterDelivery = updateAfterAttempt(true);

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

  async recordAttempt(attempt: NewNotificationAttempt, update: AttemptUpdate, options: { resend?: boolean } = {}): Promise<void> {
    await insertAttempt.execute(this.db, attempt);
    await (options.resend ? updateAfterResend : updateAfterDelivery).execute(this.db, { ...update, id: attempt.notificationId });
  }

  async markPending(id: string, at: string): Promise<void> {
    await this.db.updateTable('notifications').set({ state: 'PENDING', nextAttemptAt: at, updatedAt: at }).where('id', '=', id).execute();
  }
}
