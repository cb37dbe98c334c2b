/**
 * A limiter that answers from its primary buckets and, when they cannot be reached (Redis or the
 * database away, a timeout), from its fallback for that request: the limiter never turns a request
 * into a 500. The outage is logged once when it starts and once when it ends, not per request.
 */
import type { RateLimitCategory } from '../shared/route.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

export interface OutageLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export class FallbackRateLimiter implements RateLimiter {
  private failing = false;

  constructor(
    private readonly primary: RateLimiter,
    private readonly fallback: RateLimiter,
    private readonly log: OutageLog,
    /** What the log lines call the two, e.g. { primary: 'Redis', fallback: 'the PostgreSQL buckets' }. */
    private readonly names: { primary: string; fallback: string },
  ) {}

  /** Is the primary failing (since its last failed take, until a take succeeds)? */
  get degraded(): boolean {
    return this.failing;
  }

  async take(category: RateLimitCategory, key: string): Promise<RateDecision> {
    let decision: RateDecision;
    try {
      decision = await this.primary.take(category, key);
    } catch (err) {
      this.primaryFailed(err);
      return this.fallback.take(category, key);
    }
    if (this.failing) {
      this.failing = false;
      this.log.info({}, `rate limits: ${this.names.primary} answers again`);
    }
    return decision;
  }

  /** Notes a failure of the primary (a take's, or a connection's at start): logged when an outage starts. */
  primaryFailed(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.log.warn({ err }, `rate limits: ${this.names.primary} failed; using ${this.names.fallback} until it answers again`);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.primary.close(), this.fallback.close()]);
  }
}
