/**
 * The request rate limits of INTERFACE §5 in Redis (REDIS_URL), shared by every process of the
 * deployment. A take is one Lua script, atomic on the server: it refills the bucket (a hash of
 * tokens and the time of its last take) by the time since, takes a token when there is one, and
 * lets the key expire once the bucket would be full again — a missing key is a full bucket.
 *
 * Time is the Redis server's clock by default (one clock for every process); tests pass their
 * own. The client fails fast instead of queueing while Redis is away (no offline queue, a short
 * command timeout), so that the caller can fall back to the database buckets at once.
 */
import { Redis } from 'ioredis';
import type { RateLimitCategory } from '../shared/route.js';
import { decisionOf, DEFAULT_RULES, type BucketRules, type RateDecision, type RateLimiter } from './rate-limit.js';

/** Redis answers a take in well under a millisecond; past this the request goes on with the database buckets. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
/** How long a start waits for Redis before it goes on without it (it keeps reconnecting). */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;

// KEYS[1]: the bucket. ARGV: burst, tokens per second, now in unix ms ('' for the server's TIME).
// Returns {granted 0|1, tokens left, time of the take in unix ms}; fractions travel as strings
// (Lua numbers are truncated to integers in replies). The refill is computed in the order of the
// memory limiter's, so that both decide alike to the last bit.
const TAKE_TOKEN_LUA = `
if redis.replicate_commands then redis.replicate_commands() end
local burst = tonumber(ARGV[1])
local perSecond = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
end
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(stored[1])
local updated = tonumber(stored[2])
if not tokens or not updated then
  tokens = burst
  updated = now
end
local refilled = math.min(burst, tokens + math.max(0, now - updated) / 1000 * perSecond)
local granted = 0
if refilled >= 1 then
  refilled = refilled - 1
  granted = 1
end
updated = math.max(updated, now)
local left = string.format('%.17g', refilled)
local at = string.format('%.17g', updated)
redis.call('HSET', KEYS[1], 'tokens', left, 'updated', at)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - refilled) / perSecond * 1000) + 1000)
return {granted, left, at}
`;

interface TakeTokenCommand {
  takeRateLimitToken(key: string, burst: number, perSecond: number, nowMs: number | ''): Promise<[number, string, string]>;
}

/** A client for the rate limits: fails fast while Redis is away and reconnects in the background. */
export function createRedisClient(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // Outages are reported by the failed takes (rate-limit-fallback.ts); an 'error' event without a listener would be printed.
  redis.on('error', () => undefined);
  return redis;
}

export interface RedisRateLimiterOptions {
  /** Put before every key, e.g. `payments:` (PAYMENTS_REDIS_KEY_PREFIX). */
  keyPrefix: string;
  rules?: BucketRules;
  /** Unix milliseconds to use instead of the server's clock (tests). */
  nowMs?: () => number;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly rules: BucketRules;
  private readonly commands: TakeTokenCommand;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.rules = options.rules ?? DEFAULT_RULES;
    // EVALSHA, and EVAL once when the server does not know the script yet.
    redis.defineCommand('takeRateLimitToken', { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
    this.commands = redis as unknown as TakeTokenCommand;
  }

  async take(category: RateLimitCategory, key: string): Promise<RateDecision> {
    const rule = this.rules[category];
    const [granted, tokens, atMs] = await this.commands.takeRateLimitToken(
      `${this.options.keyPrefix}ratelimit:${category}:${key}`,
      rule.burst,
      rule.ratePerSecond,
      this.options.nowMs?.() ?? '',
    );
    return decisionOf(rule, granted === 1, Number(tokens), Math.floor(Number(atMs) / 1000));
  }

  async close(): Promise<void> {
    // QUIT when connected (replies in flight arrive first); otherwise just stop reconnecting.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
