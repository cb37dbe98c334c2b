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

/** The SUCCESS callback of a payment: the receiver failed once (HTTP 503), then took it. */
const NOTIFICATION_EXAMPLE = {
  id: '01a236ca-87b9-7408-b029-9eac67d9133e',
  transactionId: '59JXY3CGEZ0',
  event: 'SUCCESS',
  url: 'https://shop.example.com/payments/callback',
  state: 'DELIVERED',
  attemptCount: 2,
  lastStatus: 200,
  nextAttemptAt: null,
  createdAt: '2026-11-25T13:29:04.815Z',
  deliveredAt: '2026-11-25T13:29:04.902Z',
  attempts: [
    { attempt: 1, statusCode: 503, error: 'HTTP 503', durationMs: 31, createdAt: '2026-11-25T13:29:04.851Z' },
    { attempt: 2, statusCode: 200, error: null, durationMs: 44, createdAt: '2026-11-25T13:29:04.902Z' },
  ],
};

const NotificationResponse = Type.Object(
  { notification: NotificationRecord },
  {
    examples: [
      {
        notification: {
          ...NOTIFICATION_EXAMPLE,
          state: 'PENDING',
          attemptCount: 2,
          lastStatus: 500,
          nextAttemptAt: '2026-11-25T15:02:00.000Z',
          deliveredAt: null,
          attempts: [
            { attempt: 1, statusCode: 500, error: 'HTTP 500', durationMs: 31, createdAt: '2026-11-25T13:29:04.851Z' },
            { attempt: 2, statusCode: 500, error: 'HTTP 500', durationMs: 28, createdAt: '2026-11-25T13:29:04.902Z' },
          ],
        },
      },
    ],
  },
);
const NotificationListResponse = Type.Object({ notifications: Type.Array(NotificationRecord) }, { examples: [{ notifications: [NOTIFICATION_EXAMPLE] }] });
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
      summary: 'List the callbacks of a transaction',
      description:
        'The callbacks (NotificationWebhook POSTs to `notificationUrl`) of one transaction with every delivery attempt: the ' +
        "receiver's HTTP status, the error, the duration. `state` is `PENDING` while retries remain (`nextAttemptAt`), " +
        '`DELIVERED` on a 2xx, `FAILED` after the last of 25 attempts (retried at once, then after 2^n s, capped at 3 h).',
      schema: { params: TransactionParams, response: { 200: NotificationListResponse } },
      handler: async ({ params, accountId }) => ({ notifications: (await delivery.list(accountId, params.transactionId)).map(notificationWire) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/notifications/:notificationId/resend',
      summary: 'Resend a callback',
      description:
        'Sends a callback again — after fixing the receiver, say — with the same body and `X-Delivery-Id` (so receivers can ' +
        'de-duplicate) and a fresh retry schedule. Answers the callback with its attempts; it is `PENDING` until the new delivery ' +
        'succeeds or fails.',
      idempotent: true,
      schema: { params: ResendParams, response: { 200: NotificationResponse } },
      handler: async ({ params, accountId }) => ({
        notification: notificationWire(await delivery.resend(accountId, params.transactionId, params.notificationId)),
      }),
    }),
  ];
}
