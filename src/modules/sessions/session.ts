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

/**
 * The `subscription` object of POST /cit, kept until the session completes. `id`: an existing
 * ACTIVE subscription whose payment method the session replaces (then `type` and the rest are the
 * subscription's own, copied for the record); `amount`: the expected recurring amount (minor units).
 */
export interface SubscriptionRequest {
  id?: string | null;
  amount?: number | null;
  type: SubscriptionType;
  reference: string | null;
  expiryDate: string | null;
  interval: { period: IntervalPeriod; frequency: number } | null;
  billingAgreement: BillingAgreementRequest | null;
}

/** An order line shown in the payment window (copied from a multi-link, INTERFACE §11.3). */
export interface OrderLine {
  description: string;
  imageUrl: string | null;
  quantity: number;
  /** Minor units. */
  unitPrice: number;
  /** Minor units. */
  totalAmount: number;
  type: string;
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
  /** Order lines shown in the payment window (a session started by a multi-link); null otherwise. */
  orderLines?: OrderLine[] | null;
  /** INTERFACE §11.2 (optional in the type: records built before it; read as null / false). */
  /** Payment method types the window offers; null: all. */
  allowedPaymentMethods?: string[] | null;
  /** The customer enters the amount in the window; `amount` is the default, then what the last attempt asked for. */
  dynamicAmount?: boolean;
  /** Age verification asked for (null: none), its country, and whether the customer passed it. */
  minimumAge?: number | null;
  ageVerificationCountry?: string | null;
  ageVerified?: boolean;
  /** POSTed {session, transaction} before each authorization; a non-2xx refuses the attempt (REJECTED_BY_MERCHANT). */
  preAuthUrl?: string | null;
  /** Where the customer goes after a failed attempt while attempts remain (null: failureUrl). */
  retryUrl?: string | null;
  /** Where a cancelled redirect-based method returns (null: failureUrl). */
  returnUrl?: string | null;
  /** A NotificationWebhook with session.state EXPIRED goes to notificationUrl when the session expires. */
  reportExpired?: boolean;
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
