/**
 * Token buckets per merchant and category (INTERFACE §5): the rules, the decision every limiter
 * answers with, the one interface the hook awaits, and the in-memory limiter of a single process.
 *
 * Where the buckets live is chosen at start (src/rate-limiter.ts): in Redis when REDIS_URL
 * is set (rate-limit-redis.ts), in a PostgreSQL table otherwise (storage/postgres/rate-limit-buckets.ts),
 * so that they hold for the deployment as a whole; in this process's memory on SQLite, which is
 * one process anyway.
 */
import { performance } from 'node:perf_hooks';
import type { AppError } from '../shared/errors.js';
import type { RateLimitCategory } from '../shared/route.js';

export interface BucketRule {
  /** Tokens added per second. */
  ratePerSecond: number;
  burst: number;
}

export type BucketRules = Record<RateLimitCategory, BucketRule>;

export const DEFAULT_RULES: BucketRules = {
  mit: { ratePerSecond: 5, burst: 300 },
  mitBatch: { ratePerSecond: 1, burst: 10 },
  list: { ratePerSecond: 1 / 5, burst: 30 },
  operation: { ratePerSecond: 5 / 60, burst: 5 },
};

/** The longest an emptied bucket of these rules takes to be full again: an older bucket carries no information. */
export function longestRefillMs(rules: BucketRules): number {
  return Math.max(...Object.values(rules).map((rule) => (rule.burst / rule.ratePerSecond) * 1000));
}

export interface RateDecision {
  allowed: boolean;
  /** Tokens added per second: the rule that decided, for the refusal's text. */
  ratePerSecond: number;
  limit: number;
  remaining: number;
  /** Unix seconds at which the bucket is full again. */
  resetAt: number;
  /** Seconds until one token is available (when refused). */
  retryAfter: number;
}

/**
 * A limit beyond the request buckets that a request of a category must also pass (the ingestion
 * caps of INTERFACE §11.8): the refusal it would meet now, or null. Asked only when a bucket
 * refuses, so that Retry-After names a wait after which the same request passes both.
 */
export type FurtherLimit = (category: RateLimitCategory, accountId: string, body: unknown) => Promise<AppError | null>;

/** What each category limits, in words (the 429's message and the OpenAPI introduction). */
export const RATE_LIMITED: Record<RateLimitCategory, string> = {
  mit: '`POST /mit`',
  mitBatch: '`POST /mit/batch` (requests, not entries; at most 500 entries a batch)',
  list: 'list endpoints',
  operation: 'capture / void / refund / renew (per transaction)',
};

/** "5/s", "1 per 5 s" (a token every few seconds), else "5 per minute" — as INTERFACE §5 words them. */
export function describeRate(rule: BucketRule): string {
  if (rule.ratePerSecond >= 1) return `${rule.ratePerSecond}/s`;
  const secondsPerToken = 1 / rule.ratePerSecond;
  if (Number.isInteger(secondsPerToken) && secondsPerToken <= 10) return `1 per ${secondsPerToken} s`;
  return `${Math.round(rule.ratePerSecond * 60 * 100) / 100} per minute`;
}

/** Where the buckets live is the implementation's business; the hook only awaits a decision. */
export interface RateLimiter {
  /** Takes one token of the bucket of (category, key), or says when one will be there. */
  take(category: RateLimitCategory, key: string): Promise<RateDecision>;
  close(): Promise<void>;
}

/** The decision after a take left `tokens` in the bucket at `nowSeconds` (unix, whole seconds). */
export function decisionOf(rule: BucketRule, allowed: boolean, tokens: number, nowSeconds: number): RateDecision {
  const secondsToFull = (rule.burst - tokens) / rule.ratePerSecond;
  return {
    allowed,
    ratePerSecond: rule.ratePerSecond,
    limit: rule.burst,
    remaining: Math.floor(tokens),
    resetAt: nowSeconds + Math.ceil(secondsToFull),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rule.ratePerSecond)),
  };
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** The buckets in this process's memory: exact for one process, per process with several. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly rules: BucketRules = DEFAULT_RULES,
    private readonly monotonicMs: () => number = () => performance.now(),
    private readonly wallSeconds: () => number = () => Math.floor(performance.timeOrigin / 1000 + performance.now() / 1000),
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async take(category: RateLimitCategory, key: string): Promise<RateDecision> {
    const rule = this.rules[category];
    const now = this.monotonicMs();
    const id = `${category}:${key}`;
    const bucket = this.buckets.get(id) ?? { tokens: rule.burst, updatedMs: now };
    bucket.tokens = Math.min(rule.burst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * rule.ratePerSecond);
    bucket.updatedMs = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(id, bucket);
    return decisionOf(rule, allowed, bucket.tokens, this.wallSeconds());
  }

  /** Drops buckets that have refilled completely: they carry no information. */
  private sweep(): void {
    const now = this.monotonicMs();
    for (const [id, bucket] of this.buckets) {
      const category = id.slice(0, id.indexOf(':')) as RateLimitCategory;
      const rule = this.rules[category];
      if (bucket.tokens + ((now - bucket.updatedMs) / 1000) * rule.ratePerSecond >= rule.burst) this.buckets.delete(id);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
