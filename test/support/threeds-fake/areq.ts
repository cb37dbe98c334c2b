/**
 * The AReq field rules of the 3DS fake (shared/acquirers/3dsecure-io.md §1.5 field tables, §5 item
 * 18), for the browser channel: what must be present (else Erro 201) and what each value must look
 * like (else Erro 203), `errorDetail` naming the element. Every element is a JSON string except
 * the booleans `browserJavascriptEnabled`/`browserJavaEnabled` and the arrays of 2.3.1. An element
 * present but empty or null is a format error (EMV: leave it out instead).
 *
 * Required here (BRW, payment authentication `messageCategory` 01):
 *   messageCategory 01|02, deviceChannel 02 (the fake serves the browser flow only), threeDSCompInd
 *   Y|N|U, threeDSRequestorAuthenticationInd 01–06|80–99, threeDSRequestorURL (≤2048),
 *   notificationURL (≤256; both https, or http on a loopback host: the tests run on plain HTTP),
 *   cardExpiryDate YYMM, cardholderName 2–45 (printable ASCII in 2.1.0/2.2.0) — scheme-required for
 *   Visa/Mastercard, so always required here;
 *   with messageCategory 01: acquirerBIN (≤11), acquirerMerchantID (≤35), mcc (4 digits),
 *   merchantCountryCode (3 digits, not 901–999), merchantName (≤40), purchaseAmount (digits,
 *   ≤48 — at least one [INFERENCE: the documented regex allows none]), purchaseCurrency (3 digits,
 *   not 955–964 or 999), purchaseExponent (one digit, and the ISO 4217 exponent of the currency),
 *   purchaseDate (yyyymmddhhmmss UTC, within the tolerance of the fake's clock, default 5 min);
 *   browserAcceptHeader, browserUserAgent (≤2048), browserLanguage (1–8; 2.3.1: when JS is enabled),
 *   browserJavascriptEnabled (boolean, 2.2.0+), acceptLanguage (2.3.1: array of strings);
 *   when JavaScript is enabled (always in 2.1.0, which has no browserJavascriptEnabled [INFERENCE,
 *   EMV 2.1.0]): browserJavaEnabled (boolean), browserColorDepth (1 4 8 15 16 24 32 48),
 *   browserScreenHeight/Width (1–6 digits), browserTZ (±1–4 digits).
 * Checked when present: threeDSRequestorChallengeInd (2.1.0: 01–04; 2.2.0: 01–09; 2.3.1: an array
 *   of those), transType, browserIP (IPv4/IPv6), email, bill/ship address country (3 digits) and
 *   state (≤3, needs the country), phones {cc, subscriber}, ds, decoupled fields (2.2.0+),
 *   recurringExpiry/Frequency (required with authenticationInd 02), messageExtension (≤10).
 * Unknown elements are ignored (3dsecure.io adds its own; clients send CRD fields along).
 */
import net from 'node:net';
import { badFormat, type Message, type MessageVersion, missing, urlProblem } from './wire.js';

export interface AReqRules {
  version: MessageVersion;
  nowMs: number;
  purchaseDateToleranceMs: number;
}

type Check = (value: string) => string | undefined;

const matches =
  (pattern: RegExp, rule: string): Check =>
  (value) =>
    pattern.test(value) ? undefined : rule;
const oneOf =
  (values: readonly string[]): Check =>
  (value) =>
    values.includes(value) ? undefined : `must be one of ${values.join(', ')}`;
const lengthBetween =
  (min: number, max: number): Check =>
  (value) =>
    value.length >= min && value.length <= max ? undefined : `must be ${min} to ${max} characters`;
const url =
  (max: number): Check =>
  (value) =>
    urlProblem(value, max);
const all =
  (...checks: Check[]): Check =>
  (value) => {
    for (const check of checks) {
      const problem = check(value);
      if (problem) return problem;
    }
    return undefined;
  };

/** A string element: undefined when absent and not required; 201 when required and absent; 203 when malformed. */
function text(areq: Message, field: string, required: boolean, check: Check): string | undefined {
  const value = areq[field];
  if (value === undefined) {
    if (required) throw missing(field);
    return undefined;
  }
  if (value === null || value === '') throw badFormat(field, 'must not be null or empty (leave the element out instead)');
  if (typeof value !== 'string') throw badFormat(field, `must be a JSON string, not ${Array.isArray(value) ? 'an array' : typeof value}`);
  const problem = check(value);
  if (problem) throw badFormat(field, problem);
  return value;
}

function bool(areq: Message, field: string, required: boolean): boolean | undefined {
  const value = areq[field];
  if (value === undefined) {
    if (required) throw missing(field);
    return undefined;
  }
  if (typeof value !== 'boolean') throw badFormat(field, 'must be a JSON boolean (true or false)');
  return value;
}

function stringArray(areq: Message, field: string, required: boolean, check: Check, maxItems = 99): string[] | undefined {
  const value = areq[field];
  if (value === undefined) {
    if (required) throw missing(field);
    return undefined;
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > maxItems) throw badFormat(field, `must be an array of 1 to ${maxItems} strings`);
  for (const item of value) {
    if (typeof item !== 'string') throw badFormat(field, 'must hold strings only');
    const problem = check(item);
    if (problem) throw badFormat(field, `items ${problem}`);
  }
  return value as string[];
}

/** ISO 4217 numeric codes whose exponent is not 2. */
const ISO_EXPONENTS: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    ['108', '152', '174', '262', '324', '352', '392', '410', '548', '600', '646', '704', '800', '940', '950', '952', '953'].map((c) => [c, 0]),
  ),
  ...Object.fromEntries(['048', '368', '400', '414', '434', '512', '788'].map((c) => [c, 3])),
  '927': 4,
  '990': 4,
};
export const isoExponent = (numericCurrency: string) => ISO_EXPONENTS[numericCurrency] ?? 2;

const COLOR_DEPTHS = ['1', '4', '8', '15', '16', '24', '32', '48'];
const DS_NAMES = ['standin', 'visa', 'mastercard', 'jcb', 'amex', 'protectbuy', 'sbn'];
const ASCII_PRINTABLE = /^[\x20-\x7E]*$/;

const countryCode = all(matches(/^\d{3}$/, 'must be a 3-digit ISO 3166-1 numeric code'), (v) =>
  Number(v) >= 901 ? 'must not be 901–999 (not a country)' : undefined,
);

/** `yyyymmddhhmmss` as a UTC time in ms, or undefined when it is no real date and time. */
function utcTimestamp(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  return ms;
}

function validDate(value: string): boolean {
  return utcTimestamp(`${value}000000`) !== undefined;
}

function phone(areq: Message, field: string): void {
  const value = areq[field];
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badFormat(field, 'must be an object {cc, subscriber}');
  const { cc, subscriber } = value as Record<string, unknown>;
  if (typeof cc !== 'string' || !/^\d{1,3}$/.test(cc)) throw badFormat(field, 'cc must be 1 to 3 digits');
  if (typeof subscriber !== 'string' || !/^\d{1,15}$/.test(subscriber)) throw badFormat(field, 'subscriber must be 1 to 15 digits');
}

/** Throws the Refusal (201 or 203) for the first element at fault. */
export function validateAReqFields(areq: Message, rules: AReqRules): void {
  const { version } = rules;
  const category = text(areq, 'messageCategory', true, oneOf(['01', '02']));
  text(areq, 'deviceChannel', true, (v) =>
    v === '02' ? undefined : ['01', '03'].includes(v) ? 'must be 02: the fake serves the browser flow (BRW) only' : 'must be 02 (BRW)',
  );
  text(areq, 'threeDSCompInd', true, oneOf(['Y', 'N', 'U']));
  const authenticationInd = text(areq, 'threeDSRequestorAuthenticationInd', true, matches(/^(0[1-6]|[89]\d)$/, 'must be 01–06 or 80–99'));
  const challengeValues = version === '2.1.0' ? ['01', '02', '03', '04'] : ['01', '02', '03', '04', '05', '06', '07', '08', '09'];
  if (version === '2.3.1') stringArray(areq, 'threeDSRequestorChallengeInd', false, oneOf(challengeValues), 2);
  else text(areq, 'threeDSRequestorChallengeInd', false, oneOf(challengeValues));
  text(areq, 'threeDSRequestorURL', true, url(2048));
  text(areq, 'notificationURL', true, url(256));

  text(areq, 'cardExpiryDate', true, matches(/^\d{2}(0[1-9]|1[0-2])$/, 'must be YYMM'));
  text(
    areq,
    'cardholderName',
    true,
    version === '2.3.1'
      ? all(lengthBetween(2, 45), matches(/^[^\x00-\x1F\x7F]*$/, 'must not hold control characters'))
      : all(lengthBetween(2, 45), matches(ASCII_PRINTABLE, `must be printable ASCII in ${version}`)),
  );

  const payment = category === '01';
  text(areq, 'acquirerBIN', payment, lengthBetween(1, 11));
  text(areq, 'acquirerMerchantID', payment, lengthBetween(1, 35));
  text(areq, 'mcc', payment, matches(/^\d{4}$/, 'must be 4 digits'));
  text(areq, 'merchantCountryCode', payment, countryCode);
  text(areq, 'merchantName', payment, lengthBetween(1, 40));
  text(areq, 'purchaseAmount', payment, matches(/^\d{1,48}$/, 'must be 1 to 48 digits, in minor units, without punctuation'));
  const currency = text(
    areq,
    'purchaseCurrency',
    payment,
    all(matches(/^\d{3}$/, 'must be a 3-digit ISO 4217 numeric code'), (v) =>
      v === '999' || (Number(v) >= 955 && Number(v) <= 964) ? 'must not be 955–964 or 999' : undefined,
    ),
  );
  text(
    areq,
    'purchaseExponent',
    payment,
    all(matches(/^\d$/, 'must be one digit'), (v) =>
      currency !== undefined && Number(v) !== isoExponent(currency)
        ? `must be ${isoExponent(currency)}, the ISO 4217 exponent of currency ${currency}`
        : undefined,
    ),
  );
  text(areq, 'purchaseDate', payment, (v) => {
    const at = utcTimestamp(v);
    if (at === undefined) return 'must be yyyymmddhhmmss';
    const minutes = Math.round(rules.purchaseDateToleranceMs / 60_000);
    return Math.abs(at - rules.nowMs) > rules.purchaseDateToleranceMs ? `must be the current time in UTC (within ${minutes} min)` : undefined;
  });
  text(areq, 'transType', false, oneOf(['01', '03', '10', '11', '28']));

  // Browser information (§1.5 second table).
  text(areq, 'browserAcceptHeader', true, lengthBetween(1, 2048));
  text(areq, 'browserUserAgent', true, lengthBetween(1, 2048));
  text(areq, 'browserIP', false, (v) => (v.length <= 45 && net.isIP(v) !== 0 ? undefined : 'must be an IPv4 or IPv6 address'));
  const jsFlag = bool(areq, 'browserJavascriptEnabled', version !== '2.1.0');
  const js = version === '2.1.0' ? true : jsFlag === true;
  text(areq, 'browserLanguage', version !== '2.3.1' || js, lengthBetween(1, 8));
  bool(areq, 'browserJavaEnabled', js);
  text(areq, 'browserColorDepth', js, oneOf(COLOR_DEPTHS));
  text(areq, 'browserScreenHeight', js, matches(/^[0-9]{1,6}$/, 'must be 1 to 6 digits'));
  text(areq, 'browserScreenWidth', js, matches(/^[0-9]{1,6}$/, 'must be 1 to 6 digits'));
  text(areq, 'browserTZ', js, matches(/^[+-]?[0-9]{1,4}$/, 'must be minutes, ±1 to 4 digits'));
  stringArray(areq, 'acceptLanguage', version === '2.3.1', lengthBetween(1, 100));

  // Cardholder details, when given.
  text(areq, 'email', false, all(lengthBetween(1, 254), matches(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address')));
  for (const prefix of ['billAddr', 'shipAddr']) {
    const country = text(areq, `${prefix}Country`, false, countryCode);
    const state = text(areq, `${prefix}State`, false, lengthBetween(1, 3));
    if (state !== undefined && country === undefined) throw missing(`${prefix}Country`, `${prefix}Country is required when ${prefix}State is present`);
    for (const part of ['Line1', 'Line2', 'Line3', 'City', 'PostCode']) text(areq, `${prefix}${part}`, false, () => undefined);
  }
  for (const field of ['homePhone', 'mobilePhone', 'workPhone']) phone(areq, field);
  text(areq, 'ds', false, oneOf(DS_NAMES));

  const decoupledOnly: Check = () => (version === '2.1.0' ? 'exists from 2.2.0 on (this AReq is 2.1.0)' : undefined);
  text(areq, 'threeDSRequestorDecReqInd', false, all(decoupledOnly, oneOf(['Y', 'N'])));
  text(
    areq,
    'threeDSRequestorDecMaxTime',
    false,
    all(decoupledOnly, (v) => (/^\d{5}$/.test(v) && Number(v) >= 1 && Number(v) <= 10080 ? undefined : 'must be 00001–10080 (minutes)')),
  );
  const recurring = authenticationInd === '02';
  text(areq, 'recurringExpiry', recurring, (v) => (/^\d{8}$/.test(v) && validDate(v) ? undefined : 'must be yyyymmdd'));
  text(areq, 'recurringFrequency', recurring, matches(/^\d{1,4}$/, 'must be 1 to 4 digits'));

  const extension = areq.messageExtension;
  if (extension !== undefined && (!Array.isArray(extension) || extension.length > 10))
    throw badFormat('messageExtension', 'must be an array of at most 10 extensions');
}
