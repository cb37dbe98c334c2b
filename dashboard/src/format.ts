/** Display helpers: amounts are integers in minor units, shown with the currency's exponent (INTERFACE §1). */
const ZERO_DECIMALS = new Set(['JPY', 'ISK']);

export function money(minor: number | null | undefined, currency: string | null | undefined): string {
  if (minor === null || minor === undefined) return '';
  const cur = currency ?? '';
  if (ZERO_DECIMALS.has(cur)) return `${minor} ${cur}`.trim();
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${cur}`.trim();
}

/** "12.34" / "12" / "0.5" → minor units, exactly (no floats); null when not a valid amount. */
export function parseAmount(text: string, currency: string): number | null {
  const digits = ZERO_DECIMALS.has(currency) ? 0 : 2;
  const match = /^\s*(\d{1,9})(?:[.,](\d+))?\s*$/.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return null;
  const minor = Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(minor) ? minor : null;
}

export const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');
