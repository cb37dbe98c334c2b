/** The merchant's view of its callbacks: every attempt, and a manual resend. */
import { Type } from '@sinclair/typebox';
import { defineRoute, type RouteDef } from '../shared/route.js';
import { DateTime, Nullable, Uuid } from '../shared/wire.js';
import type { CallbackDelivery, NotificationView } from './callbacks.js';

const AttemptRecord = Type.Object({
  attempt: Type.Integer(),
  statusCode: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
  createdAt: DateTime,
});

export const NotificationRecord = Type.Object({
  id: Uuid,
  transactionId: Type.String(),
  event: Type.String({ description: 'The final transaction state this callback reports.' }),
  url: Type.String(),
  state: Type.Union([Type.Literal('PENDING'), Type.Literal('DELIVERED'), Type.Literal('FAILED')]),
  attemptCount: Type.Integer(),
  lastStatus: Nullable(Type.Integer()),
  nextAttemptAt: Nullable(DateTime),
  createdAt: DateTime,
  deliveredAt: Nullable(DateTime),
  attempts: Type.Array(AttemptRecord),
});

const NotificationResponse = Type.Object({ notification: NotificationRecord });
const NotificationListResponse = Type.Object({ notifications: Type.Array(NotificationRecord) });
const TransactionParams = Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 64 }) });
const ResendParams = Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 64 }), notificationId: Uuid });

export function notificationWire({ notification: n, attempts }: NotificationView) {
  return {
    id: n.id,
    transactionId: n.transactionId,
    event: n.event,
    url: n.url,
    state: n.state,
    attemptCount: n.attempts,
    lastStatus: n.lastStatus,
    nextAttemptAt: n.nextAttemptAt,
    createdAt: n.createdAt,
    deliveredAt: n.deliveredAt,
    attempts: attempts.map((a) => ({ attempt: a.attempt, statusCode: a.statusCode, error: a.error, durationMs: a.durationMs, createdAt: a.createdAt })),
  };
}

export function notificationsRoutes(delivery: Pick<CallbackDelivery<never>, 'list' | 'resend'>): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Transactions'] };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/transactions/:transactionId/notifications',
      summary: 'Callbacks of a transaction with every delivery attempt',
      schema: { params: TransactionParams, response: { 200: NotificationListResponse } },
      handler: async ({ params, accountId }) => ({ notifications: (await delivery.list(accountId, params.transactionId)).map(notificationWire) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/notifications/:notificationId/resend',
      summary: 'Send a callback again (same X-Delivery-Id, fresh retry schedule)',
      idempotent: true,
      schema: { params: ResendParams, response: { 200: NotificationResponse } },
      handler: async ({ params, accountId }) => ({
        notification: notificationWire(await delivery.resend(accountId, params.transactionId, params.notificationId)),
      }),
    }),
  ];
}
