/**
 * The Redis of the rate-limit tests: TEST_REDIS_URL (default redis://127.0.0.1:6379). Suites that
 * need it are skipped, with a plain message, when it does not answer.
 */
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const REDIS_SKIP_MESSAGE = `Redis not reachable at ${TEST_REDIS_URL}: Redis suites skipped`;

let reachable: Promise<boolean> | null = null;

/** Does Redis answer PING? Asked once per test process. */
export function redisReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      return (await redis.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      redis.disconnect();
    }
  })();
  return reachable;
}
