/**
 * The two webhook jobs: the relay (outbox → deliveries, one run per second of service time) and
 * the delivery (one job per delivery, so that a slow receiver holds only its own job).
 */
import { defineJob, newJob } from '../../jobs/catalogue.js';
import type { JobDefinition, JobQueue } from '../../jobs/job.js';
import { WEBHOOK_DELIVER_JOB, type WebhooksService } from './webhooks.service.js';

export const WEBHOOK_RELAY_JOB = 'webhooks.relay';
const RELAY_PERIOD_MS = 1_000;
const RELAY_BATCH = 200;

/**
 * The relay run of the next slot. The slot key makes it exactly one per slot whatever the number
 * of processes (the same pattern as maintenance); each run arms the next one before working, so
 * that a failing run never breaks the chain.
 */
export function scheduleWebhookRelay(queue: JobQueue, now: number): Promise<void> {
  const slot = Math.floor(now / RELAY_PERIOD_MS) + 1;
  return queue.enqueue(newJob(WEBHOOK_RELAY_JOB, {}, { runAt: slot * RELAY_PERIOD_MS, dedupeKey: `${WEBHOOK_RELAY_JOB}:${slot}` }));
}

export function webhookRelayJob(deps: { service: WebhooksService; jobs: JobQueue }): JobDefinition<Record<string, never>> {
  // A drain can outlast the one-second period. The next slot's run then leaves the work to it
  // instead of reading the same events: two runs would fan out the same batch, and on PostgreSQL
  // the second would wait, holding a pooled connection, on each fan-out mark the first has not
  // committed yet — one more blocked run every second while a large backlog drains. (Runs in
  // different processes still may overlap; the fan-out marks keep that exactly-once.)
  let draining = false;
  return defineJob(WEBHOOK_RELAY_JOB, async (_payload, ctx) => {
    await scheduleWebhookRelay(deps.jobs, ctx.now());
    if (draining) return;
    draining = true;
    try {
      // Drain what is there now; a full batch means more may be waiting.
      let batch = await deps.service.fanOut(RELAY_BATCH);
      for (let i = 1; i < 50 && batch.length === RELAY_BATCH; i++) batch = await deps.service.fanOut(RELAY_BATCH, batch.at(-1));
    } finally {
      draining = false;
    }
  });
}

/** The handler ends the delivery itself after the schedule's last attempt (the catalogue's attempts leave slack for runs lost to a crash). */
export function webhookDeliveryJob(deps: { service: WebhooksService }): JobDefinition<{ deliveryId: string }> {
  return defineJob(WEBHOOK_DELIVER_JOB, (payload) => deps.service.deliver(payload.deliveryId));
}
