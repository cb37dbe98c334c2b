/**
 * Registered webhooks (seed §2.9, §4.5, §6; INTERFACE §7, §8): a merchant's subscription to
 * system events, delivered as `{event, data}` with the webhook's secret as `Authorization`.
 *
 * Webhook: active ⇄ paused (by the merchant, or automatically on a high error rate) → deleted.
 * Delivery: PENDING → DELIVERED | FAILED (attempts exhausted) | CANCELLED (webhook deleted or paused).
 */

/** The event catalogue a webhook may subscribe to (INTERFACE §8, contract). */
export const WEBHOOK_EVENTS = [
  'transaction.success.v1',
  'transaction.failed.v1',
  'transaction.captured.v1',
  'transaction.refunded.v1',
  'transaction.voided.v1',
  'transaction.renewed.v1',
  'subscription.disabled.v1',
  'subscription-billing.charge-created.v1',
  'subscription-billing.charge-success.v1',
  'subscription-billing.charge-failed.v1',
  'subscription-billing.agreement-active.v1',
  'subscription-billing.agreement-stopped.v1',
  'settlement.transfer-ready.v1',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const PAUSE_REASONS = ['ERROR_RATE_TOO_HIGH', 'PAUSED_BY_MERCHANT'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

/** Seed §6 / §8: at most 10 webhooks per merchant. Paused ones count, so a resume never exceeds it. */
export const MAX_WEBHOOKS_PER_MERCHANT = 10;

/** Auto-pause (INTERFACE §8): more than half of the attempts failed over 7 days, with at least 20 attempts. */
export const AUTO_PAUSE = {
  windowMs: 7 * 24 * 3600_000,
  minDeliveries: 20,
  /** Paused when failed / total is strictly greater than this. */
  maxFailureRatio: 0.5,
} as const;

export interface Webhook {
  id: string;
  accountId: string;
  url: string;
  events: WebhookEvent[];
  pausedAt: string | null;
  pauseReason: PauseReason | null;
  /** After a resume the error-rate window starts here (earlier failures are forgiven). Never on the wire. */
  resumedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export const isWebhookEvent = (name: string): name is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(name);

export const isPaused = (webhook: Pick<Webhook, 'pausedAt'>): boolean => webhook.pausedAt !== null;

export type DeliveryState = 'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELLED';

export interface WebhookDelivery {
  /** Stable across retries; sent as X-Delivery-Id so that receivers can drop duplicates. */
  id: string;
  webhookId: string;
  accountId: string;
  eventId: string;
  event: string;
  /** The exact JSON text POSTed: `{"event": ..., "data": ...}`. */
  body: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface DeliveryAttempt {
  id: string;
  deliveryId: string;
  webhookId: string;
  attempt: number;
  success: boolean;
  /** HTTP status of the answer; null when none came (timeout, refused connection, blocked address). */
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

/** Error-rate verdict over the window (INTERFACE §8). */
export function exceedsErrorRate(stats: { total: number; failed: number }): boolean {
  return stats.total >= AUTO_PAUSE.minDeliveries && stats.failed / stats.total > AUTO_PAUSE.maxFailureRatio;
}

/** Start of the error-rate window at `now`: 7 days back, or the last resume if later. */
export function errorRateWindowStart(webhook: Pick<Webhook, 'resumedAt'>, now: number): string {
  const weekAgo = now - AUTO_PAUSE.windowMs;
  const resumed = webhook.resumedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(webhook.resumedAt);
  return new Date(Math.max(weekAgo, resumed)).toISOString();
}
