/**
 * The Clearhaus fake's parameter rules: each operation's form checked against the regexes and
 * rules of clearhaus.md §2.1 (authorization, methods `card` and `moto`, 3-D Secure input, series),
 * §2.2 (capture), §2.3 (refund), §2.5 (credit), §2.10 (currencies) and §4.2 (text on statement).
 * Rules that need the fake's state (which authorization a series refers to, what is left to
 * capture) are in state.ts. A violation throws a Rejection naming the parameter, with the closest
 * documented code: 40110 card number, 40120 CSC, 40130 expiry, 40135 expired, 40140 currency,
 * 40150 text on statement, 40000 everything else.
 */
import net from 'node:net';
import { type Form, Rejection } from './wire.js';

/** §2.10: Clearhaus's currency table (website/content/currencies.md); exponent 2 unless listed. */
const EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const EXPONENT_2 =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK ' +
  'DKK DOP DZD EEK EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT ' +
  'LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRO MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN ' +
  'QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD STD STN SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VEF WST ' +
  'XCD YER ZAR ZMW ZWG';
export const CURRENCY_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...EXPONENT_2.split(' ').map((code) => [code, 2] as const),
  ...EXPONENT_0.split(' ').map((code) => [code, 0] as const),
  ...EXPONENT_3.split(' ').map((code) => [code, 3] as const),
]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isTransactionId = (id: string) => UUID.test(id);

/** Parameters that were removed from the API (§2.1, §2.1.1); sending them is a bug of the caller. */
const REMOVED = ['recurring', 'card[number]', 'card[pares]', 'threed_secure[pares]'];
/** §2.1: the payment-method dictionaries. The fake implements `card` and `moto`. */
const METHODS = ['card', 'moto', 'applepay', 'googlepay', 'mobilepayonline', 'token', 'clicktopay', 'vipps'] as const;

export type Initiator = 'cardholder' | 'merchant';
export type SeriesType = 'recurring' | 'unscheduled';
export type SeriesInput = { role: 'none' } | { role: 'first'; type: SeriesType } | { role: 'subsequent'; previousId: string };

export interface CardInput {
  pan: string;
  expireMonth: string;
  expireYear: string;
  csc?: string;
}

export interface ThreeDSecureInput {
  form: 'ares' | 'rreq' | 'raw';
  version?: string;
  status?: string;
}

export interface AuthorizationInput {
  amount: number;
  currency: string;
  ip?: string;
  reference?: string;
  textOnStatement?: string;
  method: 'card' | 'moto';
  card: CardInput;
  threeDSecure?: ThreeDSecureInput;
  initiator: Initiator;
  credentialOnFile?: 'store' | 'use';
  series: SeriesInput;
  scaExemption?: string;
}

export interface FollowUpInput {
  amount?: number;
  textOnStatement?: string;
}

export interface CreditInput {
  amount: number;
  currency: string;
  card: CardInput & { name?: string };
  reference?: string;
  textOnStatement?: string;
}

// --- small readers -------------------------------------------------------------------------------

const invalid = (key: string, rule: string, code = 40000) => new Rejection(code, `parameter '${key}' is invalid: ${rule}`);

function required(form: Form, key: string): string {
  const value = form[key];
  if (value === undefined) throw new Rejection(40000, `parameter '${key}' is required`);
  return value;
}

/** The value of `key` when present, checked against `pattern` (whole value). */
function optional(form: Form, key: string, pattern: RegExp, code = 40000): string | undefined {
  const value = form[key];
  if (value !== undefined && !pattern.test(value)) throw invalid(key, `must match ${pattern.source}`, code);
  return value;
}

function oneOf<T extends string>(form: Form, key: string, values: readonly T[]): T | undefined {
  const value = form[key];
  if (value !== undefined && !(values as readonly string[]).includes(value)) throw invalid(key, `must be one of ${values.join(', ')}`);
  return value as T | undefined;
}

const hasKeyUnder = (form: Form, prefix: string) => Object.keys(form).some((key) => key.startsWith(prefix));

// --- shared parameters -------------------------------------------------------------------------

/** §2.1 `amount` `(0|[1-9][0-9]{,8})`, or `[1-9][0-9]{,8}` where zero is not allowed. */
function amount(form: Form, key: string, allowZero: boolean): number | undefined {
  const pattern = allowZero ? /^(0|[1-9][0-9]{0,8})$/ : /^[1-9][0-9]{0,8}$/;
  return optional(form, key, pattern) === undefined ? undefined : Number(form[key]);
}

/** §2.10: a code of Clearhaus's table, else 40140 (the live test host answers `invalid currency`). */
function currency(form: Form): string {
  const value = required(form, 'currency');
  if (!/^[A-Z]{3}$/.test(value) || !CURRENCY_EXPONENTS.has(value)) {
    throw new Rejection(40140, `invalid currency: parameter 'currency' ('${value}') is not in Clearhaus's currency table`);
  }
  return value;
}

/** §4.2: 2–22 printable ASCII; not all digits, not one repeated character, not a sequential run. 40150. */
export function checkTextOnStatement(value: string): void {
  const fail = (rule: string) => {
    throw invalid('text_on_statement', rule, 40150);
  };
  if (!/^[\x20-\x7E]{2,22}$/.test(value)) fail('must be 2 to 22 printable ASCII characters');
  if (/^[0-9]+$/.test(value)) fail('must not be all digits');
  if (/^(.)\1*$/.test(value)) fail('must not be a single repeated character');
  if (isSequential(value.toLowerCase())) fail('must not be a sequential run of characters such as "abc"');
}

function isSequential(text: string): boolean {
  const steps = new Set<number>();
  for (let i = 1; i < text.length; i++) steps.add(text.charCodeAt(i) - text.charCodeAt(i - 1));
  return steps.size === 1 && (steps.has(1) || steps.has(-1));
}

function textOnStatement(form: Form): string | undefined {
  const value = form.text_on_statement;
  if (value !== undefined) checkTextOnStatement(value);
  return value;
}

function reference(form: Form): string | undefined {
  return optional(form, 'reference', /^[\x20-\x7E]{1,30}$/);
}

/** §2.1 `ip` `[0-9.a-fA-F:]{3,45}`, and a valid IPv4 or IPv6 address. */
function ip(form: Form): string | undefined {
  const value = optional(form, 'ip', /^[0-9.a-fA-F:]{3,45}$/);
  if (value !== undefined && net.isIP(value) === 0) throw invalid('ip', 'must be a valid IPv4 or IPv6 address');
  return value;
}

// --- cards ---------------------------------------------------------------------------------------

/**
 * `<method>[pan|expire_month|expire_year]`: pan `[0-9]{12,19}` (40110), month `[0-9]{2}` and a
 * real month (40130), year `20[0-9]{2}` for `card`, `[0-9]{4}` for `moto` (40130); a card whose
 * expiry month has passed is 40135 [INFERENCE: the table's "Card expired"].
 */
function cardFields(form: Form, prefix: string, yearPattern: RegExp, nowMs: number): CardInput {
  const pan = required(form, `${prefix}[pan]`);
  if (!/^[0-9]{12,19}$/.test(pan)) throw invalid(`${prefix}[pan]`, 'must be 12 to 19 digits', 40110);
  const expireMonth = required(form, `${prefix}[expire_month]`);
  if (!/^[0-9]{2}$/.test(expireMonth) || Number(expireMonth) < 1 || Number(expireMonth) > 12) {
    throw invalid(`${prefix}[expire_month]`, 'must be two digits 01 to 12', 40130);
  }
  const expireYear = required(form, `${prefix}[expire_year]`);
  if (!yearPattern.test(expireYear)) throw invalid(`${prefix}[expire_year]`, `must match ${yearPattern.source}`, 40130);
  const now = new Date(nowMs);
  if (Number(expireYear) * 12 + Number(expireMonth) < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) {
    throw new Rejection(40135, `card expired: ${prefix}[expire_month]/${prefix}[expire_year] ${expireMonth}/${expireYear} has passed`);
  }
  return { pan, expireMonth, expireYear };
}

/** §2.1: exactly one payment-method dictionary; the fake speaks `card` and `moto`. */
function paymentMethod(form: Form): 'card' | 'moto' {
  const used = METHODS.filter((method) => hasKeyUnder(form, `${method}[`));
  if (used.length !== 1) {
    throw new Rejection(40000, `exactly one payment method is required (${METHODS.join(', ')}); got ${used.length === 0 ? 'none' : used.join(' and ')}`);
  }
  const method = used[0]!;
  if (method !== 'card' && method !== 'moto') throw new Rejection(40000, `payment method '${method}' is not supported by this fake (card and moto only)`);
  return method;
}

/** §2.1.1: `card[3dsecure][v2]` with exactly one of `ares`, `rreq` or `raw[...]`. */
function threeDSecure(form: Form): ThreeDSecureInput | undefined {
  if (!hasKeyUnder(form, 'card[3dsecure]')) return undefined;
  const stray = Object.keys(form).find((key) => key.startsWith('card[3dsecure]') && !key.startsWith('card[3dsecure][v2]'));
  if (stray !== undefined) throw new Rejection(40000, `parameter '${stray}' is not supported: only card[3dsecure][v2] exists (3-D Secure v1 was removed)`);
  const forms = (['ares', 'rreq', 'raw'] as const).filter((kind) => hasKeyUnder(form, `card[3dsecure][v2][${kind}]`));
  if (forms.length !== 1) throw new Rejection(40000, 'card[3dsecure][v2] takes exactly one of [ares], [rreq] or [raw][...]');
  const kind = forms[0]!;
  if (kind === 'raw') return rawThreeDSecure(form);
  const key = `card[3dsecure][v2][${kind}]`;
  let message: unknown;
  try {
    message = JSON.parse(required(form, key));
  } catch {
    throw invalid(key, 'must be the whole 3-D Secure message as a JSON string');
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalid(key, 'must be a JSON object');
  const { messageVersion, transStatus } = message as Record<string, unknown>;
  return {
    form: kind,
    version: typeof messageVersion === 'string' ? messageVersion : undefined,
    status: typeof transStatus === 'string' ? transStatus : undefined,
  };
}

function rawThreeDSecure(form: Form): ThreeDSecureInput {
  const key = (field: string) => `card[3dsecure][v2][raw][${field}]`;
  optional(form, key('eci'), /^[0-9]{2}$/);
  optional(form, key('av'), /^[A-Za-z0-9+/]{27}=?$|^[A-Za-z0-9+/]{28}$/);
  optional(form, key('authentication_type'), /^[0-9]{2}$/);
  optional(form, key('ds_trans_id'), UUID);
  oneOf(form, key('message_type'), ['ARes', 'RReq']);
  const status = optional(form, key('trans_status'), /^[A-Z]$/);
  const version = optional(form, key('message_version'), /^2[.][0-9][.][0-9]$/);
  return { form: 'raw', version, status };
}

// --- series --------------------------------------------------------------------------------------

/** §2.1 series rules: `series[type]` xor `series[previous][...]`, neither with `sca_exemption`. */
function series(form: Form): SeriesInput {
  const type = oneOf(form, 'series[type]', ['recurring', 'unscheduled'] as const);
  const hasPrevious = hasKeyUnder(form, 'series[previous]');
  if (type !== undefined && hasPrevious) throw new Rejection(40000, "parameters 'series[type]' and 'series[previous]' are mutually exclusive");
  if ((type !== undefined || hasPrevious) && form.sca_exemption !== undefined) {
    throw new Rejection(40000, "parameter 'sca_exemption' cannot be combined with 'series'");
  }
  if (type !== undefined) return { role: 'first', type };
  if (!hasPrevious) return { role: 'none' };
  if (hasKeyUnder(form, 'series[previous][mastercard]') || hasKeyUnder(form, 'series[previous][visa]')) {
    throw new Rejection(40200, "raw scheme references (series[previous][mastercard|visa]) need Clearhaus's explicit approval, which this merchant lacks");
  }
  const previousId = required(form, 'series[previous][id]');
  if (!UUID_V4.test(previousId)) throw invalid('series[previous][id]', 'must be a UUIDv4');
  return { role: 'subsequent', previousId };
}

/** Subsequent-in-series, `initiator` and `credential_on_file` rules of §2.1 and the moto notice. */
function initiation(form: Form, method: 'card' | 'moto', seriesInput: SeriesInput) {
  const initiatorParam = oneOf(form, 'initiator', ['cardholder', 'merchant'] as const);
  const credentialParam = oneOf(form, 'credential_on_file', ['store', 'use'] as const);
  if (method === 'moto') {
    if (hasKeyUnder(form, 'series[')) throw new Rejection(40000, "parameter 'series' is not supported with payment method moto");
    if (credentialParam !== undefined) throw new Rejection(40000, "parameter 'credential_on_file' is not supported with payment method moto");
    if (initiatorParam === 'merchant') throw new Rejection(40000, "parameter 'initiator' cannot be 'merchant' with payment method moto");
  }
  if (seriesInput.role === 'subsequent') {
    if (form['card[csc]'] !== undefined) throw new Rejection(40000, "parameter 'card[csc]' must not be sent on a subsequent-in-series authorization");
    if (form['card[3dsecure][v2][rreq]'] !== undefined) {
      throw new Rejection(40000, "parameter 'card[3dsecure][v2][rreq]' must not be sent on a subsequent-in-series authorization");
    }
    if (initiatorParam === 'cardholder') throw new Rejection(40000, "parameter 'initiator' cannot be 'cardholder' on a subsequent-in-series authorization");
  }
  const initiator: Initiator = initiatorParam ?? (seriesInput.role === 'subsequent' ? 'merchant' : 'cardholder');
  if (credentialParam === 'store' && initiator === 'merchant') {
    throw new Rejection(40000, "parameter 'credential_on_file' cannot be 'store' when 'initiator' is 'merchant'");
  }
  const credentialOnFile = credentialParam ?? (initiator === 'merchant' ? 'use' : seriesInput.role === 'first' ? 'store' : undefined);
  return { initiator, credentialOnFile };
}

// --- operations ----------------------------------------------------------------------------------

function refuseRemoved(form: Form): void {
  const removed = Object.keys(form).find((key) => REMOVED.includes(key));
  if (removed !== undefined) throw new Rejection(40000, `parameter '${removed}' was removed from the API`);
}

/** §2.1: `POST /authorizations`. `trusted`: the (signed) request may leave out `card[csc]`. */
export function validateAuthorization(form: Form, context: { trusted: boolean; nowMs: number }): AuthorizationInput {
  refuseRemoved(form);
  const value = amount(form, 'amount', true);
  if (value === undefined) throw new Rejection(40000, "parameter 'amount' is required");
  const input = { amount: value, currency: currency(form), ip: ip(form), reference: reference(form), textOnStatement: textOnStatement(form) };
  const scaExemption = oneOf(form, 'sca_exemption', ['low_value_payment', 'secure_corporate_payment', 'transaction_risk_analysis']);
  const method = paymentMethod(form);
  const seriesInput = series(form);
  const { initiator, credentialOnFile } = initiation(form, method, seriesInput);
  if (method === 'moto') {
    return { ...input, method, card: cardFields(form, 'moto', /^[0-9]{4}$/, context.nowMs), initiator, series: seriesInput, scaExemption };
  }
  const card = cardFields(form, 'card', /^20[0-9]{2}$/, context.nowMs);
  const csc = optional(form, 'card[csc]', /^[0-9]{3}$/, 40120);
  if (csc === undefined && seriesInput.role !== 'subsequent' && !context.trusted) {
    throw new Rejection(40000, "parameter 'card[csc]' is required: only a trusted partner may leave it out of a signed request");
  }
  return {
    ...input,
    method,
    card: { ...card, csc },
    threeDSecure: threeDSecure(form),
    initiator,
    credentialOnFile,
    series: seriesInput,
    scaExemption,
  };
}

/** §2.2 `POST /authorizations/:id/captures`: optional positive amount, text on statement, travel data. */
export function validateCapture(form: Form): FollowUpInput {
  const travel = ['travel[car][pick_up_date]', 'travel[flight][departure_date]', 'travel[lodging][check_in_date]'].filter((key) => form[key] !== undefined);
  if (travel.length > 1) throw new Rejection(40000, `at most one travel type per capture; got ${travel.join(', ')}`);
  for (const key of travel) optional(form, key, /^20[0-9]{2}-[0-9]{2}-[0-9]{2}$/);
  return validateRefund(form);
}

/** §2.3 `POST /authorizations/:id/refunds`: optional positive amount and text on statement. */
export function validateRefund(form: Form): FollowUpInput {
  oneOf(form, 'marketplace[interregional_retailer]', ['true', 'false']);
  return { amount: amount(form, 'amount', false), textOnStatement: textOnStatement(form) };
}

/** §2.5 `POST /credits`. */
export function validateCredit(form: Form, nowMs: number): CreditInput {
  refuseRemoved(form);
  const value = amount(form, 'amount', false);
  if (value === undefined) throw new Rejection(40000, "parameter 'amount' is required");
  const card = cardFields(form, 'card', /^20[0-9]{2}$/, nowMs);
  const csc = optional(form, 'card[csc]', /^[0-9]{3}$/, 40120);
  const name = optional(form, 'card[name]', /^[A-Za-z0-9 ]{1,30}$/);
  return { amount: value, currency: currency(form), card: { ...card, csc, name }, reference: reference(form), textOnStatement: textOnStatement(form) };
}

/** The Luhn check (the test host accepts PANs failing it, §4.5). */
export function luhnValid(pan: string): boolean {
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let digit = Number(pan[pan.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}
