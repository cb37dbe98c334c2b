/**
 * The Clearhaus fake's parameter rules: each operation's form checked against the regexes and
 * rules of clearhaus.md §2.1 (authorization, methods `card` and `moto`, 3-D Secure input, series),
 * §2.2 (capture), §2.3 (refund), §2.5 (credit), §2.10 (currencies) and §4.2 (text on statement).
 * Rules that need the fake's state (which authorization a series refers to, what is left to
 * capture) are in state.ts. A violation throws a Rejection naming the parameter, with the closest
 * documented code: 40110 card number, 40120 CSC, 40130 expiry, 40135 expired, 40140 currency,
 * 40150 text on statement, 40300 a malformed 3-D Secure result [INFERENCE, 3dsecure-io.md §4],
 * 40000 everything else.
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

/**
 * A `card[3dsecure][v2]` result as it reached Clearhaus (kept on the authorization record, so tests
 * can assert exactly what was sent). `version` and `transStatus` are what the answer echoes as
 * `3dsecure {version, status}`.
 */
export type ThreeDSecureInput =
  | {
      /** `card[3dsecure][v2][ares]` or `[rreq]`: the whole message, a JSON string. */
      kind: 'ares' | 'rreq';
      /** The form value exactly as received (form-decoded), not re-serialised. */
      message: string;
      messageType: 'ARes' | 'RReq';
      /** Its `messageVersion`. */
      version: string;
      transStatus: string;
    }
  | {
      /** `card[3dsecure][v2][raw][...]`. */
      kind: 'raw';
      /** Every `card[3dsecure][v2][raw][<name>]` received, by `<name>` (`eci`, `av`, `trans_status`, ...). */
      message: Record<string, string>;
      messageType: 'ARes' | 'RReq';
      /** `message_version`. */
      version: string;
      /** `trans_status`. */
      transStatus: string;
    };

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

// --- 3-D Secure ----------------------------------------------------------------------------------

const THREEDS = 'card[3dsecure][v2]';
const THREEDS_FORMS = ['ares', 'rreq', 'raw'] as const;
/** ARes transStatus values that mean "not finished": the RReq must be sent instead (3dsecure-io.md §4). */
const UNFINISHED = new Set(['C', 'D']);
/** Mastercard raw results that need `eci` and `av` (clearhaus.md §2.1.1). */
const MASTERCARD_AUTHENTICATED = new Set(['Y', 'A', 'I', 'U']);
/** §2.1.1 `raw[av]`: base64, exactly 28 characters (a 20-byte CAVV/AAV is 27 characters and one `=`). */
const BASE64_28 = /^(?:[A-Za-z0-9+/]{28}|[A-Za-z0-9+/]{27}=|[A-Za-z0-9+/]{26}==)$/;

/** Malformed or inconsistent 3-D Secure input: 40300 "3-D Secure problem" [INFERENCE, 3dsecure-io.md §4 and §5 item 35]. */
const threeDSProblem = (key: string, rule: string) => new Rejection(40300, `parameter '${key}' is invalid: ${rule}`);

/** The fake's scheme of a PAN, for the raw requirements: Visa starts with 4, Mastercard with 5 or 2. */
const schemeOf = (pan: string) => (pan.startsWith('4') ? 'Visa' : pan.startsWith('5') || pan.startsWith('2') ? 'Mastercard' : undefined);

/**
 * clearhaus.md §2.1.1 and 3dsecure-io.md §4, §5 items 30–32: `card[3dsecure][v2]` with at most one
 * of `[ares]`, `[rreq]` or `[raw][...]` (more than one, or none of them: 40000). The rest is 40300:
 *   ares, rreq   the whole message as a JSON object whose `messageType` is `ARes` / `RReq`; kept as
 *                the exact string received. No ARes with transStatus C or D (send the RReq)
 *                [INFERENCE, §4]. Its `messageVersion` and `transStatus` must be strings [INFERENCE:
 *                every EMV ARes/RReq carries them, and the answer echoes them]. Neither the PAN
 *                (an ARes carries none) nor the amount is cross-checked.
 *   raw          eci `[0-9]{2}`, av base64 of exactly 28 characters, trans_status `[A-Z]`,
 *                message_version `2[.][0-9][.][0-9]`, message_type `ARes|RReq`, authentication_type
 *                `[0-9]{2}` (optional), ds_trans_id a UUIDv4. eci and av are required for Visa, and for
 *                Mastercard when trans_status is Y, A, I or U; ds_trans_id for Mastercard.
 *                trans_status, message_version and message_type are required [INFERENCE: only
 *                authentication_type is marked optional]; a raw ARes with C or D is refused like the
 *                ARes itself [INFERENCE].
 * The RReq on a subsequent-in-series is refused by `initiation` (40000); the outcome of N and R
 * (40310) is the ledger's.
 */
function threeDSecure(form: Form, pan: string): ThreeDSecureInput | undefined {
  if (!hasKeyUnder(form, 'card[3dsecure]')) return undefined;
  const stray = Object.keys(form).find((key) => key.startsWith('card[3dsecure]') && !key.startsWith(`${THREEDS}[`));
  if (stray !== undefined) throw new Rejection(40000, `parameter '${stray}' is not supported: only card[3dsecure][v2] exists (3-D Secure v1 was removed)`);
  const given = THREEDS_FORMS.filter((kind) => (kind === 'raw' ? hasKeyUnder(form, `${THREEDS}[raw][`) : form[`${THREEDS}[${kind}]`] !== undefined));
  const exactlyOne = `${THREEDS} takes exactly one of [ares], [rreq] or [raw][...]`;
  if (given.length > 1) {
    throw new Rejection(40000, `parameters ${given.map((kind) => `'${THREEDS}[${kind}]'`).join(' and ')} cannot be combined: ${exactlyOne}`);
  }
  const kind = given[0];
  if (kind === undefined) {
    const unknown = Object.keys(form).find((key) => key.startsWith(THREEDS))!;
    throw new Rejection(40000, `parameter '${unknown}' is not supported: ${exactlyOne}`);
  }
  return kind === 'raw' ? rawThreeDSecure(form, pan) : messageThreeDSecure(form, kind);
}

/** `[ares]` / `[rreq]`: the 3DS Server's message, whole and as it was returned. */
function messageThreeDSecure(form: Form, kind: 'ares' | 'rreq'): ThreeDSecureInput {
  const key = `${THREEDS}[${kind}]`;
  const message = form[key]!;
  const messageType = kind === 'ares' ? 'ARes' : 'RReq';
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    throw threeDSProblem(key, `must be the whole ${messageType} as a JSON string`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw threeDSProblem(key, `must be the whole ${messageType}, a JSON object`);
  const fields = parsed as Record<string, unknown>;
  if (fields.messageType !== messageType) {
    throw threeDSProblem(key, `must be an ${messageType}; its messageType is ${JSON.stringify(fields.messageType) ?? 'missing'}`);
  }
  const { messageVersion: version, transStatus } = fields;
  if (typeof version !== 'string' || version === '') throw threeDSProblem(key, `the ${messageType} has no messageVersion`);
  if (typeof transStatus !== 'string' || transStatus === '') throw threeDSProblem(key, `the ${messageType} has no transStatus`);
  if (kind === 'ares' && UNFINISHED.has(transStatus)) {
    throw threeDSProblem(key, `an ARes with transStatus ${transStatus} is no result: send the RReq (${THREEDS}[rreq]) once authentication is done`);
  }
  return { kind, message, messageType, version, transStatus };
}

/** `[raw][...]`: the result's fields one by one (since 2026-07-27). */
function rawThreeDSecure(form: Form, pan: string): ThreeDSecureInput {
  const prefix = `${THREEDS}[raw][`;
  const key = (name: string) => `${prefix}${name}]`;
  const field = (name: string, pattern: RegExp, rule: string, requiredFor?: string): string | undefined => {
    const value = form[key(name)];
    if (value === undefined) {
      if (requiredFor !== undefined) throw new Rejection(40300, `parameter '${key(name)}' is required ${requiredFor}`);
      return undefined;
    }
    if (!pattern.test(value)) throw threeDSProblem(key(name), rule);
    return value;
  };
  const transStatus = field('trans_status', /^[A-Z]$/, 'must match [A-Z]', 'in a raw 3-D Secure result')!;
  const version = field('message_version', /^2[.][0-9][.][0-9]$/, 'must match 2[.][0-9][.][0-9]', 'in a raw 3-D Secure result')!;
  const messageType = field('message_type', /^(ARes|RReq)$/, 'must be ARes or RReq', 'in a raw 3-D Secure result') as 'ARes' | 'RReq';
  const scheme = schemeOf(pan);
  const needsAuthentication =
    scheme === 'Visa'
      ? 'for Visa'
      : scheme === 'Mastercard' && MASTERCARD_AUTHENTICATED.has(transStatus)
        ? `for Mastercard when trans_status is ${transStatus}`
        : undefined;
  field('eci', /^[0-9]{2}$/, 'must match [0-9]{2}', needsAuthentication);
  field('av', BASE64_28, 'must be base64 of exactly 28 characters', needsAuthentication);
  field('authentication_type', /^[0-9]{2}$/, 'must match [0-9]{2}');
  field('ds_trans_id', UUID_V4, 'must be a UUIDv4', scheme === 'Mastercard' ? 'for Mastercard' : undefined);
  if (messageType === 'ARes' && UNFINISHED.has(transStatus)) {
    throw threeDSProblem(key('trans_status'), `an ARes with transStatus ${transStatus} is no result: send the RReq's fields once authentication is done`);
  }
  const message = Object.fromEntries(
    Object.entries(form)
      .filter(([name]) => name.startsWith(prefix) && name.endsWith(']'))
      .map(([name, value]) => [name.slice(prefix.length, -1), value]),
  );
  return { kind: 'raw', message, messageType, version, transStatus };
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
    threeDSecure: threeDSecure(form, card.pan),
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
