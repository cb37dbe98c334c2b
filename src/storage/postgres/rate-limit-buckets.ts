/**
 * The request rate limits of INTERFACE §5 in PostgreSQL (019_rate_limit_buckets), shared by every
 * process of the deployment. One statement, one round trip per take: an upsert that refills the
 * bucket by the time since its last take and takes a token under the row's lock, so that two
 * processes taking from one bucket at once are serialized and never both spend its last token.
 *
 * Time is the database's clock by default (one clock for every process, no skew between hosts);
 * tests pass their own. A clock that goes back refills nothing and never un-spends a token.
 */
import { type Kysely, sql } from 'kysely';
import { decisionOf, DEFAULT_RULES, longestRefillMs, type BucketRules, type RateDecision, type RateLimiter } from '../../http/rate-limit.js';
import type { RateLimitCategory } from '../../shared/route.js';
import type { Database } from '../schema.js';

const SWEEP_INTERVAL_MS = 60_000;

export interface PostgresRateLimiterOptions {
  rules?: BucketRules;
  /** Unix milliseconds to use instead of the database clock (tests). */
  nowMs?: () => number;
  /** Full buckets are deleted this often (default every minute; 0: never, tests). */
  sweepIntervalMs?: number;
}

export class PostgresRateLimiter implements RateLimiter {
  private readonly rules: BucketRules;
  private readonly sweeper: NodeJS.Timeout | null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: PostgresRateLimiterOptions = {},
  ) {
    this.rules = options.rules ?? DEFAULT_RULES;
    const every = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
    this.sweeper = every > 0 ? setInterval(() => void this.sweep().catch(() => undefined), every) : null;
    this.sweeper?.unref();
  }

  async take(category: RateLimitCategory, key: string): Promise<RateDecision> {
    const rule = this.rules[category];
    const burst = sql`${rule.burst}::float8`;
    const rate = sql`${rule.ratePerSecond}::float8`;
    // The bucket after refilling, from the stored row and the take's time (excluded.updated_ms); the
    // arithmetic in the order of the memory limiter's, so that both decide alike to the last bit.
    const refilled = sql`LEAST(${burst}, b.tokens + GREATEST(0, excluded.updated_ms - b.updated_ms) / 1000 * ${rate})`;
    const { rows } = await sql<{ tokens: number; granted: boolean; updatedMs: number }>`
      INSERT INTO rate_limit_buckets AS b (bucket, tokens, updated_ms, granted)
      VALUES (${`${category}:${key}`}, ${burst} - 1, ${this.now()}, true)
      ON CONFLICT (bucket) DO UPDATE SET
        tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
        granted = ${refilled} >= 1,
        updated_ms = GREATEST(b.updated_ms, excluded.updated_ms)
      RETURNING tokens, granted, updated_ms`.execute(this.db);
    const row = rows[0]!;
    return decisionOf(rule, row.granted, Number(row.tokens), Math.floor(Number(row.updatedMs) / 1000));
  }

  /** Deletes the buckets that have been full for a while: a missing row is a full bucket. */
  async sweep(): Promise<number> {
    const result = await sql`DELETE FROM rate_limit_buckets WHERE updated_ms < ${this.now()} - ${longestRefillMs(this.rules)}::float8`.execute(this.db);
    return Number(result.numAffectedRows ?? 0n);
  }

  private now() {
    const nowMs = this.options.nowMs;
    return nowMs ? sql`${nowMs()}::float8` : sql`(extract(epoch FROM clock_timestamp()) * 1000)::float8`;
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
  }
}
