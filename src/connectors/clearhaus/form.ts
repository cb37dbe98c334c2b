/**
 * Clearhaus request bodies (clearhaus.md §1.4): `application/x-www-form-urlencoded` with bracket keys
 * (`card[pan]=…`), and the rules each optional field must meet before it is sent.
 *
 * Encoding: brackets go raw, as in the docs' curl examples and their signing example (vector 1 of
 * clearhaus.md §4.4); each key segment and each value is percent-encoded by `encodeURIComponent`
 * (space → %20, `+` → %2B). The fields go in the fixed order of the builders below, so one request
 * always gives the same bytes — the bytes that are signed are exactly the bytes that are sent.
 */
import { isIP } from 'node:net';

/** One `key=value` pair; `key` may hold brackets (`series[previous][id]`). */
export type FormField = readonly [key: string, value: string];

/** `card[pan]` → `card[pan]`, each segment between brackets percent-encoded, the brackets themselves raw. */
const encodeKey = (key: string): string => key.replace(/[^[\]]+/g, (segment) => encodeURIComponent(segment));

/** The body: the fields in the order given, joined by `&`. No fields → the empty body (a void). */
export function encodeForm(fields: readonly FormField[]): string {
  return fields.map(([key, value]) => `${encodeKey(key)}=${encodeURIComponent(value)}`).join('&');
}

// ---- Field rules (the docs' regexes; a field that fails its rule is left out, never sent to be refused)

const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;

/** Every character one code point after (or every one before) the previous: "abc", "123", "cba". */
function isSequentialRun(text: string): boolean {
  const steps = new Set<number>();
  for (let i = 1; i < text.length; i++) steps.add(text.charCodeAt(i) - text.charCodeAt(i - 1));
  return steps.size === 1 && (steps.has(1) || steps.has(-1));
}

/**
 * `text_on_statement`: 2–22 printable ASCII, and not all digits, not one repeated character, not a
 * sequential run (clearhaus.md §4.2; a violation would be declined 40150). Descending runs are
 * refused too: the docs only give "abc", and leaving a doubtful text out costs nothing (the
 * account's descriptor applies).
 */
export function isValidTextOnStatement(text: string | null | undefined): text is string {
  if (text == null || text.length < 2 || text.length > 22 || !PRINTABLE_ASCII.test(text)) return false;
  if (/^[0-9]+$/.test(text)) return false;
  if (new Set(text).size === 1) return false;
  return !isSequentialRun(text);
}

/** The first statement text that qualifies, in the order given (the payment's own, then the agreement's), or null. */
export function pickTextOnStatement(...candidates: Array<string | null | undefined>): string | null {
  return candidates.find(isValidTextOnStatement) ?? null;
}

/** `ip`: a valid IPv4 or IPv6 address within the docs' `[0-9.a-fA-F:]{3,45}`; anything else is left out. */
export function cardholderIp(ip: string | null | undefined): string | null {
  if (ip == null || !/^[0-9.a-fA-F:]{3,45}$/.test(ip)) return null;
  return isIP(ip) === 0 ? null : ip;
}

export const MAX_REFERENCE_LENGTH = 30;

/**
 * `reference` (`[\x20-\x7E]{1,30}`) for one of our ids. Transaction ids are 11 Crockford characters
 * (src/shared/ids.ts), sent unchanged. Should an id ever be longer or hold other characters, the
 * reference is derived deterministically: its printable ASCII characters without dashes, and of
 * those the last 30 (the random end of a UUID rather than its time prefix).
 */
export function referenceFor(id: string): string | null {
  if (id.length >= 1 && id.length <= MAX_REFERENCE_LENGTH && PRINTABLE_ASCII.test(id)) return id;
  const kept = id.replace(/[^\x20-\x7E]|-/g, '');
  return kept.length === 0 ? null : kept.slice(-MAX_REFERENCE_LENGTH);
}

/** `card[name]` of a credit: `[A-Za-z0-9 ]{1,30}`, else left out. */
export function cardName(name: string | null | undefined): string | null {
  return name != null && /^[A-Za-z0-9 ]{1,30}$/.test(name) ? name : null;
}

/** Clearhaus amounts: `(0|[1-9][0-9]{,8})`, so at most 999 999 999 minor units. */
export const MAX_AMOUNT = 999_999_999;

// ---- Bodies

export interface CardFields {
  pan: string;
  expiryMonth: number;
  expiryYear: number;
  /** Sent only when present (a subsequent-in-series, a MOTO and a credit never carry one). */
  csc?: string | null;
}

/** `06` for June. */
export const expireMonth = (month: number): string => String(month).padStart(2, '0');
/** Four digits; a two-digit year is read as 20xx. */
export const expireYear = (year: number): string => String(year < 100 ? 2000 + year : year);

/** The payment method dictionary: `card` (CIT, MIT) or `moto` (mail or telephone order, no CSC). */
export type PaymentMethod = 'card' | 'moto';

function methodFields(method: PaymentMethod, card: CardFields): FormField[] {
  const fields: FormField[] = [
    [`${method}[pan]`, card.pan],
    [`${method}[expire_month]`, expireMonth(card.expiryMonth)],
    [`${method}[expire_year]`, expireYear(card.expiryYear)],
  ];
  if (method === 'card' && card.csc) fields.push(['card[csc]', card.csc]);
  return fields;
}

export interface AuthorizationForm {
  amount: number;
  currency: string;
  reference: string | null;
  textOnStatement: string | null;
  ip: string | null;
  /** Left out when null (Clearhaus's default: `merchant` for a subsequent-in-series, else `cardholder`). */
  initiator: 'cardholder' | 'merchant' | null;
  credentialOnFile: 'store' | 'use' | null;
  /** First-in-series: `series[type]`. */
  seriesType: 'recurring' | 'unscheduled' | null;
  /** Subsequent-in-series: `series[previous][id]`, the latest approved authorization of the series. */
  previousAuthorizationId: string | null;
  method: PaymentMethod;
  card: CardFields;
  /** `card[3dsecure][v2][ares|rreq]`: the 3-D Secure message as the 3DS Server sent it (3dsecure-io.md §4). */
  threeDSecure: { kind: 'ares' | 'rreq'; message: string } | null;
}

/**
 * `POST /authorizations`, in this order: amount, currency, reference, text_on_statement, ip,
 * initiator, credential_on_file, series[type], series[previous][id], then the method's pan,
 * expire_month, expire_year and csc (the order of the docs' signing example, which it extends), and
 * the 3-D Secure message last.
 */
export function authorizationFields(form: AuthorizationForm): FormField[] {
  const fields: FormField[] = [
    ['amount', String(form.amount)],
    ['currency', form.currency],
  ];
  if (form.reference !== null) fields.push(['reference', form.reference]);
  if (form.textOnStatement !== null) fields.push(['text_on_statement', form.textOnStatement]);
  if (form.ip !== null) fields.push(['ip', form.ip]);
  if (form.initiator !== null) fields.push(['initiator', form.initiator]);
  if (form.credentialOnFile !== null) fields.push(['credential_on_file', form.credentialOnFile]);
  if (form.seriesType !== null) fields.push(['series[type]', form.seriesType]);
  if (form.previousAuthorizationId !== null) fields.push(['series[previous][id]', form.previousAuthorizationId]);
  fields.push(...methodFields(form.method, form.card));
  if (form.threeDSecure !== null) fields.push([`${form.method}[3dsecure][v2][${form.threeDSecure.kind}]`, form.threeDSecure.message]);
  return fields;
}

/** `POST /authorizations/:id/captures`: amount (always explicit), then text_on_statement. */
export function captureFields(form: { amount: number; textOnStatement: string | null }): FormField[] {
  const fields: FormField[] = [['amount', String(form.amount)]];
  if (form.textOnStatement !== null) fields.push(['text_on_statement', form.textOnStatement]);
  return fields;
}

/** `POST /authorizations/:id/refunds`: amount (always explicit: without it Clearhaus refunds all that remains). */
export function refundFields(form: { amount: number }): FormField[] {
  return [['amount', String(form.amount)]];
}

export interface CreditForm {
  amount: number;
  currency: string;
  reference: string | null;
  textOnStatement: string | null;
  card: CardFields & { name: string | null };
}

/** `POST /credits`: amount, currency, reference, text_on_statement, card[pan|expire_month|expire_year], card[name]. */
export function creditFields(form: CreditForm): FormField[] {
  const fields: FormField[] = [
    ['amount', String(form.amount)],
    ['currency', form.currency],
  ];
  if (form.reference !== null) fields.push(['reference', form.reference]);
  if (form.textOnStatement !== null) fields.push(['text_on_statement', form.textOnStatement]);
  fields.push(...methodFields('card', { ...form.card, csc: null }));
  if (form.card.name !== null) fields.push(['card[name]', form.card.name]);
  return fields;
}
