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
 * How far behind the newest event fanned out a run looks for events not fanned out yet. An event
 * is written with its change, so it commits within moments of its created_at: most runs look back
 * a few seconds. Every FULL_LOOKBACK_EVERY_MS a run looks back FULL_LOOKBACK_MS, for an event
 * committed late (a slow commit, a process whose clock runs behind). Each look-back reads every
 * event of its window (each checked against the fan-out marks): two minutes at every run read
 * 72 000 events a second at 600 payments a second, growing with the rate (issue 10).
 */
export const RECENT_LOOKBACK_MS = 5_000;
export const FULL_LOOKBACK_MS = 2 * 60_000;
export const FULL_LOOKBACK_EVERY_MS = 30_000;

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
  // Service time of this process's next full look-back: its first run looks back fully.
  let fullLookbackAt = Number.NEGATIVE_INFINITY;
  return defineJob(WEBHOOK_RELAY_JOB, async (_payload, ctx) => {
    await scheduleWebhookRelay(deps.jobs, ctx.now());
    if (draining) return;
    draining = true;
    try {
      const full = ctx.now() >= fullLookbackAt;
      if (full) fullLookbackAt = ctx.now() + FULL_LOOKBACK_EVERY_MS;
      // Drain what is there now; a full batch means more may be waiting.
      let batch = await deps.service.fanOut(RELAY_BATCH, { lookbackMs: full ? FULL_LOOKBACK_MS : RECENT_LOOKBACK_MS });
      for (let i = 1; i < 50 && batch.length === RELAY_BATCH; i++) batch = await deps.service.fanOut(RELAY_BATCH, { after: batch.at(-1)! });
    } finally {
      draining = false;
    }
  });
}

/** The handler ends the delivery itself after the schedule's last attempt (the catalogue's attempts leave slack for runs lost to a crash). */
export function webhookDeliveryJob(deps: { service: WebhooksService }): JobDefinition<{ deliveryId: string }> {
  return defineJob(WEBHOOK_DELIVER_JOB, (payload) => deps.service.deliver(payload.deliveryId));
}
