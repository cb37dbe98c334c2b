/**
 * Payment method: a stored card (number sealed in the vault) or a wallet, owned by one account
 * and optionally linked to a customer. Deleting keeps the row (transactions refer to it) but
 * hides it from every read.
 */
import { type CardObject, maskPan } from './card.js';

export type PaymentMethodType = 'CARD' | 'VIPPS_MOBILEPAY' | 'APPLE_PAY' | 'GOOGLE_PAY' | 'KLARNA' | 'VIABILL';

/** What may be shown of a card: BIN, last four, length, expiry, scheme data. Never the full number. */
export interface CardDetails {
  bin: string;
  last4: string;
  length: number;
  expiryMonth: number;
  expiryYear: number;
  scheme: string;
  par: string;
  issuer: string;
  country: string;
  segment: string;
  funding: string;
}

export interface PaymentMethod {
  id: string;
  accountId: string;
  type: PaymentMethodType;
  /** The brand (`Visa`, `Mastercard`, ...) of a card; the wallet type otherwise. */
  subType: string | null;
  /** YYYY-MM-DD, last day of the expiry month; null for wallets. */
  expiry: string | null;
  displayText: string | null;
  holderName: string | null;
  customerId: string | null;
  createdAt: string;
  deletedAt: string | null;
  /** Card-only display data (not on the wire record). */
  card: CardDetails | null;
}

/** The NotificationWebhook `card` field for a payment method; null for wallets. */
export function cardObject(paymentMethod: Pick<PaymentMethod, 'card'> | null): CardObject | null {
  const card = paymentMethod?.card;
  if (!card) return null;
  return {
    pan: maskPan(card.bin, card.last4, card.length),
    expireMonth: card.expiryMonth,
    expireYear: card.expiryYear,
    par: card.par,
    Issuer: card.issuer,
    Scheme: card.scheme,
    Country: card.country,
    Segment: card.segment,
    Funding: card.funding,
  };
}
