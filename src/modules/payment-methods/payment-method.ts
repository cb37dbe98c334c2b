/**
 * Payment method: a stored card (number sealed in the vault) or a wallet, owned by one account
 * and optionally linked to a customer. Deleting keeps the row (transactions refer to it) but
 * hides it from every read.
 */
import { type CardObject, maskPan, twoDigitMonth, twoDigitYear } from './card.js';

export type PaymentMethodType = 'CARD' | 'VIPPS_MOBILEPAY' | 'APPLE_PAY' | 'GOOGLE_PAY' | 'KLARNA' | 'VIABILL';

/** What may be shown of a card: BIN, last four, length, expiry, scheme data. Never the full number. */
export interface CardDetails {
  /** The first 8 digits (6 in rows stored before INTERFACE §11.1 until the start-up upgrade rewrote them). */
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
  /** Enrolled in the account updater: the issuer's new expiry or reissued card replaces the stored one (cards only). */
  accountUpdatesEnabled: boolean;
  createdAt: string;
  deletedAt: string | null;
  /** Card-only display data (not on the wire record). */
  card: CardDetails | null;
  /** The card's series at its acquirer (Clearhaus `series[]`), once a payment stored it there; not on the wire. */
  series?: CardSeries | null;
}

/**
 * A stored card's series at the acquirer (INTERFACE §12.3): its type, the latest approved
 * authorization id (what the next merchant-initiated payment references) and the agreement it
 * lives under.
 */
export interface CardSeries {
  type: 'recurring' | 'unscheduled';
  reference: string;
  agreementId: string | null;
}

/** The masked number of a stored card (INTERFACE §11.1): `displayText` and `card.pan`. */
export const maskedNumber = (card: Pick<CardDetails, 'bin' | 'last4' | 'length'>): string => maskPan(card.bin, card.last4, card.length);

/**
 * The displayText of a method: the masked number of a card, whatever format the row was written
 * in (older rows kept "•••• 1111"); a wallet's stored name.
 */
export const displayTextOf = (paymentMethod: Pick<PaymentMethod, 'card' | 'displayText'>): string | null =>
  paymentMethod.card ? maskedNumber(paymentMethod.card) : paymentMethod.displayText;

/** The NotificationWebhook `card` field for a payment method; null for wallets. */
export function cardObject(paymentMethod: Pick<PaymentMethod, 'card'> | null): CardObject | null {
  const card = paymentMethod?.card;
  if (!card) return null;
  return {
    pan: maskedNumber(card),
    expireMonth: twoDigitMonth(card.expiryMonth),
    expireYear: twoDigitYear(card.expiryYear),
    par: card.par,
    Issuer: card.issuer,
    Scheme: card.scheme,
    Country: card.country,
    // Lower case on the wire (consumer | business | payouts, debit | credit | prepaid); older rows kept upper case.
    Segment: card.segment.toLowerCase(),
    Funding: card.funding.toLowerCase(),
  };
}
