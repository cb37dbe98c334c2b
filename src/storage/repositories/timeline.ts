/** Storage side of a transaction's timeline (modules/transactions/timeline.ts): reads only. */
import type { Kysely } from 'kysely';
import type {
  TimelineCallback,
  TimelineOutboxEvent,
  TimelineRepository,
  TimelineThreeDSStep,
  TimelineWebhookDelivery,
} from '../../modules/transactions/timeline.js';
import type { Database } from '../schema.js';

export class KyselyTimelineRepository implements TimelineRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async callbacksOf(accountId: string, transactionId: string): Promise<TimelineCallback[]> {
    const notifications = await this.db
      .selectFrom('notifications')
      .select(['id', 'event', 'url', 'state', 'createdAt'])
      .where('accountId', '=', accountId)
      .where('transactionId', '=', transactionId)
      .execute();
    if (notifications.length === 0) return [];
    const attempts = await this.db
      .selectFrom('notificationAttempts')
      .select(['id', 'notificationId', 'attempt', 'statusCode', 'error', 'durationMs', 'createdAt'])
      .where(
        'notificationId',
        'in',
        notifications.map((n) => n.id),
      )
      .execute();
    return notifications.map((n) => ({ ...n, attempts: attempts.filter((a) => a.notificationId === n.id) }));
  }

  async eventsMentioning(accountId: string, transactionId: string, since: string): Promise<TimelineOutboxEvent[]> {
    // Transaction ids are [0-9A-Z] only: no LIKE wildcard can hide in them. The caller checks the parsed data.
    if (!/^[0-9A-Z]{1,64}$/.test(transactionId)) return [];
    const rows = await this.db
      .selectFrom('events')
      .select(['id', 'event', 'createdAt', 'data'])
      .where('accountId', '=', accountId)
      .where('createdAt', '>=', since)
      .where('data', 'like', `%"${transactionId}"%`)
      .execute();
    return rows.map((row) => ({ id: row.id, event: row.event, createdAt: row.createdAt, data: parse(row.data) }));
  }

  async deliveriesOf(accountId: string, eventIds: string[]): Promise<TimelineWebhookDelivery[]> {
    if (eventIds.length === 0) return [];
    const deliveries = await this.db
      .selectFrom('webhookDeliveries')
      .select(['id', 'webhookId', 'eventId', 'event', 'state', 'createdAt'])
      .where('accountId', '=', accountId)
      .where('eventId', 'in', eventIds)
      .execute();
    if (deliveries.length === 0) return [];
    const attempts = await this.db
      .selectFrom('webhookDeliveryAttempts')
      .select(['id', 'deliveryId', 'attempt', 'success', 'httpStatus', 'error', 'durationMs', 'attemptedAt'])
      .where(
        'deliveryId',
        'in',
        deliveries.map((d) => d.id),
      )
      .execute();
    return deliveries.map((d) => ({
      ...d,
      attempts: attempts.filter((a) => a.deliveryId === d.id).map((a) => ({ ...a, success: Boolean(a.success) })),
    }));
  }

  async threeDSStepsOf(accountId: string, transactionId: string): Promise<TimelineThreeDSStep[]> {
    const rows = await this.db
      .selectFrom('threeDsAttempts')
      .select('steps')
      .where('transactionId', '=', transactionId)
      .where('accountId', '=', accountId)
      .orderBy('createdAt')
      .execute();
    return rows.flatMap((row) => JSON.parse(row.steps) as TimelineThreeDSStep[]);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
