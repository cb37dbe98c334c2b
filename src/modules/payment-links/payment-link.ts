/**
 * Payment link: a shareable URL that opens the hosted payment window of one CIT session. The
 * session does the paying; the link follows it (PAID when the session completes with an approved
 * payment, EXPIRED when the session expires) unless the merchant cancels it first.
 */
export const PAYMENT_LINK_STATES = ['ACTIVE', 'PAID', 'CANCELLED', 'EXPIRED'] as const;
export type PaymentLinkState = (typeof PAYMENT_LINK_STATES)[number];

/** pay: its session completed; cancel: DELETE by the merchant; expire: its session expired. */
export type PaymentLinkEvent = 'pay' | 'cancel' | 'expire';

/** state × event → next state; anything missing is refused. Only an ACTIVE link moves. */
export const PAYMENT_LINK_TRANSITIONS: Record<PaymentLinkState, Partial<Record<PaymentLinkEvent, PaymentLinkState>>> = {
  ACTIVE: { pay: 'PAID', cancel: 'CANCELLED', expire: 'EXPIRED' },
  PAID: {},
  // DELETE twice answers the same: the link is cancelled.
  CANCELLED: { cancel: 'CANCELLED' },
  EXPIRED: {},
};

export function nextPaymentLinkState(current: PaymentLinkState, event: PaymentLinkEvent): PaymentLinkState | null {
  return PAYMENT_LINK_TRANSITIONS[current][event] ?? null;
}

export interface PaymentLink {
  id: string;
  accountId: string;
  sessionId: string;
  /** The session's public client key; the URL is the payment window of that key. */
  clientKey: string;
  pointOfSaleId: string;
  state: PaymentLinkState;
  amount: number;
  currency: string;
  reference: string | null;
  customerId: string | null;
  /** The approved transaction once PAID. */
  transactionId: string | null;
  expiresAt: string;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A link lives 60 days unless its body says otherwise (INTERFACE §11.2), and at most as long. */
export const PAYMENT_LINK_TIMEOUT_MINUTES = { default: 86_400, max: 86_400 } as const;
