/**
 * Display helpers. Amounts travel as integers in minor units (INTERFACE §1); people read and type
 * them in major units with the currency's exponent — the service's own table (src/shared/currencies.ts:
 * DKK 2, JPY 0, KWD 3, CLF 4), so 1000 DKK-minor is "10.00 DKK" and 1000 JPY is "1000 JPY".
 */
import { CURRENCY_EXPONENTS } from '../../src/shared/currencies.js';

/** The currency's minor-unit exponent (2 for a code the table does not know, as the service reads old rows). */
export const exponentOf = (currency: string | null | undefined): number => CURRENCY_EXPONENTS.get((currency ?? '').toUpperCase()) ?? 2;

/** Minor units → "12.34" (exactly: integer arithmetic, no floats). */
export function major(minor: number, currency: string | null | undefined): string {
  const digits = exponentOf(currency);
  const sign = minor < 0 ? '-' : '';
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** Minor units → "12.34 DKK"; '' for no amount. */
export function money(minor: number | null | undefined, currency: string | null | undefined): string {
  if (minor === null || minor === undefined) return '';
  return `${major(minor, currency)} ${currency ?? ''}`.trim();
}

/** "12.34" / "12" / "0.5" / "12,34" in major units → minor units, exactly (no floats); null when not a valid amount. */
export function parseAmount(text: string, currency: string): number | null {
  const digits = exponentOf(currency);
  const match = /^\s*(\d{1,12})(?:[.,](\d*))?\s*$/.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return null;
  const minor = Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(minor) ? minor : null;
}

/** "Enter an amount in DKK: at most 2 decimals, e.g. 4.00." — the hint of an amount field. */
export function amountHint(currency: string): string {
  const digits = exponentOf(currency);
  const example = digits === 0 ? '400' : `4.${'0'.repeat(digits)}`;
  return `${currency} with ${digits === 0 ? 'no decimals' : `at most ${digits} decimals`}, e.g. ${example}`;
}

/**
 * The service's refusals name amounts in minor units ("The amount exceeds the remaining
 * authorization (2500 available).", "void with amount -1 (or 2500, all that is left …)"): the same
 * message with those figures in major units and the currency, as the page shows amounts.
 */
export function inMajorUnits(message: string, currency: string): string {
  return message
    .replace(/\((\d+) available\)/g, (_m, n: string) => `(${money(Number(n), currency)} available)`)
    .replace(/\(or (\d+), all that is left/g, (_m, n: string) => `(or ${money(Number(n), currency)}, all that is left`);
}

/** "1 attempt", "2 attempts", "0 attempts" (`many` when the plural is not `one` + s). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');
