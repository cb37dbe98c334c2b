/**
 * Ingestion caps (INTERFACE §11.8): per merchant, at most `mit` MIT transactions a minute through
 * POST /mit and `mitBatch` through POST /mit/batch (entries counted). Besides the request buckets
 * of §5, and unlike them counted in the database, so that the caps hold for the deployment as a
 * whole however many processes serve it.
 *
 * A fixed window per minute of the service clock, one counter row per (merchant, channel,
 * minute). The count is taken by a conditional upsert inside the commit that writes the accepted
 * transactions (the pipeline's `inCommit`): the row lock serializes concurrent commits on
 * PostgreSQL, the group commit runs them one after another on SQLite, and a request that would go
 * past the cap throws 429 RATE_LIMIT_REACHED, which rolls its commit back — nothing is created
 * and nothing is counted. A retried batch whose first attempt committed finds its transactions
 * and is not counted again.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../shared/errors.js';

/** 'mit': POST /mit; 'mit_batch': the entries of POST /mit/batch. */
export type IngestionChannel = 'mit' | 'mit_batch';

export const INGESTION_WINDOW_MS = 60_000;

/** Storage port of the counters. Runs inside `store.transaction` (the commit that writes the transactions). */
export interface IngestionCountersRepository {
  /**
   * Adds `count` to the counter of (merchant, channel, window) unless the total would exceed
   * `limit`. Returns the new total, or null when refused (the counter is unchanged).
   */
  addWithin(accountId: string, channel: IngestionChannel, windowStart: string, count: number, limit: number): Promise<number | null>;
  /** The counter of (merchant, channel, window); 0 when there is none. */
  current(accountId: string, channel: IngestionChannel, windowStart: string): Promise<number>;
  /** Drops the merchant's counters of windows before `windowStart` (they no longer limit anything). */
  pruneBefore(accountId: string, channel: IngestionChannel, windowStart: string): Promise<void>;
}

export interface IngestionRepos {
  ingestionCounters: IngestionCountersRepository;
}

/** Per minute and merchant; 0: no cap. */
export interface IngestionCaps {
  mit: number;
  mitBatch: number;
}

const ROUTE: Record<IngestionChannel, string> = { mit: 'POST /mit', mit_batch: 'POST /mit/batch' };

export class IngestionCap {
  constructor(private readonly deps: { caps: IngestionCaps; clock: Clock }) {}

  limitOf(channel: IngestionChannel): number {
    return channel === 'mit' ? this.deps.caps.mit : this.deps.caps.mitBatch;
  }

  /**
   * Inside the commit that writes `count` accepted MIT transactions of `accountId`: counts them
   * in the current minute, or throws 429 RATE_LIMIT_REACHED with the §5 headers (the commit rolls
   * back). No-op without a cap.
   */
  async takeInCommit(repos: IngestionRepos, accountId: string, channel: IngestionChannel, count: number): Promise<void> {
    const limit = this.limitOf(channel);
    if (limit === 0 || count === 0) return;
    const nowMs = this.deps.clock.now();
    const windowStartMs = Math.floor(nowMs / INGESTION_WINDOW_MS) * INGESTION_WINDOW_MS;
    const windowStart = new Date(windowStartMs).toISOString();
    const total = count <= limit ? await repos.ingestionCounters.addWithin(accountId, channel, windowStart, count, limit) : null;
    if (total !== null) {
      // The first count of a window for this merchant: the windows before it are over.
      if (total === count) await repos.ingestionCounters.pruneBefore(accountId, channel, windowStart);
      return;
    }
    const used = await repos.ingestionCounters.current(accountId, channel, windowStart);
    const resetMs = windowStartMs + INGESTION_WINDOW_MS;
    const retryAfterS = Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
    const asked = count === 1 ? '' : ` (this batch has ${count} accepted entries)`;
    throw new AppError(
      'RATE_LIMIT_REACHED',
      `Ingestion cap reached: at most ${limit} MIT transactions a minute through ${ROUTE[channel]}, ${Math.max(0, limit - used)} left in this minute${asked}; retry in ${retryAfterS} s.`,
      undefined,
      {
        retryAfterS,
        headers: {
          'retry-after': retryAfterS,
          'x-ratelimit-limit': limit,
          'x-ratelimit-remaining': Math.max(0, limit - used),
          'x-ratelimit-reset': Math.ceil(resetMs / 1000),
        },
      },
    );
  }
}
