import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addInterval,
  defaultFirstChargeAt,
  desiredDateFor,
  MIN_RETRY_GAP_MS,
  nextAttemptAt,
  startOfUtcDay,
  utcDateOf,
} from '../../src/modules/billing/billing-schedule.js';

const at = (text: string): number => Date.parse(text);
const isoOf = (ms: number): string => new Date(ms).toISOString();
const HOUR = 3_600_000;

describe('addInterval', () => {
  test('DAY and WEEK add whole days and keep the time of day', () => {
    assert.equal(isoOf(addInterval(at('2024-02-28T09:30:00.000Z'), { period: 'DAY', frequency: 1 })), '2024-02-29T09:30:00.000Z');
    assert.equal(isoOf(addInterval(at('2024-12-30T00:00:00.000Z'), { period: 'DAY', frequency: 3 })), '2025-01-02T00:00:00.000Z');
    assert.equal(isoOf(addInterval(at('2024-03-01T00:00:00.000Z'), { period: 'WEEK', frequency: 2 })), '2024-03-15T00:00:00.000Z');
  });

  test('MONTH from Jan 31 lands on the last day of February (28, or 29 in a leap year)', () => {
    assert.equal(isoOf(addInterval(at('2023-01-31T00:00:00.000Z'), { period: 'MONTH', frequency: 1 })), '2023-02-28T00:00:00.000Z');
    assert.equal(isoOf(addInterval(at('2024-01-31T00:00:00.000Z'), { period: 'MONTH', frequency: 1 })), '2024-02-29T00:00:00.000Z');
  });

  test('the desired date brings the day back: Jan 31 → Feb 29 → Mar 31 → Apr 30 → May 31', () => {
    const month = { period: 'MONTH' as const, frequency: 1 };
    const desired = 31;
    let t = at('2024-01-31T06:00:00.000Z');
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      t = addInterval(t, month, desired);
      seen.push(isoOf(t));
    }
    assert.deepEqual(seen, ['2024-02-29T06:00:00.000Z', '2024-03-31T06:00:00.000Z', '2024-04-30T06:00:00.000Z', '2024-05-31T06:00:00.000Z']);
  });

  test('without a desired date the day clamps and stays clamped (Feb 28 + 1 month = Mar 28)', () => {
    assert.equal(isoOf(addInterval(at('2023-02-28T00:00:00.000Z'), { period: 'MONTH', frequency: 1 })), '2023-03-28T00:00:00.000Z');
  });

  test('MONTH frequency crosses years; YEAR keeps Feb 29 only in leap years', () => {
    assert.equal(isoOf(addInterval(at('2024-11-15T00:00:00.000Z'), { period: 'MONTH', frequency: 3 })), '2025-02-15T00:00:00.000Z');
    assert.equal(isoOf(addInterval(at('2024-01-31T00:00:00.000Z'), { period: 'MONTH', frequency: 13 })), '2025-02-28T00:00:00.000Z');
    const year = { period: 'YEAR' as const, frequency: 1 };
    const y2025 = addInterval(at('2024-02-29T00:00:00.000Z'), year, 29);
    assert.equal(isoOf(y2025), '2025-02-28T00:00:00.000Z');
    const y2028 = addInterval(addInterval(addInterval(y2025, year, 29), year, 29), year, 29);
    assert.equal(isoOf(y2028), '2028-02-29T00:00:00.000Z');
    assert.equal(isoOf(addInterval(at('2024-06-01T00:00:00.000Z'), { period: 'YEAR', frequency: 2 })), '2026-06-01T00:00:00.000Z');
  });

  test('twelve monthly steps from any day of a year make exactly one year', () => {
    for (let day = 1; day <= 31; day++) {
      const start = Date.UTC(2023, 0, day);
      const desired = day;
      let t = start;
      for (let i = 0; i < 12; i++) t = addInterval(t, { period: 'MONTH', frequency: 1 }, desired);
      assert.equal(utcDateOf(t), utcDateOf(Date.UTC(2024, 0, day)), `from 2023-01-${day}`);
    }
  });
});

describe('desiredDateFor (INTERFACE §11.7)', () => {
  test('the UTC day of the month of the first charge on a MONTH plan; null on other periods', () => {
    assert.equal(desiredDateFor({ period: 'MONTH', frequency: 1 }, at('2031-01-31T23:30:00.000Z')), 31);
    assert.equal(desiredDateFor({ period: 'MONTH', frequency: 3 }, at('2031-02-01T00:00:00.000Z')), 1);
    for (const period of ['DAY', 'WEEK', 'YEAR'] as const) assert.equal(desiredDateFor({ period, frequency: 1 }, at('2031-01-31T00:00:00.000Z')), null, period);
  });
});

describe('defaultFirstChargeAt', () => {
  test('is today (00:00 UTC) plus one interval', () => {
    assert.equal(isoOf(defaultFirstChargeAt(at('2024-05-10T17:45:12.345Z'), { period: 'DAY', frequency: 1 })), '2024-05-11T00:00:00.000Z');
    assert.equal(isoOf(defaultFirstChargeAt(at('2024-01-31T23:59:59.999Z'), { period: 'MONTH', frequency: 1 })), '2024-02-29T00:00:00.000Z');
    assert.equal(isoOf(startOfUtcDay(at('2024-01-31T23:59:59.999Z'))), '2024-01-31T00:00:00.000Z');
  });
});

describe('nextAttemptAt', () => {
  const periodStartMs = at('2024-05-01T00:00:00.000Z');
  const deadlineMs = at('2024-05-02T00:00:00.000Z');

  test('spreads maxAttempts attempts evenly over the period, all before the deadline', () => {
    const times: number[] = [];
    for (let made = 1; made < 4; made++) {
      const next = nextAttemptAt({ attemptsMade: made, maxAttempts: 4, periodStartMs, deadlineMs, nowMs: periodStartMs + (made - 1) * 6 * HOUR + 1000 });
      assert.ok(next !== null);
      times.push(next);
    }
    assert.deepEqual(times.map(isoOf), ['2024-05-01T06:00:00.000Z', '2024-05-01T12:00:00.000Z', '2024-05-01T18:00:00.000Z']);
    assert.equal(nextAttemptAt({ attemptsMade: 4, maxAttempts: 4, periodStartMs, deadlineMs, nowMs: periodStartMs + 18 * HOUR }), null, 'all attempts made');
  });

  test('a retry is always strictly in the future, at least the minimum gap away', () => {
    const nowMs = periodStartMs + 7 * HOUR; // later than the slot of attempt 2 (06:00)
    assert.equal(nextAttemptAt({ attemptsMade: 1, maxAttempts: 4, periodStartMs, deadlineMs, nowMs }), nowMs + MIN_RETRY_GAP_MS);
  });

  test('no retry when none fits before the deadline (e.g. a period caught up after it ended)', () => {
    assert.equal(nextAttemptAt({ attemptsMade: 1, maxAttempts: 3, periodStartMs, deadlineMs, nowMs: deadlineMs - 30_000 }), null);
    assert.equal(nextAttemptAt({ attemptsMade: 1, maxAttempts: 3, periodStartMs, deadlineMs, nowMs: deadlineMs + 30 * 24 * HOUR }), null);
  });

  test('maxAttempts 1 never retries; 31 attempts on a daily plan all fit', () => {
    assert.equal(nextAttemptAt({ attemptsMade: 1, maxAttempts: 1, periodStartMs, deadlineMs, nowMs: periodStartMs }), null);
    let now = periodStartMs;
    for (let made = 1; made < 31; made++) {
      const next = nextAttemptAt({ attemptsMade: made, maxAttempts: 31, periodStartMs, deadlineMs, nowMs: now });
      assert.ok(next !== null && next > now && next < deadlineMs, `retry ${made}`);
      now = next + 1000;
    }
  });
});
