/**
 * Token buckets per merchant and category (INTERFACE §5). In memory, per process: with several
 * processes each enforces the limits on its own share of the traffic.
 */
import { performance } from 'node:perf_hooks';
import type { RateLimitCategory } from '../shared/route.js';

export interface BucketRule {
  /** Tokens added per second. */
  ratePerSecond: number;
  burst: number;
}

export const DEFAULT_RULES: Record<RateLimitCategory, BucketRule> = {
  mit: { ratePerSecond: 5, burst: 300 },
  mitBatch: { ratePerSecond: 1, burst: 10 },
  list: { ratePerSecond: 1 / 5, burst: 30 },
  operation: { ratePerSecond: 5 / 60, burst: 5 },
};

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the bucket is full again. */
  resetAt: number;
  /** Seconds until one token is available (when refused). */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly rules: Record<RateLimitCategory, BucketRule> = DEFAULT_RULES,
    private readonly monotonicMs: () => number = () => performance.now(),
    private readonly wallSeconds: () => number = () => Math.floor(performance.timeOrigin / 1000 + performance.now() / 1000),
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  take(category: RateLimitCategory, key: string): RateDecision {
    const rule = this.rules[category];
    const now = this.monotonicMs();
    const id = `${category}:${key}`;
    const bucket = this.buckets.get(id) ?? { tokens: rule.burst, updatedMs: now };
    bucket.tokens = Math.min(rule.burst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * rule.ratePerSecond);
    bucket.updatedMs = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(id, bucket);
    const secondsToFull = (rule.burst - bucket.tokens) / rule.ratePerSecond;
    return {
      allowed,
      limit: rule.burst,
      remaining: Math.floor(bucket.tokens),
      resetAt: this.wallSeconds() + Math.ceil(secondsToFull),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / rule.ratePerSecond)),
    };
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

  close(): void {
    clearInterval(this.sweeper);
  }
}
