/**
 * Billing agreement: links a subscription to a plan and tracks its schedule. States and the
 * only transitions between them (anything else is refused, naming the state and the action):
 *
 *   PENDING --activate--> ACTIVE        (the CIT session that carries it completed)
 *   PENDING --stop------> STOPPED
 *   ACTIVE  --stop------> STOPPED       (nextChargeAt cleared: no automatic charges)
 *   STOPPED --resume----> ACTIVE        (nextChargeAt given by the merchant)
 *
 * Stopping a STOPPED agreement changes nothing and is not an error (the effect already exists).
 */
export const AGREEMENT_STATES = ['PENDING', 'ACTIVE', 'STOPPED'] as const;
export type AgreementState = (typeof AGREEMENT_STATES)[number];
export type AgreementAction = 'activate' | 'stop' | 'resume';

export const AGREEMENT_TRANSITIONS: Record<AgreementState, Partial<Record<AgreementAction, AgreementState>>> = {
  PENDING: { activate: 'ACTIVE', stop: 'STOPPED' },
  ACTIVE: { stop: 'STOPPED' },
  STOPPED: { stop: 'STOPPED', resume: 'ACTIVE' },
};

export function nextAgreementState(current: AgreementState, action: AgreementAction): AgreementState | null {
  return AGREEMENT_TRANSITIONS[current][action] ?? null;
}

export interface BillingAgreement {
  id: string;
  accountId: string;
  billingPlanId: string;
  /** Null while PENDING on a CIT session that has not created its subscription yet. */
  subscriptionId: string | null;
  sessionId: string | null;
  customerId: string | null;
  state: AgreementState;
  /** Start of the next period to charge; null unless ACTIVE (or PENDING with a date). */
  nextChargeAt: string | null;
  lastChargeAt: string | null;
  /**
   * Day of the month (1–31) monthly charges aim for, kept across short months (31 → Feb 28/29 →
   * Mar 31): the day of the first nextChargeAt on a MONTH plan, null on other periods (INTERFACE §11.7).
   * Resuming keeps it.
   */
  desiredDate: number | null;
  reference: string | null;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}

export const AGREEMENT_EVENTS = {
  ACTIVE: 'subscription-billing.agreement-active.v1',
  STOPPED: 'subscription-billing.agreement-stopped.v1',
} as const;
