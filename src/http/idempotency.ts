/**
 * Idempotency-Key (INTERFACE §4): one mechanism for every mutating route that opts in.
 * The claim is an atomic insert made before the handler runs; the completed response is stored
 * for 24 h and replayed with `Idempotent-Replayed: true`. Refusals decided before execution
 * (401, 403, 429, 422 validation) release the claim so that the client can fix and retry. A 503
 * because the database failed is not an answer either: the claim is reopened for the retry.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import { DAY_MS } from '../shared/time.js';
import { isStoreUnavailable } from '../storage/unavailable.js';

export interface IdempotencyRef {
  accountId: string;
  method: string;
  path: string;
  key: string;
}

export interface StoredResponse {
  requestHash: string;
  state: 'in_flight' | 'completed';
  status: number | null;
  body: string | null;
  contentType: string | null;
}

/** Storage port (implemented in src/storage). */
export interface IdempotencyStore {
  /**
   * Inserts the claim, or takes over an expired one (new effect key) or one abandoned in flight by a
   * crashed process with the same request (same effect key, so the retry finds what the crashed
   * execution committed); else returns the existing record.
   */
  claim(
    ref: IdempotencyRef,
    requestHash: string,
    times: { now: string; lockedUntil: string; expiresAt: string },
  ): Promise<{ claimed: true; effectKey: string; resumed: boolean } | { claimed: false; existing: StoredResponse }>;
  complete(ref: IdempotencyRef, status: number, body: string, contentType: string): Promise<void>;
  release(ref: IdempotencyRef): Promise<void>;
  /**
   * Ends the in-flight lock of a claim whose execution was cut off (the database failed under it),
   * keeping its request hash and effect key: a retry of the same request resumes that execution and
   * finds what it committed, as after a crash, instead of starting a second one.
   */
  reopen(ref: IdempotencyRef, now: string): Promise<void>;
  /** Deletes records that expired before `now`; returns how many. */
  sweep(now: string, limit: number): Promise<number>;
}

export const IDEMPOTENCY_TTL_MS = DAY_MS;
/** An in-flight claim older than this is taken to be from a crashed process and can be taken over. */
export const IN_FLIGHT_LOCK_MS = 5 * 60_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function validateKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new AppError('VALIDATION_ERROR', 'The Idempotency-Key header is invalid.', {
      'Idempotency-Key': ['[regex]: must be 1 to 255 printable ASCII characters without spaces'],
    });
  }
}

/** Canonical JSON: object keys sorted at every level, so that key order does not change the hash. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export const requestHash = (body: unknown): string =>
  createHash('sha256')
    .update(canonicalJson(body ?? null))
    .digest('hex');

/** Responses that mean "refused before execution": the claim is released, not stored. */
export function isPreExecutionRefusal(status: number, errorCode: string | undefined): boolean {
  if (status === 401 || status === 403 || status === 429) return true;
  return status === 422 && errorCode === 'VALIDATION_ERROR';
}

/**
 * "The database failed under this request" (503 SERVICE_UNAVAILABLE): not the key's answer, so not
 * stored. Not released either, since the execution may have committed part of its work before the
 * failure (a MOTO authorized at the acquirer): the claim is reopened, and the retry resumes it.
 * The backlog bound's 503 (shared/overload.ts) takes the same path, and must: it stores nothing,
 * but the claim it refused may itself be a resumed one whose crashed first execution committed a
 * payment; releasing would drop that effect key and let a retry pay a second time.
 */
export function isInterruptedByOutage(status: number, errorCode: string | undefined): boolean {
  return status === 503 && errorCode === 'SERVICE_UNAVAILABLE';
}

/**
 * Reopens the claim of a request the database failed under. The failure that caused the 503 often
 * killed other pooled connections too (a restart ends them all) and the first try can meet one of
 * them before the pool has dropped it: one more try a moment later, on a fresh connection. If that
 * fails too, the database is down: the claim stays locked until IN_FLIGHT_LOCK_MS runs out.
 */
export async function reopenInterrupted(store: IdempotencyStore, ref: IdempotencyRef, now: string): Promise<void> {
  try {
    await store.reopen(ref, now);
  } catch (err) {
    if (!isStoreUnavailable(err)) throw err;
    await new Promise((resolve) => setTimeout(resolve, REOPEN_RETRY_MS));
    await store.reopen(ref, now);
  }
}

const REOPEN_RETRY_MS = 100;
