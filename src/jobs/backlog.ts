/**
 * The backlog of accepted work, and its bound (PAYMENTS_MAX_BACKLOG, INTERFACE §3): while it is at
 * the bound, use cases that accept asynchronous work refuse with 503 and Retry-After
 * (shared/overload.ts) instead of making every payment wait longer for its acquirer call.
 *
 * The backlog is the jobs of every kind that are due and not done: queued with run_at ≤ service
 * now (+ DUE_HORIZON_MS), plus running ones. Running jobs count because they are accepted work not yet done too
 * (Little's law: what is in the system is what waits plus what is being served); they are at most
 * the workers' concurrency per process, so they matter only when a small bound is configured or
 * when crashed workers' leases hold jobs. Jobs scheduled for later (retries after backoff, billing
 * charges of tomorrow) are not due, and dead ones wait for the operator, not for capacity.
 *
 * Counting must not cost a query per request: the figure is cached and counted again at most every
 * `refreshMs` (one count at a time, shared by every caller), with a count bounded by the bound
 * itself (the store stops reading the jobs_due and jobs_leased indexes after `bound` entries; at a
 * bound of 50 000 that is a few milliseconds). Under steady traffic no request waits for a count:
 * a figure up to WAIT_AFTER_INTERVALS intervals old is used while the next count runs in the
 * background. Only the first check, or one after a quiet spell, waits for a fresh figure.
 */
import { wallClock } from '../clock.js';
import type { OverloadSignal } from '../shared/overload.js';

/** How old the figure may be before a request counts again. */
export const BACKLOG_REFRESH_MS = 250;

/**
 * Jobs due within this much of now count as due: work put back for a moment — a callback the
 * delivery gate deferred (its merchant has as many deliveries open as it may), a first quick
 * retry — still waits for the workers. Without it, a backlog of deferred callbacks escapes the
 * count, and the bound lets in work the workers cannot reach.
 */
export const DUE_HORIZON_MS = 1_000;

/** A figure older than this many refresh intervals is not used: the check waits for the count. */
const WAIT_AFTER_INTERVALS = 4;

/**
 * Retry-After of a refusal. The backlog drains by the workers' throughput (thousands of jobs per
 * second), so a few seconds let it fall below the bound; sooner, the retry meets the same refusal
 * and still costs an authentication and an idempotency claim.
 */
export const BACKLOG_RETRY_AFTER_S = 5;

export interface BacklogGaugeOptions {
  /** Due jobs (queued with run_at ≤ now, service time) plus running ones, counted up to `limit` (JobStore.countBacklog). */
  count(now: number, limit: number): Promise<number>;
  /** The bound; 0 turns the gauge off (never overloaded, never counts). */
  bound: number;
  /** Service time: what is due. */
  now(): number;
  /** Wall time, for the refresh interval (default: the system clock). */
  wallNow?: () => number;
  refreshMs?: number;
  retryAfterS?: number;
  /** A count failed (the database is unreachable, say): the last figure stays. Called once per run of failures. */
  onError?: (err: unknown) => void;
  /**
   * The lag bound (PAYMENTS_MAX_LAG_MS; 0 or absent: off): the backlog is also at its bound once it
   * is more than this much work for the workers at their measured pace (`drainRate`).
   */
  maxLagMs?: number;
  /** Jobs settled per second by the workers (DrainMeter); only a process that runs workers knows it. */
  drainRate?: () => number;
}

/**
 * The lag bound never goes below this many jobs: a process that has just started, or was idle, has
 * no measured pace yet, and must still accept a burst (a batch of 500, a billing run).
 */
export const MIN_LAG_BACKLOG = 500;

export class BacklogGauge implements OverloadSignal {
  readonly bound: number;
  private readonly refreshMs: number;
  private readonly wallNow: () => number;
  private figure = 0;
  /** Wall time the count behind `figure` started; -Infinity: never counted. */
  private figureAt = Number.NEGATIVE_INFINITY;
  /** Wall time the last count (successful or not) started: one a refresh interval at most. */
  private attemptAt = Number.NEGATIVE_INFINITY;
  private counting: Promise<void> | null = null;
  private failing = false;

  constructor(private readonly options: BacklogGaugeOptions) {
    this.bound = options.bound;
    this.refreshMs = options.refreshMs ?? BACKLOG_REFRESH_MS;
    this.wallNow = options.wallNow ?? wallClock;
  }

  get enabled(): boolean {
    return this.bound > 0;
  }

  async isOverloaded(): Promise<boolean> {
    return this.enabled && (await this.current()) >= this.effectiveBound();
  }

  /**
   * The bound in force now: PAYMENTS_MAX_BACKLOG, or less when the lag bound is on and the workers'
   * pace makes that many jobs more than PAYMENTS_MAX_LAG_MS of work. Without it, a service offered
   * more than it can settle accepts until the fixed bound, and its workers, sharing the CPU with
   * the requests, fall further behind (callbacks late by the whole backlog); with it, the excess
   * is refused early with a cheap 503 and the workers keep their pace.
   */
  effectiveBound(): number {
    const { maxLagMs, drainRate } = this.options;
    if (!maxLagMs || !drainRate) return this.bound;
    const lagBound = Math.max(MIN_LAG_BACKLOG, Math.ceil((drainRate() * maxLagMs) / 1000));
    return Math.min(this.bound, lagBound);
  }

  retryAfterSeconds(): number {
    return this.options.retryAfterS ?? BACKLOG_RETRY_AFTER_S;
  }

  /**
   * The backlog, capped at the bound: the cached figure. When the last count is `refreshMs` old a
   * new one starts, and the figure is used meanwhile unless it is older than WAIT_AFTER_INTERVALS
   * intervals (never counted, or a quiet spell): then this waits for the count under way.
   */
  async current(): Promise<number> {
    if (!this.enabled) return 0;
    const now = this.wallNow();
    if (now - this.attemptAt >= this.refreshMs) void this.refresh();
    if (this.counting && now - this.figureAt >= this.refreshMs * WAIT_AFTER_INTERVALS) await this.counting;
    return this.figure;
  }

  /** Counts now (or joins the count under way). Never rejects: a failed count keeps the last figure. */
  refresh(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.counting ??= this.countOnce().finally(() => (this.counting = null));
    return this.counting;
  }

  private async countOnce(): Promise<void> {
    const startedAt = (this.attemptAt = this.wallNow());
    try {
      this.figure = await this.options.count(this.options.now() + DUE_HORIZON_MS, this.bound);
      this.figureAt = startedAt;
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.options.onError?.(err);
      this.failing = true;
    }
  }
}
