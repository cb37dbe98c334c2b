/**
 * Subscription: the link between a merchant and a stored payment method (seed §2.7), created
 * ACTIVE when a CIT session that asked for one completes. MIT and billing charge only ACTIVE ones.
 */
export const SUBSCRIPTION_STATES = ['PENDING', 'ACTIVE', 'INVALID', 'DISABLED'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];
export const SUBSCRIPTION_TYPES = ['SCHEDULED', 'UNSCHEDULED'] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];
export const INTERVAL_PERIODS = ['DAY', 'WEEK', 'MONTH', 'YEAR'] as const;
export type IntervalPeriod = (typeof INTERVAL_PERIODS)[number];

export interface SubscriptionInterval {
  period: IntervalPeriod;
  frequency: number;
}

export interface Subscription {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  paymentMethodId: string;
  sessionId: string | null;
  customerId: string | null;
  currency: string;
  reference: string | null;
  description: string | null;
  state: SubscriptionState;
  statusReason: string | null;
  type: SubscriptionType;
  /** YYYY-MM-DD; no charge after this day. */
  expiryDate: string | null;
  /** Only for SCHEDULED subscriptions. */
  interval: SubscriptionInterval | null;
  /** Agreed amount set by PATCH (minor units); kept, not part of the wire record. */
  amount: number | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * activate: the CIT session completed; invalidate: the payment method can no longer be used;
 * disable: the merchant ended it (DELETE); update: PATCH; charge: MIT or billing creates a payment;
 * reinstate: the account updater gave the expired card a new expiry (only INVALID for PAYMENT_METHOD_EXPIRED).
 */
export type SubscriptionAction = 'activate' | 'invalidate' | 'disable' | 'update' | 'charge' | 'reinstate';

/** state × action → next state; a missing entry is a refusal naming the current state. */
export const SUBSCRIPTION_TRANSITIONS: Record<SubscriptionState, Partial<Record<SubscriptionAction, SubscriptionState>>> = {
  PENDING: { activate: 'ACTIVE', invalidate: 'INVALID', disable: 'DISABLED' },
  ACTIVE: { update: 'ACTIVE', charge: 'ACTIVE', invalidate: 'INVALID', disable: 'DISABLED' },
  INVALID: { disable: 'DISABLED', reinstate: 'ACTIVE' },
  // DELETE twice answers the same: the subscription is disabled.
  DISABLED: { disable: 'DISABLED' },
};

export function nextSubscriptionState(current: SubscriptionState, action: SubscriptionAction): SubscriptionState | null {
  return SUBSCRIPTION_TRANSITIONS[current][action] ?? null;
}

/** Why a subscription's payment method can no longer be charged. */
export type PaymentMethodUnusable = 'PAYMENT_METHOD_DELETED' | 'PAYMENT_METHOD_EXPIRED';

/**
 * The `statusReason` for a payment method that cannot be charged at `nowMs`, or null when it can.
 * A card is valid through its expiry day (the last day of its expiry month, UTC); wallets have none.
 */
export function paymentMethodUnusable(paymentMethod: { expiry: string | null; deletedAt: string | null } | null, nowMs: number): PaymentMethodUnusable | null {
  if (!paymentMethod || paymentMethod.deletedAt) return 'PAYMENT_METHOD_DELETED';
  if (paymentMethod.expiry && paymentMethod.expiry < new Date(nowMs).toISOString().slice(0, 10)) return 'PAYMENT_METHOD_EXPIRED';
  return null;
}

/** The last day a subscription may be charged has passed (dates compared as YYYY-MM-DD in UTC). */
export function isPastExpiry(subscription: Pick<Subscription, 'expiryDate'>, nowMs: number): boolean {
  if (!subscription.expiryDate) return false;
  return new Date(nowMs).toISOString().slice(0, 10) > subscription.expiryDate;
}
