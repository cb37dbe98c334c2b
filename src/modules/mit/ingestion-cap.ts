/**
 * Ingestion caps (INTERFACE §11.8): per merchant, at most `mit` MIT transactions a minute through
 * POST /mit and `mitBatch` through POST /mit/batch (entries counted). Besides the request buckets
 * of §5, and unlike them counted in the database, so that the caps hold for the deployment as a
 * whole however many processes serve it.
 *
 * A fixed window per minute of the service clock, one counter row per (merchant, channel,
 * minute), moved by a conditional upsert; a request that would go past the cap gets 429
 * RATE_LIMIT_REACHED and nothing is created.
 *
 * Where the count is taken is the store's choice (`countsAhead`):
 * - SQLite: inside the commit that writes the accepted transactions (the pipeline's `inCommit`);
 *   the group commit runs commits one after another, and a refusal rolls its commit back. A single
 *   MIT there takes a block of counts when the cap is large, held for the next MITs of its minute
 *   (held-counts.ts): one upsert in up to 16 MITs instead of one each.
 * - PostgreSQL: just before that commit, in a short commit of its own (`addAhead`), given back
 *   when the transactions are not created. In the payment commit the counter row's lock would be
 *   held through its WAL flush and let one merchant's MITs commit only one at a time (measured:
 *   902 → 1 662 POST /mit a second at 50 connections without the in-commit count).
 * A retried request whose first attempt committed finds its transactions and is not counted again.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../shared/errors.js';
import type { ChargeRead } from '../subscriptions/subscriptions.repository.js';
import { blockExtra, HeldCounts } from './held-counts.js';

/** 'mit': POST /mit; 'mit_batch': the entries of POST /mit/batch. */
export type IngestionChannel = 'mit' | 'mit_batch';

export const INGESTION_WINDOW_MS = 60_000;

/** The minute (service time) `nowMs` falls in: its start in ms and as the counters' timestamp. */
function windowOf(nowMs: number): { windowStartMs: number; windowStart: string } {
  const windowStartMs = Math.floor(nowMs / INGESTION_WINDOW_MS) * INGESTION_WINDOW_MS;
  return { windowStartMs, windowStart: new Date(windowStartMs).toISOString() };
}

/**
 * Storage port of the counters: addWithin, pruneBefore and current inside `store.transaction` (the
 * commit that writes the transactions) or on the store's own; addAhead and subtract on the store's
 * own, each its own commit.
 */
export interface IngestionCountersRepository {
  /** The count is taken before the commit that writes the transactions (addAhead), not in it. */
  readonly countsAhead: boolean;
  /** addWithin in a short commit of its own, before the commit that writes the transactions. */
  addAhead(accountId: string, channel: IngestionChannel, windowStart: string, count: number, limit: number): Promise<number | null>;
  /**
   * addAhead and the charge read of the subscription a MIT charges, in one statement (stores that
   * count ahead): the read (null: no such subscription) and the new total (null: refused).
   */
  addAheadReading?(
    accountId: string,
    channel: IngestionChannel,
    windowStart: string,
    count: number,
    limit: number,
    subscriptionId: string,
  ): Promise<{ read: ChargeRead | null; total: number | null }>;
  /** Takes back `count` that addAhead took for transactions that were not created (a counter back at 0 is removed). */
  subtract(accountId: string, channel: IngestionChannel, windowStart: string, count: number): Promise<void>;
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
  /** Runs `fn` once the commit is done (nothing runs when it rolls back). */
  afterCommit(fn: () => void): void;
}

/** Per minute and merchant; 0: no cap. */
export interface IngestionCaps {
  mit: number;
  mitBatch: number;
}

const ROUTE: Record<IngestionChannel, string> = { mit: 'POST /mit', mit_batch: 'POST /mit/batch' };

/** A count taken ahead of the commit (IngestionCap.takeAhead). */
export interface TakenAhead {
  /** The commit did not create the transactions: the count is given back. */
  giveBack(): Promise<void>;
}

export class IngestionCap {
  /** Counts taken ahead in the commit for the next single MITs (held-counts.ts). */
  private readonly held = new HeldCounts();

  /** `counters`: the store's own (each write its own commit), for counting ahead. */
  constructor(private readonly deps: { caps: IngestionCaps; clock: Clock; counters: IngestionCountersRepository }) {}

  limitOf(channel: IngestionChannel): number {
    return channel === 'mit' ? this.deps.caps.mit : this.deps.caps.mitBatch;
  }

  /**
   * Inside the commit that writes `count` accepted MIT transactions of `accountId`: counts them
   * in the current minute, or throws 429 RATE_LIMIT_REACHED with the §5 headers (the commit rolls
   * back). No-op without a cap. Uses counts held from an earlier block when there are enough.
   */
  async takeInCommit(repos: IngestionRepos, accountId: string, channel: IngestionChannel, count: number): Promise<void> {
    const limit = this.limitOf(channel);
    if (limit === 0 || count === 0 || this.deps.counters.countsAhead) return;
    const held = this.held.of(`${accountId}\u0000${channel}`, windowOf(this.deps.clock.now()).windowStart);
    if (held.left >= count) {
      held.left -= count;
      return;
    }
    // A single MIT takes a block while none is being taken; the last counts of a minute, one by one.
    const extra = count === 1 && !held.taking ? blockExtra(limit) : 0;
    const { extraTaken } = await this.take(repos.ingestionCounters, 'addWithin', accountId, channel, count, limit, extra);
    if (extraTaken > 0) {
      held.taking = true;
      repos.afterCommit(() => {
        held.left += extraTaken;
        held.taking = false;
      });
    }
  }

  /**
   * Before the commit that writes `count` MIT transactions of `accountId`, when the store counts
   * ahead: counts them (or throws 429, nothing counted) and answers how to give the count back if
   * that commit does not create them. Null when there is nothing to give back: no cap, or the
   * store counts in the commit (takeInCommit).
   */
  async takeAhead(accountId: string, channel: IngestionChannel, count: number): Promise<TakenAhead | null> {
    const limit = this.limitOf(channel);
    const { counters } = this.deps;
    if (limit === 0 || count === 0 || !counters.countsAhead) return null;
    const { windowStart } = await this.take(counters, 'addAhead', accountId, channel, count, limit);
    return { giveBack: () => counters.subtract(accountId, channel, windowStart, count) };
  }

  /**
   * takeAhead of one MIT folded into the read of the subscription it charges (one statement), on a
   * store that counts ahead; null elsewhere or without a cap (read, then count, as usual). Returns
   * the read, the count taken (`ahead`, to give back when nothing is created; null when refused),
   * and `accept`, for the caller to call once the read and the request are checked — so that a
   * missing subscription or a bad URL answers as it would without the fold: past the cap it throws
   * the 429; otherwise the first count of a minute prunes the minutes before it.
   */
  async takeAheadReading(
    accountId: string,
    channel: IngestionChannel,
    subscriptionId: string,
  ): Promise<{ read: ChargeRead | null; ahead: TakenAhead | null; accept: () => Promise<void> } | null> {
    const limit = this.limitOf(channel);
    const { counters } = this.deps;
    if (limit === 0 || !counters.countsAhead || !counters.addAheadReading) return null;
    const nowMs = this.deps.clock.now();
    const { windowStart } = windowOf(nowMs);
    const { read, total } = await counters.addAheadReading(accountId, channel, windowStart, 1, limit, subscriptionId);
    if (total === null) return { read, ahead: null, accept: () => this.refusal(counters, accountId, channel, 1, limit, nowMs) };
    return {
      read,
      ahead: { giveBack: () => counters.subtract(accountId, channel, windowStart, 1) },
      // The first count of a window for this merchant: the windows before it are over.
      accept: async () => (total === 1 ? counters.pruneBefore(accountId, channel, windowStart) : undefined),
    };
  }

  /**
   * Counts `count` in the current minute with `add`, and `extra` more when they fit (else `count`
   * alone); throws 429 past the cap. Returns the minute's start and the extra counts taken.
   */
  private async take(
    counters: IngestionCountersRepository,
    add: 'addWithin' | 'addAhead',
    accountId: string,
    channel: IngestionChannel,
    count: number,
    limit: number,
    extra = 0,
  ): Promise<{ windowStart: string; extraTaken: number }> {
    const nowMs = this.deps.clock.now();
    const { windowStart } = windowOf(nowMs);
    const addUpTo = async (n: number) => (n <= limit ? counters[add](accountId, channel, windowStart, n, limit) : null);
    let extraTaken = extra;
    let total = await addUpTo(count + extra);
    if (total === null && extra > 0) [extraTaken, total] = [0, await addUpTo(count)];
    if (total === null) return this.refusal(counters, accountId, channel, count, limit, nowMs);
    // The first count of a window for this merchant: the windows before it are over.
    if (total === count + extraTaken) await counters.pruneBefore(accountId, channel, windowStart);
    return { windowStart, extraTaken };
  }

  /**
   * The 429 that `count` more MIT transactions of `accountId` would meet now, or null when they
   * fit in this minute. Read when a request bucket (INTERFACE §5) refuses a MIT route: the client
   * must be told to wait until both let the same request pass (its Retry-After holds).
   */
  async refusalFor(accountId: string, channel: IngestionChannel, count: number): Promise<AppError | null> {
    const limit = this.limitOf(channel);
    if (limit === 0) return null;
    const nowMs = this.deps.clock.now();
    const { windowStart } = windowOf(nowMs);
    // Counts this process took ahead and holds (SQLite) are this minute's too, and still free.
    const held = this.held.of(`${accountId}\u0000${channel}`, windowStart).left;
    if (held >= count) return null;
    const used = await this.deps.counters.current(accountId, channel, windowStart);
    return used + count <= limit ? null : this.refusalError(channel, count, limit, used, nowMs);
  }

  /** Throws the 429 of a count past the cap, with the minute's use in its message and headers. */
  private async refusal(
    counters: IngestionCountersRepository,
    accountId: string,
    channel: IngestionChannel,
    count: number,
    limit: number,
    nowMs: number,
  ): Promise<never> {
    const used = await counters.current(accountId, channel, windowOf(nowMs).windowStart);
    throw this.refusalError(channel, count, limit, used, nowMs);
  }

  private refusalError(channel: IngestionChannel, count: number, limit: number, used: number, nowMs: number): AppError {
    const resetMs = windowOf(nowMs).windowStartMs + INGESTION_WINDOW_MS;
    const retryAfterS = Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
    const left = Math.max(0, limit - used);
    const asked = count === 1 ? '' : ` (this batch has ${count} accepted entries)`;
    return new AppError(
      'RATE_LIMIT_REACHED',
      `Ingestion cap reached: at most ${limit} MIT transactions a minute through ${ROUTE[channel]}, ${left} left in this minute${asked}; retry in ${retryAfterS} s.`,
      undefined,
      {
        retryAfterS,
        headers: { 'retry-after': retryAfterS, 'x-ratelimit-limit': limit, 'x-ratelimit-remaining': left, 'x-ratelimit-reset': Math.ceil(resetMs / 1000) },
      },
    );
  }
}
