/**
 * A held conditional write that found its rows other than predicted refuses its statement, and so
 * the commit: PostgreSQL has no way to raise an error from plain SQL, so the statement casts a
 * text to integer that only parses when the rows are as predicted — a refusal is then 22P02
 * ("invalid input syntax for type integer") naming STALE_WRITE. The store turns it into the
 * StaleWrite the modules understand (they know no driver).
 */
import { StaleWrite } from '../shared/errors.js';

/** The text the refusing cast fails on: the refusal's message quotes it. */
export const STALE_WRITE = 'stale write: the rows were not as predicted';

export function staleWriteOf(err: unknown): StaleWrite | null {
  if (typeof err !== 'object' || err === null) return null;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === '22P02' && typeof message === 'string' && message.includes(STALE_WRITE) ? new StaleWrite(STALE_WRITE) : null;
}
