/**
 * Pure card rules: Luhn, brand detection, masking, expiry. No I/O; the full card number only
 * passes through these functions and the vault (sealed), never into a record or a log.
 */
import type { FieldErrorCollector, FieldRule } from '../../shared/errors.js';

/** A card as it arrives on the wire (INTERFACE §7). */
export interface CardInput {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  cvc: string;
  holderName?: string | null | undefined;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Brand by IIN range, most specific first (Dankort 5019 sits inside the Maestro/Mastercard area). */
const BRANDS: ReadonlyArray<[RegExp, string]> = [
  [/^5019/, 'Dankort'],
  [/^4/, 'Visa'],
  [/^(5[1-5]|2(2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720))/, 'Mastercard'],
  [/^3[47]/, 'American Express'],
  [/^(5018|5020|5038|5893|6304|6759|676[1-3])/, 'Maestro'],
  [/^(6011|65|64[4-9])/, 'Discover'],
  [/^35(2[89]|[3-8])/, 'JCB'],
  [/^3(0[0-5]|[689])/, 'Diners Club'],
  [/^62/, 'UnionPay'],
];

export function detectBrand(pan: string): string {
  return BRANDS.find(([pattern]) => pattern.test(pan))?.[1] ?? 'Unknown';
}

/**
 * How many leading digits a masked number shows (INTERFACE §11.1): the first 8 of a card of 14 or
 * more digits, the first 6 of a shorter one, so that at least two digits stay hidden.
 */
export const maskedPrefixLength = (length: number): number => (length >= 14 ? 8 : 6);

/**
 * "41111111XXXX1111": the leading digits (see maskedPrefixLength), one X per hidden digit, the last
 * four; always `length` characters. `bin` holds the first digits the vault kept at storing time
 * (8, or 6 in rows stored before INTERFACE §11.1): never more of them are shown than it has.
 */
export function maskPan(bin: string, last4: string, length: number): string {
  const shown = bin.slice(0, Math.min(maskedPrefixLength(length), Math.max(0, length - 4)));
  return `${shown}${'X'.repeat(Math.max(0, length - shown.length - last4.length))}${last4}`;
}

/** The masked number of a full card number (displayText, card.pan); the number itself goes no further. */
export const maskCardNumber = (number: string): string => maskPan(number.slice(0, 8), number.slice(-4), number.length);

/** The first digits kept with a stored card (what maskPan may show of it). */
export const storedBin = (number: string): string => number.slice(0, 8);

/** "07": a card's expiry month as the two-digit string of the card object (INTERFACE §11.1). */
export const twoDigitMonth = (month: number): string => String(month).padStart(2, '0');

/** "35": a card's four-digit expiry year as its last two digits (INTERFACE §11.1). */
export const twoDigitYear = (year: number): string => String(year % 100).padStart(2, '0');

/** Last day of the expiry month as YYYY-MM-DD (a card is valid through the end of that month). */
export function expiryDate(month: number, year: number): string {
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(lastDay).padStart(2, '0')}`;
}

/**
 * Checks a card and adds failures to `errors` under `prefix` (e.g. "card"): number 12–19 digits
 * passing Luhn, expiry month 1–12 and year of four digits not in the past at `nowMs` (service
 * clock), CVC 3–4 digits (`cvcOptional`: may be absent, as on a card the issuer reissued). The
 * messages never repeat the number.
 */
export function validateCard(
  card: Omit<CardInput, 'cvc'> & { cvc?: string | null | undefined },
  prefix: string,
  nowMs: number,
  errors: FieldErrorCollector,
  options: { cvcOptional?: boolean; luhnExempt?: ReadonlySet<string> | undefined } = {},
): void {
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (typeof card.number !== 'string' || !/^\d{12,19}$/.test(card.number)) {
    errors.add(field('number'), 'regex', 'must be 12 to 19 digits');
  } else if (!luhnValid(card.number) && !options.luhnExempt?.has(card.number)) {
    errors.add(field('number'), 'regex', 'is not a valid card number (Luhn check failed)');
  }
  validateExpiry(card, prefix, nowMs, errors);
  const cvcAbsent = card.cvc === undefined || card.cvc === null;
  if (options.cvcOptional && cvcAbsent) return;
  if (typeof card.cvc !== 'string' || !/^\d{3,4}$/.test(card.cvc)) errors.add(field('cvc'), 'regex', 'must be 3 or 4 digits');
}

/** Expiry month 1–12 and year of four digits, not before the month of `nowMs` (service clock). */
export function validateExpiry(expiry: { expiryMonth: number; expiryYear: number }, prefix: string, nowMs: number, errors: FieldErrorCollector): void {
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const monthOk = Number.isInteger(expiry.expiryMonth) && expiry.expiryMonth >= 1 && expiry.expiryMonth <= 12;
  const yearOk = Number.isInteger(expiry.expiryYear) && expiry.expiryYear >= 1000 && expiry.expiryYear <= 9999;
  if (!monthOk) errors.add(field('expiryMonth'), boundRule(expiry.expiryMonth, 1, 12), 'must be an integer from 1 to 12');
  if (!yearOk) errors.add(field('expiryYear'), boundRule(expiry.expiryYear, 1000, 9999), 'must be an integer with four digits');
  if (monthOk && yearOk) {
    const now = new Date(nowMs);
    const year = now.getUTCFullYear();
    const month = now.getUTCMonth() + 1;
    if (expiry.expiryYear < year) errors.add(field('expiryYear'), `min:${year}`, 'the card has expired');
    else if (expiry.expiryYear === year && expiry.expiryMonth < month) errors.add(field('expiryMonth'), `min:${month}`, 'the card has expired');
  }
}

/** The contract rule an out-of-range integer breaks: `int`, `min:<low>` or `max:<high>`. */
function boundRule(value: unknown, low: number, high: number): FieldRule {
  if (!Number.isInteger(value)) return 'int';
  return (value as number) < low ? `min:${low}` : `max:${high}`;
}

/** The NotificationWebhook `card` object (INTERFACE §8); never the full number. */
export interface CardObject {
  pan: string;
  /** Two digits: "07". */
  expireMonth: string;
  /** Two digits: "35". */
  expireYear: string;
  par: string | null;
  Issuer: string | null;
  Scheme: string | null;
  Country: string | null;
  Segment: string | null;
  Funding: string | null;
}
