/**
 * Billing agreement charge: one scheduled billing event of an agreement, for one period.
 * At most one charge exists per (agreement, period start) — a unique key in storage.
 *
 *   PROCESSING --attempt approved-------------------------> SUCCESS
 *   PROCESSING --attempt failed, a retry fits the deadline-> PROCESSING (nextAttemptAt set)
 *   PROCESSING --attempt failed, no retry left / deadline--> FAILED
 */
export const CHARGE_STATES = ['PROCESSING', 'SUCCESS', 'FAILED'] as const;
export type ChargeState = (typeof CHARGE_STATES)[number];
export type ChargeEvent = 'succeed' | 'retry' | 'fail';

export const CHARGE_TRANSITIONS: Record<ChargeState, Partial<Record<ChargeEvent, ChargeState>>> = {
  PROCESSING: { succeed: 'SUCCESS', retry: 'PROCESSING', fail: 'FAILED' },
  SUCCESS: {},
  FAILED: {},
};

export function nextChargeState(current: ChargeState, event: ChargeEvent): ChargeState | null {
  return CHARGE_TRANSITIONS[current][event] ?? null;
}

export interface BillingCharge {
  id: string;
  accountId: string;
  billingAgreementId: string;
  billingPlanId: string;
  /** The period this charge pays for starts here; unique per agreement. */
  periodStart: string;
  state: ChargeState;
  /** Plan terms copied when the charge was made, so that a later plan change cannot alter it. */
  amount: number;
  currency: string;
  maxAttempts: number;
  /** Attempts made so far (each one MIT transaction). */
  attempts: number;
  /** The latest attempt's transaction. */
  transactionId: string | null;
  /** The next period start: every attempt happens before it. */
  deadlineAt: string;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

export const CHARGE_EVENTS = {
  CREATED: 'subscription-billing.charge-created.v1',
  SUCCESS: 'subscription-billing.charge-success.v1',
  FAILED: 'subscription-billing.charge-failed.v1',
} as const;
