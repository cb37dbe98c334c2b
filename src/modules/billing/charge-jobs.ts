/**
 * The billing job catalogue's names and payloads, and how they are enqueued. Jobs are only
 * triggers: the charge itself is guarded by the unique (agreement, period start) key and every
 * attempt by a compare-and-set on the charge, so a trigger that runs twice changes nothing.
 */
import { newJob } from '../../jobs/catalogue.js';
import type { JobQueue } from '../../jobs/job.js';
import type { BillingAgreement } from './agreement.js';
import type { BillingCharge } from './charge.js';

export const CHARGE_DUE_JOB = 'billing.charge-due' as const;
export const CHARGE_ATTEMPT_JOB = 'billing.charge-attempt' as const;

export interface ChargeDuePayload {
  accountId: string;
  agreementId: string;
  periodStart: string;
}

export interface ChargeAttemptPayload {
  accountId: string;
  chargeId: string;
  /** 1-based number of the attempt to make. */
  attempt: number;
}

/**
 * Schedules the charge of an ACTIVE agreement's next period at its start. The key names the
 * period and the state change that scheduled it, so that a stop and a resume to the same date
 * schedule again instead of being swallowed by the earlier trigger's key.
 */
export function enqueueChargeDue(jobs: JobQueue, agreement: BillingAgreement): Promise<void> {
  if (agreement.state !== 'ACTIVE' || agreement.nextChargeAt === null) return Promise.resolve();
  const payload: ChargeDuePayload = { accountId: agreement.accountId, agreementId: agreement.id, periodStart: agreement.nextChargeAt };
  return jobs.enqueue(
    newJob(CHARGE_DUE_JOB, payload, {
      runAt: Date.parse(agreement.nextChargeAt),
      dedupeKey: `${CHARGE_DUE_JOB}:${agreement.id}:${agreement.nextChargeAt}:${agreement.stateChangedAt}`,
    }),
  );
}

/** Schedules the charge's next attempt at its nextAttemptAt; one job per attempt number. */
export function enqueueChargeAttempt(jobs: JobQueue, charge: BillingCharge): Promise<void> {
  if (charge.state !== 'PROCESSING' || charge.nextAttemptAt === null) return Promise.resolve();
  const attempt = charge.attempts + 1;
  const payload: ChargeAttemptPayload = { accountId: charge.accountId, chargeId: charge.id, attempt };
  return jobs.enqueue(
    newJob(CHARGE_ATTEMPT_JOB, payload, { runAt: Date.parse(charge.nextAttemptAt), dedupeKey: `${CHARGE_ATTEMPT_JOB}:${charge.id}:${attempt}` }),
  );
}
