/** RFC 3339 UTC with milliseconds: the one timestamp format on the wire and in storage. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A plain date (YYYY-MM-DD) means 00:00 UTC that day; anything else must parse as a date-time. */
export function parseInstant(value: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`not a date-time: ${value}`);
  return ms;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
