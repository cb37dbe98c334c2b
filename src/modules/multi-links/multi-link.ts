/**
 * Multi-link (INTERFACE §11.3): a reusable link of the merchant. Every visit (or QR scan) starts
 * a new, independent CIT session from the link's settings and forwards the customer to that
 * session's payment window. The link itself moves no money and follows no session: it is ACTIVE
 * until the merchant deactivates it; sessions it started before live on.
 */
import type { OrderLine } from '../sessions/session.js';
import type { IntervalPeriod, SubscriptionType } from '../subscriptions/subscription.js';

export type { OrderLine } from '../sessions/session.js';

export const MULTI_LINK_STATES = ['ACTIVE', 'DEACTIVATED'] as const;
export type MultiLinkState = (typeof MULTI_LINK_STATES)[number];

/** deactivate: DELETE by the merchant. */
export type MultiLinkEvent = 'deactivate';

/** state × event → next state; anything missing is refused. DELETE twice answers the same. */
export const MULTI_LINK_TRANSITIONS: Record<MultiLinkState, Partial<Record<MultiLinkEvent, MultiLinkState>>> = {
  ACTIVE: { deactivate: 'DEACTIVATED' },
  DEACTIVATED: { deactivate: 'DEACTIVATED' },
};

export function nextMultiLinkState(current: MultiLinkState, event: MultiLinkEvent): MultiLinkState | null {
  return MULTI_LINK_TRANSITIONS[current][event] ?? null;
}

/** `paymentMethodType` values of INTERFACE §7: what `allowedPaymentMethods` may name. */
export const ALLOWED_PAYMENT_METHOD_TYPES = [
  'CARD',
  'VIPPS_MOBILEPAY',
  'MOBILEPAY_ONLINE',
  'APPLE_PAY',
  'GOOGLE_PAY',
  'SWISH',
  'VIABILL',
  'ANYDAY',
  'KLARNA',
] as const;

export const ORDER_LINE_TYPES = ['PHYSICAL', 'DISCOUNT', 'SHIPPING_FEE', 'SALES_TAX', 'DIGITAL', 'GIFT_CARD', 'STORE_CREDIT', 'SURCHARGE', 'OTHER'] as const;

/** The subscription every started session asks for (created when that session's payment succeeds). */
export interface MultiLinkSubscription {
  type: SubscriptionType;
  /** The expected recurring amount (§11.2 `subscription.amount`), recorded only. */
  amount: number | null;
  expiryDate: string | null;
  /** Only for SCHEDULED. */
  interval: { period: IntervalPeriod; frequency: number } | null;
  billingAgreement: { billingPlanId: string; nextChargeAt: string | null } | null;
}

export interface AgeVerification {
  minimumAge: number;
  country: string;
}

/**
 * Settings left out are null: a session started from the link then takes them from the point of
 * sale's hostedConfiguration, except the redirect and notification URLs, which stay unset.
 */
export interface MultiLink {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  state: MultiLinkState;
  amount: number;
  currency: string;
  /** Copied to every session (§11.2 allows `reference` on /multi-links); not part of the §11.3 record. */
  reference: string | null;
  subscription: MultiLinkSubscription | null;
  scaMode: string | null;
  /** Minutes each started session lives (1–120). */
  timeout: number | null;
  instantCapture: string | null;
  textOnStatement: string | null;
  attributes: Record<string, string> | null;
  reportFailure: boolean | null;
  reportExpired: boolean | null;
  dynamicAmount: boolean | null;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  retryUrl: string | null;
  returnUrl: string | null;
  allowedPaymentMethods: string[] | null;
  ageVerification: AgeVerification | null;
  orderLines: OrderLine[] | null;
  /** Effect key of the idempotent request that created it. */
  idempotencyKey: string | null;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}
