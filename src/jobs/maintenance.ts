/**
 * Housekeeping on the service clock: sweeps idempotency records past their 24 h and purges
 * finished jobs after a week. Each run schedules the next one under a slot key, so that exactly
 * one runs per slot whatever the number of processes.
 */
import type { IdempotencyStore } from '../http/idempotency.js';
import { DAY_MS } from '../shared/time.js';
import { defineJob, newJob } from './catalogue.js';
import type { JobDefinition, JobQueue, JobStore } from './job.js';

export const MAINTENANCE_JOB = 'maintenance.sweep';
const PERIOD_MS = 15 * 60_000;

export function maintenanceSlot(now: number): { runAt: number; dedupeKey: string } {
  const slot = Math.floor(now / PERIOD_MS) + 1;
  return { runAt: slot * PERIOD_MS, dedupeKey: `${MAINTENANCE_JOB}:${slot}` };
}

export function scheduleMaintenance(queue: JobQueue, now: number): Promise<void> {
  return queue.enqueue(newJob(MAINTENANCE_JOB, {}, maintenanceSlot(now)));
}

export function maintenanceJob(deps: { idempotency: IdempotencyStore; jobs: JobStore }): JobDefinition<Record<string, never>> {
  return defineJob(MAINTENANCE_JOB, async (_payload, ctx) => {
    const now = ctx.now();
    while ((await deps.idempotency.sweep(new Date(now).toISOString(), 1000)) === 1000);
    while ((await deps.jobs.purgeFinished(now - 7 * DAY_MS, 1000)) === 1000);
    await scheduleMaintenance(deps.jobs, now);
  });
}
