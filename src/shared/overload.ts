/**
 * "Overload is survivable": the port through which use cases that accept asynchronous work (MIT,
 * MIT batch, asynchronous payout) learn that the backlog of accepted work is at its bound, and
 * refuse before they store anything (INTERFACE §3: 503 SERVICE_UNAVAILABLE with Retry-After).
 * Implemented by jobs/backlog.ts (BacklogGauge); synchronous work does not ask it.
 */
import { AppError } from './errors.js';

export interface OverloadSignal {
  /** True while the backlog of accepted work is at its bound. Reads a cached figure: no query per call. */
  isOverloaded(): Promise<boolean>;
  /** Seconds a refused client should wait before it retries (the Retry-After header). */
  retryAfterSeconds(): number;
}

/** Throws 503 SERVICE_UNAVAILABLE with Retry-After while `signal` reports overload; the first step of an accepting use case. */
export async function refuseWhenOverloaded(signal: OverloadSignal): Promise<void> {
  if (!(await signal.isOverloaded())) return;
  throw new AppError('SERVICE_UNAVAILABLE', 'The backlog of accepted work is at its bound; retry after the time given in Retry-After.', undefined, {
    retryAfterS: signal.retryAfterSeconds(),
  });
}
