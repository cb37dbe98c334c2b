/** A callback to a transaction's notificationUrl and the log of its delivery attempts. */
export type NotificationState = 'PENDING' | 'DELIVERED' | 'FAILED';

export interface Notification {
  /** Also the X-Delivery-Id header: the same on every attempt. */
  id: string;
  accountId: string;
  transactionId: string;
  /** The final transaction state the callback reports (one callback per final state). */
  event: string;
  url: string;
  state: NotificationState;
  /** The NotificationWebhook JSON, fixed at the first attempt. */
  body: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  /** The Authorization header value sent with it, sealed; null in rows written before it was kept here. */
  authorizationSealed: string | null;
}

export interface NotificationAttempt {
  id: string;
  notificationId: string;
  attempt: number;
  /** HTTP status of the answer; null when none came (timeout, refused connection, policy). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  createdAt: string;
}

/** An attempt to record: its number comes from the notification's row. */
export type NewNotificationAttempt = Omit<NotificationAttempt, 'attempt'>;

export interface NotificationsRepository {
  /** Inserts unless the (transaction, event) notification exists; returns the stored one. */
  insertOnce(notification: Notification): Promise<Notification>;
  /**
   * Inserts unless the (transaction, event) notification exists. Nothing comes back, so on
   * PostgreSQL it goes with the commit's other writes: its job is enqueued either way, and a job
   * whose row was not the one inserted finds no row by its id and does nothing.
   */
  addIfAbsent(notification: Notification): Promise<void>;
  findById(accountId: string, id: string): Promise<Notification | null>;
  listForTransaction(accountId: string, transactionId: string): Promise<Notification[]>;
  attemptsOf(notificationIds: string[]): Promise<NotificationAttempt[]>;
  /**
   * Logs an attempt, numbered from the row (its attempts + 1, whatever the caller's copy says), and
   * moves the notification's counters in one go. Unless `resend`, a row already DELIVERED stays so
   * (its state, delivery time and next attempt): the caller's copy of the row may predate a resend.
   */
  recordAttempt(
    attempt: NewNotificationAttempt,
    update: Pick<Notification, 'state' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'deliveredAt' | 'updatedAt'>,
    options?: { resend?: boolean },
  ): Promise<void>;
  markPending(id: string, at: string): Promise<void>;
}
