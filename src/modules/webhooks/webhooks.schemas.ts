import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample } from '../../shared/pagination.js';
import { DateTime, HeaderValue, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import type { DeliveryWithAttempts } from './webhooks.repository.js';
import { PAUSE_REASONS, type Webhook, WEBHOOK_EVENTS } from './webhook.js';

export const WebhookRecord = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(StringEnum(WEBHOOK_EVENTS)),
  pausedAt: Nullable(DateTime),
  pauseReason: Nullable(StringEnum(PAUSE_REASONS)),
  createdAt: DateTime,
});

export const WebhookResponse = Type.Object(
  { webhook: WebhookRecord },
  {
    examples: [
      {
        webhook: {
          id: 'b4d5082d-2471-43ec-b9f0-0db4bb0bd649',
          url: 'https://shop.example.com/payments/events',
          events: ['transaction.success.v1', 'transaction.failed.v1', 'subscription-billing.charge-failed.v1'],
          pausedAt: null,
          pauseReason: null,
          createdAt: '2026-11-25T13:29:05.489Z',
        },
      },
    ],
  },
);

export const SigningSecret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description:
    'Signs every delivery (Standard Webhooks: headers webhook-id, webhook-timestamp, webhook-signature). Shown on create, GET and rotation, never in lists.',
});

/** A single webhook as its owner reads it (create, GET, rotation): with its signing secret. */
export const WebhookDetailResponse = Type.Object(
  { webhook: Type.Composite([WebhookRecord, Type.Object({ signingSecret: SigningSecret })]) },
  {
    examples: [
      {
        webhook: {
          id: 'b4d5082d-2471-43ec-b9f0-0db4bb0bd649',
          url: 'https://shop.example.com/payments/events',
          events: ['transaction.success.v1', 'transaction.failed.v1', 'subscription-billing.charge-failed.v1'],
          pausedAt: null,
          pauseReason: null,
          createdAt: '2026-11-25T13:29:05.489Z',
          signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8VlE2dSQFy4=',
        },
      },
    ],
  },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 2048, description: 'Destination; on the approved domain of one of your points of sale (or a sub-domain).' }),
    events: Type.Array(StringEnum(WEBHOOK_EVENTS), { minItems: 1, maxItems: 50, description: 'Event names to subscribe to.' }),
    // Sent verbatim as the Authorization header: printable ASCII only, so it can never split a header.
    secret: HeaderValue('Shared secret, sent as the Authorization header of every delivery (printable ASCII).'),
  },
  {
    examples: [
      {
        url: 'https://shop.example.com/payments/events',
        events: ['transaction.success.v1', 'transaction.failed.v1', 'subscription-billing.charge-failed.v1'],
        secret: 'Bearer whsec-9f2c41d7e0a84b6c',
      },
    ],
  },
);

export const WebhookParams = Type.Object({ webhookId: Uuid });

export const DeliveryAttemptRecord = Type.Object({
  attempt: Type.Integer(),
  attemptedAt: DateTime,
  success: Type.Boolean(),
  httpStatus: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
});

export const DeliveryRecord = Type.Object({
  id: Uuid,
  webhookId: Uuid,
  eventId: Type.String(),
  event: Type.String(),
  state: StringEnum(['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED'] as const),
  attempts: Type.Integer({ description: 'Attempts made so far.' }),
  nextAttemptAt: Nullable(DateTime),
  lastAttemptAt: Nullable(DateTime),
  createdAt: DateTime,
  finishedAt: Nullable(DateTime),
  attemptLog: Type.Array(DeliveryAttemptRecord, { description: 'Every attempt, oldest first.' }),
});

export const DeliveryResponse = Type.Object({ delivery: DeliveryRecord });

/** The registered webhook of the examples, bare as the list shows it (INTERFACE §11.9). */
const WEBHOOK_RECORD_EXAMPLE = (WebhookResponse.examples as Array<{ webhook: Record<string, unknown> }>)[0]!.webhook;
export const WebhookList = PageEnvelope(WebhookRecord, {
  examples: [
    pageExample('/webhooks', [
      WEBHOOK_RECORD_EXAMPLE,
      {
        ...WEBHOOK_RECORD_EXAMPLE,
        id: '3e9a6c41-5f0b-4d2e-8a17-9c4b2d6e0f18',
        url: 'https://erp.example.com/hooks/payments',
        events: ['settlement.transfer-ready.v1'],
        pausedAt: '2026-11-24T08:00:00.000Z',
        pauseReason: 'ERROR_RATE_TOO_HIGH',
        createdAt: '2026-11-20T10:15:31.000Z',
      },
    ]),
  ],
});
/** A paused webhook (POST .../pause) and a resumed one (POST .../resume). */
export const PausedWebhookResponse = Type.Object(WebhookResponse.properties, {
  examples: [{ webhook: { ...WEBHOOK_RECORD_EXAMPLE, pausedAt: '2026-11-26T08:12:44.120Z', pauseReason: 'PAUSED_BY_MERCHANT' } }],
});
export const DeliveryList = PageEnvelope(DeliveryResponse, {
  examples: [
    pageExample(`/webhooks/${String(WEBHOOK_RECORD_EXAMPLE.id)}/deliveries`, [
      {
        delivery: {
          id: '01a236ca-8b02-7c4e-9d1f-2a3b4c5d6e7f',
          webhookId: WEBHOOK_RECORD_EXAMPLE.id,
          eventId: '01a236ca-87b8-74e0-9728-69ad2a51fba7',
          event: 'transaction.success.v1',
          state: 'DELIVERED',
          attempts: 2,
          nextAttemptAt: null,
          lastAttemptAt: '2026-11-25T13:29:06.902Z',
          createdAt: '2026-11-25T13:29:04.814Z',
          finishedAt: '2026-11-25T13:29:06.902Z',
          attemptLog: [
            { attempt: 1, attemptedAt: '2026-11-25T13:29:04.851Z', success: false, httpStatus: 502, error: 'HTTP 502', durationMs: 212 },
            { attempt: 2, attemptedAt: '2026-11-25T13:29:06.902Z', success: true, httpStatus: 200, error: null, durationMs: 48 },
          ],
        },
      },
    ]),
  ],
});

/** A webhook as the list shows it (INTERFACE §11.9); create and get wrap it (webhookWire). */
export const webhookRecord = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  pausedAt: w.pausedAt,
  pauseReason: w.pauseReason,
  createdAt: w.createdAt,
});

export const webhookWire = (w: Webhook) => ({ webhook: webhookRecord(w) });

export const webhookDetailWire = (w: Webhook & { signingSecret: string }) => ({ webhook: { ...webhookRecord(w), signingSecret: w.signingSecret } });

export const deliveryWire = (d: DeliveryWithAttempts) => ({
  delivery: {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    event: d.event,
    state: d.state,
    attempts: d.attempts,
    nextAttemptAt: d.state === 'PENDING' ? d.nextAttemptAt : null,
    lastAttemptAt: d.lastAttemptAt,
    createdAt: d.createdAt,
    finishedAt: d.finishedAt,
    attemptLog: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      attemptedAt: a.attemptedAt,
      success: a.success,
      httpStatus: a.httpStatus,
      error: a.error,
      durationMs: a.durationMs,
    })),
  },
});
