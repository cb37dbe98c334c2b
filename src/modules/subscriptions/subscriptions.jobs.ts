/**
 * The daily payment-method expiry sweep on the service clock: one job per day (the dedupe key),
 * so that exactly one runs per day whatever the number of processes. Each run arms the next
 * day's before working, so that a failing run never breaks the chain; when the clock jumps
 * several days, the missed days collapse into one run (the sweep compares with today).
 */
import { defineJob, newJob } from '../../jobs/catalogue.js';
import type { JobDefinition, JobQueue } from '../../jobs/job.js';
import { DAY_MS, iso } from '../../shared/time.js';
import type { SubscriptionsService } from './subscriptions.service.js';

export const PAYMENT_METHOD_EXPIRY_JOB = 'subscriptions.payment-method-expiry';

/** The next run: 00:00 UTC of the day after `now`. */
export function paymentMethodExpirySlot(now: number): { runAt: number; dedupeKey: string } {
  const runAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  return { runAt, dedupeKey: `${PAYMENT_METHOD_EXPIRY_JOB}:${iso(runAt).slice(0, 10)}` };
}

export function schedulePaymentMethodExpiry(queue: JobQueue, now: number): Promise<void> {
  return queue.enqueue(newJob(PAYMENT_METHOD_EXPIRY_JOB, {}, paymentMethodExpirySlot(now)));
}

export function paymentMethodExpiryJob(deps: {
  service: Pick<SubscriptionsService, 'invalidateExpiredPaymentMethods'>;
  jobs: JobQueue;
}): JobDefinition<Record<string, never>> {
  return defineJob(PAYMENT_METHOD_EXPIRY_JOB, async (_payload, ctx) => {
    await schedulePaymentMethodExpiry(deps.jobs, ctx.now());
    await deps.service.invalidateExpiredPaymentMethods();
  });
}
