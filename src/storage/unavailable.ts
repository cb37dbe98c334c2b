/**
 * "The database cannot be used right now": the one classification of storage errors that mean an
 * outage (unreachable, restarting, out of connections, busy or out of disk) rather than a defect.
 * The HTTP error handler answers them with 503 SERVICE_UNAVAILABLE and Retry-After, the job runner
 * backs off on them and does not count them towards a job's dead letter.
 */

/** Retry-After (seconds) of a 503 answered because the database cannot be used. */
export const STORE_RETRY_AFTER_S = 2;

/** Node socket errors of the connection to PostgreSQL. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs: 08xxx connection exceptions, 57P01-03 admin/crash shutdown and "cannot
 * connect now" (starting up, shutting down, in recovery), 53xxx insufficient resources (too many
 * connections, disk full, out of memory).
 */
const POSTGRES_CODES = new Set(['08000', '08001', '08003', '08004', '08006', '08007', '57P01', '57P02', '57P03', '53000', '53100', '53200', '53300']);

/** Messages node-postgres and its pool use for a dead or unobtainable connection (they carry no code). */
const POSTGRES_MESSAGES = [
  /^Connection terminated\b/, // "... unexpectedly", "... due to connection timeout"
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * SQLite (result code names, extended ones included, as both drivers name them: sqlite/driver.ts):
 * locked past busy_timeout, I/O error, disk full.
 */
const SQLITE_PREFIXES = ['SQLITE_BUSY', 'SQLITE_IOERR', 'SQLITE_FULL'];

function matches(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || POSTGRES_CODES.has(code)) return true;
    if (SQLITE_PREFIXES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`))) return true;
  }
  return typeof message === 'string' && POSTGRES_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * True when `err` (or an error it wraps: `cause`, AggregateError's `errors`) says the database is
 * unreachable or cannot take work now. False for everything else, including a pool closed on
 * purpose ("Cannot use a pool after calling end on the pool"): that is a shutdown, not an outage.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null || seen.has(next)) continue;
    seen.add(next);
    if (matches(next)) return true;
    const { cause, errors } = next as { cause?: unknown; errors?: unknown };
    queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return false;
}
