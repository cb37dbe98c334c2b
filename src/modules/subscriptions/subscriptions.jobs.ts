/**
 * The daily payment-method expiry sweep on the service clock: one job per day (the dedupe key),
 * so that exactly one runs per day whatever the number of processes. Each run arms the next
 * day's before working, so that a failing run never breaks the chain; when the clock jumps
 * several days, the missed days collapse into one run (the sweep compares with today).
 */
import { exponentialBackoff, type JobDefinition, type JobQueue, JOB_LEASE_MS } from '../../jobs/job.js';
import { DAY_MS, iso } from '../../shared/time.js';
import type { SubscriptionsService } from './subscriptions.service.js';

export const PAYMENT_METHOD_EXPIRY_JOB = 'subscriptions.payment-method-expiry';
const MAX_ATTEMPTS = 10;

/** The next run: 00:00 UTC of the day after `now`. */
export function paymentMethodExpirySlot(now: number): { runAt: number; dedupeKey: string } {
  const runAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  return { runAt, dedupeKey: `${PAYMENT_METHOD_EXPIRY_JOB}:${iso(runAt).slice(0, 10)}` };
}

export function schedulePaymentMethodExpiry(queue: JobQueue, now: number): Promise<void> {
  return queue.enqueue({ kind: PAYMENT_METHOD_EXPIRY_JOB, payload: {}, maxAttempts: MAX_ATTEMPTS, ...paymentMethodExpirySlot(now) });
}

export function paymentMethodExpiryJob(deps: {
  service: Pick<SubscriptionsService, 'invalidateExpiredPaymentMethods'>;
  jobs: JobQueue;
}): JobDefinition<Record<string, never>> {
  return {
    kind: PAYMENT_METHOD_EXPIRY_JOB,
    maxAttempts: MAX_ATTEMPTS,
    leaseMs: JOB_LEASE_MS,
    backoff: exponentialBackoff(30_000, 15 * 60_000),
    async handle(_payload, ctx) {
      await schedulePaymentMethodExpiry(deps.jobs, ctx.now());
      await deps.service.invalidateExpiredPaymentMethods();
    },
  };
}
