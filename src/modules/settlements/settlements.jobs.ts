/**
 * The daily settlement run on the service clock: one job per posting date (the dedupe key), so
 * that exactly one runs per day whatever the number of processes. Each run arms the next day's
 * before working, so that a failing run never breaks the chain; when the clock jumps several
 * days, the missed days collapse into one run that settles everything due.
 */
import { defineJob, newJob } from '../../jobs/catalogue.js';
import type { JobDefinition, JobQueue } from '../../jobs/job.js';
import { DAY_MS, iso } from '../../shared/time.js';
import type { SettlementsService } from './settlements.service.js';

export const SETTLEMENT_RUN_JOB = 'settlements.daily-run';

/** The next run: 00:00 UTC of the day after `now`, posting on that date. */
export function settlementSlot(now: number): { runAt: number; postingDate: string; dedupeKey: string } {
  const runAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  const postingDate = iso(runAt).slice(0, 10);
  return { runAt, postingDate, dedupeKey: `${SETTLEMENT_RUN_JOB}:${postingDate}` };
}

export function scheduleSettlementRun(queue: JobQueue, now: number): Promise<void> {
  const { runAt, postingDate, dedupeKey } = settlementSlot(now);
  return queue.enqueue(newJob(SETTLEMENT_RUN_JOB, { postingDate }, { runAt, dedupeKey }));
}

export function settlementRunJob(deps: { service: SettlementsService; jobs: JobQueue }): JobDefinition<{ postingDate: string }> {
  return defineJob(SETTLEMENT_RUN_JOB, async (payload, ctx) => {
    await scheduleSettlementRun(deps.jobs, ctx.now());
    await deps.service.run({ postingDate: payload.postingDate });
  });
}
