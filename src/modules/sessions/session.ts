/**
 * CIT payment session: one checkout in the hosted payment window. The customer may try up to
 * `maxAttempts` times; each try is its own transaction (initiator CIT). The session ends
 * COMPLETED when a try is approved, EXPIRED when time runs out or every attempt failed.
 */
import type { IntervalPeriod, SubscriptionType } from '../subscriptions/subscription.js';

export const SESSION_STATES = ['PENDING', 'PROCESSING', 'COMPLETED', 'EXPIRED'] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/**
 * start: the customer submitted a payment; approve: the acquirer approved it; decline: refused
 * with attempts left (the customer may try again); exhaust: refused and no attempt left;
 * expire: the timeout passed before a payment started; cancel: the merchant withdrew it before a
 * payment started (a cancelled payment link) — it ends EXPIRED with errorCode MANUAL_ABORTED.
 */
export type SessionEvent = 'start' | 'approve' | 'decline' | 'exhaust' | 'expire' | 'cancel';

/** state × event → next state; anything missing is refused. A payment in flight is never expired under it. */
export const SESSION_TRANSITIONS: Record<SessionState, Partial<Record<SessionEvent, SessionState>>> = {
  PENDING: { start: 'PROCESSING', expire: 'EXPIRED', cancel: 'EXPIRED' },
  PROCESSING: { approve: 'COMPLETED', decline: 'PENDING', exhaust: 'EXPIRED' },
  COMPLETED: {},
  EXPIRED: {},
};

export function nextSessionState(current: SessionState, event: SessionEvent): SessionState | null {
  return SESSION_TRANSITIONS[current][event] ?? null;
}

export const isSessionFinal = (state: SessionState): boolean => state === 'COMPLETED' || state === 'EXPIRED';

/** The `billingAgreement` part of a session's subscription request (created when the session completes). */
export interface BillingAgreementRequest {
  billingPlanId: string;
  reference: string | null;
  nextChargeAt: string | null;
}

/** The `subscription` object of POST /cit, kept until the session completes. */
export interface SubscriptionRequest {
  type: SubscriptionType;
  reference: string | null;
  expiryDate: string | null;
  interval: { period: IntervalPeriod; frequency: number } | null;
  billingAgreement: BillingAgreementRequest | null;
}

export interface Session {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  /** Public client key of the payment window script. */
  clientKey: string;
  state: SessionState;
  amount: number;
  currency: string;
  reference: string | null;
  scaMode: string;
  timeoutMinutes: number;
  instantCapture: string;
  exemptions: string[];
  textOnStatement: string | null;
  attributes: Record<string, string> | null;
  customerId: string | null;
  maxAttempts: number;
  attempts: number;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  reportFailure: boolean;
  subscriptionRequest: SubscriptionRequest | null;
  /** The approved transaction once COMPLETED; the latest attempt's before that. */
  transactionId: string | null;
  subscriptionId: string | null;
  paymentMethodId: string | null;
  /** Why the last attempt failed (or EXPIRED). */
  errorCode: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}
