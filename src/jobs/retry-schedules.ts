/**
 * The retry schedules of the job catalogue (catalogue.ts): how long after a failed or inconclusive
 * run a job runs again. `failures`: runs that failed so far.
 */

/** Acquirer calls with an unknown outcome (timeout, pending): 1 s, 2 s, 4 s, ... capped at 10 min. */
export const acquirerRetryDelay = (attempt: number): number => Math.min(600_000, 1000 * 2 ** Math.max(0, attempt - 1));

const THREE_HOURS_MS = 3 * 3_600_000;

/** Callbacks: the contract's nominal delay before attempt `failures + 1` — attempts 1 and 2 at once, then 2^n s, at most 3 h (INTERFACE §8). */
export function callbackBackoff(failures: number): number {
  const next = failures + 1;
  return next <= 2 ? 0 : Math.min(THREE_HOURS_MS, 1000 * 2 ** next);
}

/** Spread of callback attempt n ≥ 3 around 2^n s: ±10 %. */
export const RETRY_JITTER = 0.1;
/** Callback attempt 2 comes this long after attempt 1 ended: [min, max) ms, uniform. */
export const SECOND_ATTEMPT_DELAY_MS = { min: 250, max: 1_000 } as const;

/**
 * The delay applied before attempt `failures + 1` (callbacks and webhooks): the nominal schedule
 * (callbackBackoff) with jitter — attempt 2 after 250–1000 ms, attempt n ≥ 3 after 2^n s ± 10 %,
 * never above the 3 h cap. `random` in [0, 1).
 */
export function callbackRetryDelay(failures: number, random: () => number = Math.random): number {
  const next = failures + 1;
  if (next <= 1) return 0;
  if (next === 2) return Math.floor(SECOND_ATTEMPT_DELAY_MS.min + (SECOND_ATTEMPT_DELAY_MS.max - SECOND_ATTEMPT_DELAY_MS.min) * random());
  return Math.min(THREE_HOURS_MS, Math.round(callbackBackoff(failures) * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random())));
}

/** Exponential backoff: base · 2^(n-1), capped. */
export const exponentialBackoff =
  (baseMs: number, capMs: number) =>
  (failures: number): number =>
    Math.min(capMs, baseMs * 2 ** Math.max(0, failures - 1));
