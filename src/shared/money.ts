import { CURRENCY_EXPONENTS } from './currencies.js';

export const MAX_AMOUNT = 999_999_999;

/** The currency's minor-unit exponent; the edge refuses unknown codes, and rows older than that check read as 2. */
export function currencyExponent(currency: string): number {
  return CURRENCY_EXPONENTS.get(currency) ?? 2;
}

/**
 * Minor units → exact decimal string in the currency's exponent, e.g. (-125, 'DKK') → "-1.25".
 * Works on bigint so that sums of many amounts never pass through a float.
 */
export function toDecimalString(minor: bigint | number, currency: string): string {
  const value = BigInt(minor);
  const exponent = currencyExponent(currency);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : digits.slice(0, -exponent);
  const fraction = exponent === 0 ? '' : `.${digits.slice(-exponent)}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** Exact decimal string → minor units; throws on more fraction digits than the currency allows. */
export function fromDecimalString(text: string, currency: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal amount: ${text}`);
  const exponent = currencyExponent(currency);
  const fraction = match[3] ?? '';
  if (fraction.length > exponent) throw new Error(`${text} has more than ${exponent} decimals for ${currency}`);
  const minor = BigInt(match[2]! + fraction.padEnd(exponent, '0'));
  return match[1] === '-' ? -minor : minor;
}
