/**
 * Where the request rate-limit buckets of INTERFACE §5 live, chosen once at start:
 *   - REDIS_URL set: in Redis; while Redis fails, a request takes from the database buckets;
 *   - PostgreSQL: in the rate_limit_buckets table (every process of the deployment shares them);
 *     while the database fails, a request takes from this process's memory;
 *   - SQLite (one process): in memory, the fast path.
 * Every process of a deployment must make the same choice (the same REDIS_URL), or they count apart.
 */
import type { Logger } from 'pino';
import { type Config, DEFAULT_REDIS_KEY_PREFIX } from './config.js';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { FallbackRateLimiter } from './http/rate-limit-fallback.js';
import { createRedisClient, RedisRateLimiter } from './http/rate-limit-redis.js';
import { PostgresRateLimiter } from './storage/postgres/rate-limit-buckets.js';
import type { Store } from './storage/store.js';

/** What the outage log lines call the buckets (rate-limit-fallback.ts). */
const POSTGRES_BUCKETS = 'the PostgreSQL buckets';
const MEMORY_BUCKETS = "this process's own buckets";

/** The limiter of this process; null when rate limits are off. */
export async function createRateLimiter(config: Config, store: Store, logger: Logger): Promise<RateLimiter | null> {
  if (config.rateLimits === 'off') return null;
  const memory = new MemoryRateLimiter();
  const postgres = store.dialect === 'postgres';
  const database = postgres
    ? new FallbackRateLimiter(new PostgresRateLimiter(store.db), memory, logger, { primary: POSTGRES_BUCKETS, fallback: MEMORY_BUCKETS })
    : memory;
  if (!config.redisUrl) return database;

  const redis = createRedisClient(config.redisUrl);
  const limiter = new FallbackRateLimiter(new RedisRateLimiter(redis, { keyPrefix: config.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX }), database, logger, {
    primary: 'Redis',
    fallback: postgres ? POSTGRES_BUCKETS : MEMORY_BUCKETS,
  });
  // Start all the same when Redis is away: the client keeps reconnecting, and until then the database buckets count.
  await redis.connect().catch((err: unknown) => limiter.primaryFailed(err));
  return limiter;
}
