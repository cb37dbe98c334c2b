/**
 * Pure date arithmetic of subscription billing (no I/O, no clock): plan intervals on UTC
 * calendar dates, the default first charge, and how a charge's retries are spread over its
 * period. Everything takes and returns epoch milliseconds; dates are YYYY-MM-DD in UTC.
 */
import { DAY_MS } from '../../shared/time.js';

export const INTERVAL_PERIODS = ['DAY', 'WEEK', 'MONTH', 'YEAR'] as const;
export type IntervalPeriod = (typeof INTERVAL_PERIODS)[number];

export interface Interval {
  period: IntervalPeriod;
  /** 1..31 periods. */
  frequency: number;
}

/** Shortest wait before a retry: a retry is always strictly in the future. */
export const MIN_RETRY_GAP_MS = 60_000;

export const startOfUtcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** YYYY-MM-DD (UTC) of an instant. */
export const utcDateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const daysInMonth = (year: number, monthIndex: number): number => new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();

/**
 * One interval after `fromMs`, keeping the time of day. Months and years land on day `desiredDay`
 * of the month (default: the day of `fromMs`), clamped to the month's last day: from Jan 31 one
 * month is Feb 28 (29 in a leap year), and with desiredDay 31 the month after that is Mar 31.
 */
export function addInterval(fromMs: number, interval: Interval, desiredDay?: number | null): number {
  const { period, frequency } = interval;
  if (period === 'DAY') return fromMs + frequency * DAY_MS;
  if (period === 'WEEK') return fromMs + frequency * 7 * DAY_MS;
  const from = new Date(fromMs);
  const months = period === 'MONTH' ? frequency : frequency * 12;
  const total = from.getUTCFullYear() * 12 + from.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total % 12;
  const wantedDay = desiredDay ?? from.getUTCDate();
  const day = Math.min(wantedDay, daysInMonth(year, month));
  const timeOfDay = fromMs - startOfUtcDay(fromMs);
  return Date.UTC(year, month, day) + timeOfDay;
}

/**
 * An agreement's desiredDate (INTERFACE §11.7): on a MONTH plan the day of the month (UTC) of its
 * first nextChargeAt, which later periods aim for; null on DAY, WEEK and YEAR plans.
 */
export function desiredDateFor(interval: Interval, firstChargeAtMs: number): number | null {
  return interval.period === 'MONTH' ? new Date(firstChargeAtMs).getUTCDate() : null;
}

/** An agreement created without `nextChargeAt` is first charged one interval after today (00:00 UTC). */
export function defaultFirstChargeAt(nowMs: number, interval: Interval): number {
  return addInterval(startOfUtcDay(nowMs), interval);
}

/**
 * When the next attempt of a charge runs after `attemptsMade` failed attempts, or null when no
 * further attempt fits (all attempts made, or none fits before the deadline).
 *
 * The period [periodStart, deadline) is cut into `maxAttempts` equal slots and attempt k+1 runs
 * at the start of slot k, so the attempts spread over the whole period instead of bunching at its
 * start; a retry is never earlier than `now + MIN_RETRY_GAP_MS` and always before the deadline.
 */
export function nextAttemptAt(args: { attemptsMade: number; maxAttempts: number; periodStartMs: number; deadlineMs: number; nowMs: number }): number | null {
  const { attemptsMade, maxAttempts, periodStartMs, deadlineMs, nowMs } = args;
  if (attemptsMade >= maxAttempts) return null;
  const slot = Math.floor((deadlineMs - periodStartMs) / maxAttempts);
  const at = Math.max(periodStartMs + attemptsMade * slot, nowMs + MIN_RETRY_GAP_MS);
  return at < deadlineMs ? at : null;
}
