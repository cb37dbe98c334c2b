/**
 * Where the request rate limits of INTERFACE §5 keep their buckets (src/rate-limiter.ts): in
 * memory, in PostgreSQL (019_rate_limit_buckets) and in Redis. The same scenario — burst, refill
 * at the documented rates, the X-RateLimit-* values and Retry-After — gives the same decisions on
 * each; the shared ones are atomic across connections, take one round trip and clean up after
 * themselves; a failing Redis falls back to the database buckets, logged once, never a 500.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { describeConfig } from '../../src/cli/cli.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DEFAULT_RULES, MemoryRateLimiter, type RateDecision, type RateLimiter } from '../../src/http/rate-limit.js';
import { FallbackRateLimiter, type OutageLog } from '../../src/http/rate-limit-fallback.js';
import { createRedisClient, RedisRateLimiter } from '../../src/http/rate-limit-redis.js';
import type { RateLimitCategory } from '../../src/shared/route.js';
import { connect } from '../../src/storage/connect.js';
import { PostgresRateLimiter } from '../../src/storage/postgres/rate-limit-buckets.js';
import { freePort } from '../e2e/service.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { openTestStore, type TestStore } from './fixtures.js';
import { REDIS_SKIP_MESSAGE, redisReachable, TEST_REDIS_URL } from './redis-reachable.js';

/** Unix seconds at the scenario's start; the scenario moves time by `ms` from there. */
const WALL = 1_900_000_000;
const stores = await availableStores();
const postgres = stores.includes('postgres');
const redis = await redisReachable();
if (!redis) console.log(`# ${REDIS_SKIP_MESSAGE}`);

const uniquePrefix = () => `test-${randomBytes(6).toString('hex')}:`;

/** A limiter whose time the scenario sets: milliseconds since WALL. */
interface TimedLimiter {
  limiter: RateLimiter;
  time: { ms: number };
}

/**
 * The §5 rules played through one limiter, with the exact decisions expected. Keys are made unique
 * by `tag`, so that a shared store (Redis) starts from full buckets.
 */
async function playScenario({ limiter, time }: TimedLimiter, tag: string): Promise<void> {
  const take = (category: RateLimitCategory, key: string): Promise<RateDecision> => limiter.take(category, `${tag}${key}`);
  time.ms = 0;
  const first = await take('list', 'acct');
  assert.deepEqual(first, { allowed: true, ratePerSecond: 0.2, limit: 30, remaining: 29, resetAt: WALL + 5, retryAfter: 0 }, 'the first take of a full bucket');
  for (let i = 1; i < 30; i++) assert.equal((await take('list', 'acct')).allowed, true, `request ${i + 1} of the burst`);
  assert.deepEqual(
    await take('list', 'acct'),
    { allowed: false, ratePerSecond: 0.2, limit: 30, remaining: 0, resetAt: WALL + 150, retryAfter: 5 },
    'past the burst of 30',
  );
  assert.equal((await take('list', 'other-acct')).allowed, true, 'per merchant');
  assert.equal((await take('mit', 'acct')).allowed, true, 'per category');
  time.ms = 4_900;
  const early = await take('list', 'acct');
  assert.deepEqual(early, { allowed: false, ratePerSecond: 0.2, limit: 30, remaining: 0, resetAt: WALL + 4 + 146, retryAfter: 1 }, 'one token takes 5 s');
  time.ms = 5_000;
  assert.deepEqual(
    await take('list', 'acct'),
    { allowed: true, ratePerSecond: 0.2, limit: 30, remaining: 0, resetAt: WALL + 5 + 150, retryAfter: 0 },
    'refilled after 5 s',
  );
  time.ms = 5_000 + 1_000_000;
  assert.equal((await take('list', 'acct')).remaining, 29, 'refills up to the burst, not beyond');

  for (let i = 0; i < 5; i++) assert.equal((await take('operation', 'acct:TX1')).allowed, true, `operation ${i + 1} of 5`);
  const op = await take('operation', 'acct:TX1');
  assert.equal(op.allowed, false);
  assert.equal(op.limit, 5);
  assert.equal(op.retryAfter, 12, '5 per minute');
  assert.equal((await take('operation', 'acct:TX2')).allowed, true, 'per transaction');

  for (let i = 0; i < 10; i++) assert.equal((await take('mitBatch', 'acct')).allowed, true);
  const batch = await take('mitBatch', 'acct');
  assert.equal(batch.allowed, false);
  assert.equal(batch.retryAfter, 1, '1 per second');
  for (let i = 0; i < 300; i++) assert.equal((await take('mit', 'acct')).allowed, true, `MIT ${i + 1} of the burst of 300 (full again by now)`);
  assert.equal((await take('mit', 'acct')).allowed, false, 'past the burst of 300');
  time.ms += 200;
  assert.equal((await take('mit', 'acct')).allowed, true, '5 per second: one every 200 ms');
}

describe('configuration: REDIS_URL and PAYMENTS_REDIS_KEY_PREFIX', () => {
  test('unset: no Redis, the default prefix; set: kept as given', () => {
    assert.equal(loadConfig({}).redisUrl, null);
    assert.equal(loadConfig({ REDIS_URL: '' }).redisUrl, null);
    assert.equal(loadConfig({}).redisKeyPrefix, 'payments:');
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl, 'redis://127.0.0.1:6379/2');
    assert.equal(loadConfig({ REDIS_URL: 'rediss://user:pw@cache.internal:6380' }).redisUrl, 'rediss://user:pw@cache.internal:6380');
    assert.equal(loadConfig({ PAYMENTS_REDIS_KEY_PREFIX: 'shop-a:' }).redisKeyPrefix, 'shop-a:');
  });

  test('a bad value names the variable', () => {
    const problem = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      assert.fail('accepted');
    };
    assert.equal(problem({ REDIS_URL: 'http://cache:6379' }), 'REDIS_URL: must be redis://... or rediss://..., got scheme "http"');
    assert.equal(problem({ REDIS_URL: 'not a url' }), 'REDIS_URL: is not a valid redis:// URL');
    assert.match(problem({ PAYMENTS_REDIS_KEY_PREFIX: 'has space' }), /^PAYMENTS_REDIS_KEY_PREFIX: /);
    assert.match(problem({ PAYMENTS_REDIS_KEY_PREFIX: 'x'.repeat(101) }), /^PAYMENTS_REDIS_KEY_PREFIX: /);
  });

  test('payments config shows REDIS_URL with its password masked', () => {
    const lines = describeConfig(loadConfig({ REDIS_URL: 'redis://:hunter2@cache:6379' }), { REDIS_URL: 'redis://:hunter2@cache:6379' }).join('\n');
    assert.ok(!lines.includes('hunter2'));
    assert.match(lines, /^REDIS_URL\s+redis:\/\/:\*\*\*\*@cache:6379$/m);
    assert.match(lines, /^PAYMENTS_REDIS_KEY_PREFIX\s+payments:\s+\(default\)$/m);
  });
});

describe('memory buckets (one process)', () => {
  test('burst, refill, headers and Retry-After of the §5 rules', async () => {
    const time = { ms: 0 };
    const limiter = new MemoryRateLimiter(
      DEFAULT_RULES,
      () => time.ms,
      () => WALL + Math.floor(time.ms / 1000),
    );
    try {
      await playScenario({ limiter, time }, '');
    } finally {
      await limiter.close();
    }
  });
});

describe('PostgreSQL buckets (019_rate_limit_buckets)', { skip: !postgres }, () => {
  let t: TestStore;
  before(async () => {
    t = await openTestStore('postgres');
  });
  after(() => t?.close());

  const timed = (): TimedLimiter & { limiter: PostgresRateLimiter } => {
    const time = { ms: 0 };
    return { time, limiter: new PostgresRateLimiter(t.store.db, { nowMs: () => WALL * 1000 + time.ms, sweepIntervalMs: 0 }) };
  };

  test('burst, refill, headers and Retry-After of the §5 rules: the same decisions as in memory', async () => {
    await playScenario(timed(), 'scenario:');
  });

  test('a take is one statement (one round trip), an autocommitted upsert', async () => {
    const { limiter } = timed();
    await limiter.take('list', 'warm-up');
    t.store.counters.start();
    await limiter.take('list', 'round-trip');
    await limiter.take('list', 'round-trip');
    const counts = t.store.counters.stop();
    assert.equal(counts.statements, 2, 'one statement per take');
    assert.equal(counts.writes, 2);
    assert.equal(counts.control, 0, 'no BEGIN/COMMIT around it');
  });

  test('atomic across connections: of 40 concurrent takes from two pools, exactly the burst of 5 pass', async () => {
    const second = connect(t.database.config, { schema: t.database.schema! });
    try {
      // The database's clock, as in production.
      const limiters = [new PostgresRateLimiter(t.store.db, { sweepIntervalMs: 0 }), new PostgresRateLimiter(second.db, { sweepIntervalMs: 0 })];
      const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2]!.take('operation', 'acct:concurrent')));
      assert.equal(decisions.filter((d) => d.allowed).length, 5);
      assert.deepEqual([...new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining))].sort(), [0, 1, 2, 3, 4], 'each token given once');
      const refused = decisions.filter((d) => !d.allowed);
      assert.ok(
        refused.every((d) => d.remaining === 0 && d.retryAfter >= 11 && d.retryAfter <= 12),
        'refused with Retry-After of about one token (12 s)',
      );
      const nowSeconds = Math.floor(Date.now() / 1000);
      assert.ok(
        refused.every((d) => Math.abs(d.resetAt - (nowSeconds + 60)) <= 2),
        `reset: the database's clock plus 60 s to refill (${refused[0]!.resetAt}, now ${nowSeconds})`,
      );
    } finally {
      await second.close();
    }
  });

  test('a clock that goes back refills nothing and gives no spent token back', async () => {
    const { limiter, time } = timed();
    time.ms = 60_000;
    for (let i = 0; i < 5; i++) await limiter.take('operation', 'acct:clock');
    time.ms = 0;
    assert.equal((await limiter.take('operation', 'acct:clock')).allowed, false, 'earlier time: still empty');
    time.ms = 60_000 + 11_000;
    assert.equal((await limiter.take('operation', 'acct:clock')).allowed, false, '11 s after the latest take: not yet a token');
    time.ms = 60_000 + 13_000;
    assert.equal((await limiter.take('operation', 'acct:clock')).allowed, true, '13 s after it: one token (one every 12 s)');
  });

  test('the sweep deletes only the buckets that are full again (untouched for longer than the slowest refill, 150 s)', async () => {
    const { limiter, time } = timed();
    time.ms = 1_000_000;
    await limiter.take('list', 'sweep-old');
    time.ms += 150_000;
    await limiter.take('operation', 'sweep-recent');
    time.ms += 1;
    const buckets = async () =>
      (await sql<{ bucket: string }>`SELECT bucket FROM rate_limit_buckets WHERE bucket LIKE '%sweep-%' ORDER BY bucket`.execute(t.store.db)).rows.map(
        (r) => r.bucket,
      );
    assert.deepEqual(await buckets(), ['list:sweep-old', 'operation:sweep-recent']);
    assert.ok((await limiter.sweep()) >= 1);
    assert.deepEqual(await buckets(), ['operation:sweep-recent']);
    assert.equal((await limiter.take('list', 'sweep-old')).remaining, 29, 'a swept bucket is a full one');
  });
});

describe('Redis buckets', { skip: !redis }, () => {
  const clients: Redis[] = [];
  const client = async () => {
    const c = createRedisClient(TEST_REDIS_URL);
    clients.push(c);
    await c.connect();
    return c;
  };
  after(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  });

  test('burst, refill, headers and Retry-After of the §5 rules: the same decisions as in memory', async () => {
    const time = { ms: 0 };
    const limiter = new RedisRateLimiter(await client(), { keyPrefix: uniquePrefix(), nowMs: () => WALL * 1000 + time.ms });
    await playScenario({ limiter, time }, '');
  });

  test('atomic across connections: of 40 concurrent takes from two clients, exactly the burst of 5 pass', async () => {
    const keyPrefix = uniquePrefix();
    // The server's clock, as in production.
    const limiters = [new RedisRateLimiter(await client(), { keyPrefix }), new RedisRateLimiter(await client(), { keyPrefix })];
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2]!.take('operation', 'acct:concurrent')));
    assert.equal(decisions.filter((d) => d.allowed).length, 5);
    const refused = decisions.find((d) => !d.allowed)!;
    const nowSeconds = Math.floor(Date.now() / 1000);
    assert.ok(Math.abs(refused.resetAt - (nowSeconds + 60)) <= 2, `reset: the server's clock plus 60 s (${refused.resetAt}, now ${nowSeconds})`);
    assert.ok(refused.retryAfter >= 11 && refused.retryAfter <= 12);
  });

  test('one key per bucket under the prefix, expiring when the bucket is full again', async () => {
    const keyPrefix = uniquePrefix();
    const redisClient = await client();
    const limiter = new RedisRateLimiter(redisClient, { keyPrefix });
    await limiter.take('operation', 'acct:TX9');
    await limiter.take('operation', 'acct:TX9');
    assert.deepEqual(await redisClient.keys(`${keyPrefix}*`), [`${keyPrefix}ratelimit:operation:acct:TX9`]);
    const ttl = await redisClient.pttl(`${keyPrefix}ratelimit:operation:acct:TX9`);
    // Two tokens spent at 5 per minute: full again in 24 s, plus a second of margin.
    assert.ok(ttl > 23_000 && ttl <= 25_000, `expires when full (${ttl} ms)`);
  });
});

/** Collects what the fallback logs. */
function recordingLog(): OutageLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_details, message) => lines.push(`warn ${message}`), info: (_details, message) => lines.push(`info ${message}`) };
}

describe('falling back when the shared buckets fail', () => {
  test('each request that the primary fails is answered by the fallback; the outage is logged once, and its end', async () => {
    let down = true;
    const primary = new MemoryRateLimiter();
    const flaky: RateLimiter = {
      take: (category, key) => (down ? Promise.reject(new Error('connection refused')) : primary.take(category, key)),
      close: () => primary.close(),
    };
    const fallback = new MemoryRateLimiter();
    const log = recordingLog();
    const limiter = new FallbackRateLimiter(flaky, fallback, log, { primary: 'Redis', fallback: 'the PostgreSQL buckets' });
    try {
      for (let i = 0; i < 30; i++) assert.equal((await limiter.take('list', 'acct')).allowed, true);
      assert.equal((await limiter.take('list', 'acct')).allowed, false, "the fallback's bucket is spent: its decisions count");
      assert.equal(limiter.degraded, true);
      assert.deepEqual(log.lines, ['warn rate limits: Redis failed; using the PostgreSQL buckets until it answers again'], 'one warning for 31 requests');
      down = false;
      assert.equal((await limiter.take('list', 'acct')).remaining, 29, "back on the primary's buckets");
      assert.equal(limiter.degraded, false);
      down = true;
      await limiter.take('list', 'acct');
      await limiter.take('list', 'acct');
      assert.deepEqual(log.lines.slice(1), [
        'info rate limits: Redis answers again',
        'warn rate limits: Redis failed; using the PostgreSQL buckets until it answers again',
      ]);
    } finally {
      await limiter.close();
    }
  });

  test('a Redis that does not answer (nothing listens on its port) fails each take at once, and the fallback answers', async () => {
    const redisClient = createRedisClient(`redis://127.0.0.1:${await freePort()}`);
    const log = recordingLog();
    const limiter = new FallbackRateLimiter(new RedisRateLimiter(redisClient, { keyPrefix: uniquePrefix() }), new MemoryRateLimiter(), log, {
      primary: 'Redis',
      fallback: 'memory',
    });
    try {
      await redisClient.connect().catch((err: unknown) => limiter.primaryFailed(err));
      const started = performance.now();
      for (let i = 0; i < 5; i++) assert.equal((await limiter.take('operation', 'acct:tx')).allowed, true);
      const refused = await limiter.take('operation', 'acct:tx');
      assert.deepEqual([refused.allowed, refused.limit, refused.remaining, refused.retryAfter], [false, 5, 0, 12], 'the fallback bucket is spent');
      assert.ok(performance.now() - started < 1_000, 'no waiting for Redis');
      assert.equal(log.lines.length, 1, 'the failed connection and the failed takes: one warning');
    } finally {
      await limiter.close();
    }
  });
});

describe('falling back when PostgreSQL fails', () => {
  test("a take the database cannot answer is answered by the process's own buckets", async () => {
    // A database that refuses connections: nothing listens on the port.
    const away = connect({ kind: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/test` });
    const log = recordingLog();
    const limiter = new FallbackRateLimiter(new PostgresRateLimiter(away.db, { sweepIntervalMs: 0 }), new MemoryRateLimiter(), log, {
      primary: 'the PostgreSQL buckets',
      fallback: "this process's own buckets",
    });
    try {
      for (let i = 0; i < 5; i++) assert.equal((await limiter.take('operation', 'acct:tx')).allowed, true);
      assert.equal((await limiter.take('operation', 'acct:tx')).allowed, false);
      assert.deepEqual(log.lines, ["warn rate limits: the PostgreSQL buckets failed; using this process's own buckets until it answers again"]);
    } finally {
      await limiter.close();
      await away.close();
    }
  });
});

describe('the limiter each deployment uses, over HTTP', () => {
  for (const kind of stores) {
    describe(`${kind}, no REDIS_URL`, () => {
      let t: TestRuntime;
      before(async () => {
        t = await startTestRuntime(kind, { rateLimits: 'default' }, { startWorkers: false });
      });
      after(() => t?.close());

      test(kind === 'postgres' ? 'buckets in the rate_limit_buckets table' : 'buckets in memory: the table stays empty', async () => {
        const m = await t.createMerchant({ physical: false });
        const res = await m.api.get(`${API}/transactions`);
        assert.equal(res.status, 200);
        assert.equal(res.headers['x-ratelimit-remaining'], '29');
        const rows = (await sql<{ bucket: string; tokens: number }>`SELECT bucket, tokens FROM rate_limit_buckets`.execute(t.runtime.store.db)).rows;
        if (kind === 'postgres')
          assert.deepEqual(
            rows.map((r) => [r.bucket, Math.floor(Number(r.tokens))]),
            [[`list:${m.accountId}`, 29]],
          );
        else assert.deepEqual(rows, []);
      });
    });

    describe(`${kind}, REDIS_URL where Redis does not answer`, () => {
      let t: TestRuntime;
      const logged: string[] = [];
      before(async () => {
        t = await startTestRuntime(
          kind,
          { rateLimits: 'default', logLevel: 'warn', redisUrl: `redis://127.0.0.1:${await freePort()}` },
          { startWorkers: false, logDestination: { write: (line) => logged.push(line) } },
        );
      });
      after(() => t?.close());

      test('requests are limited by the database buckets (memory on SQLite): headers, then 429, never a 500; one warning', async () => {
        const m = await t.createMerchant({ physical: false });
        for (let i = 0; i < 30; i++) {
          const res = await m.api.get(`${API}/transactions`);
          assert.equal(res.status, 200, `request ${i + 1}`);
          assert.equal(res.headers['x-ratelimit-remaining'], String(29 - i));
        }
        const limited = await m.api.get(`${API}/transactions`);
        assert.equal(limited.status, 429);
        assert.equal(limited.body.errorCode, 'RATE_LIMIT_REACHED');
        assert.ok(Number(limited.headers['retry-after']) >= 1);
        const warnings = logged.filter((line) => line.includes('rate limits: Redis failed'));
        assert.equal(warnings.length, 1, `one warning for 31 requests: ${warnings.join('')}`);
        const rows = (await sql<{ bucket: string }>`SELECT bucket FROM rate_limit_buckets`.execute(t.runtime.store.db)).rows;
        assert.deepEqual(rows, kind === 'postgres' ? [{ bucket: `list:${m.accountId}` }] : [], 'on PostgreSQL the table holds the bucket');
      });
    });

    describe(`${kind}, REDIS_URL`, { skip: !redis }, () => {
      let t: TestRuntime;
      const redisKeyPrefix = uniquePrefix();
      const inspector = new Redis(TEST_REDIS_URL, { lazyConnect: true });
      before(async () => {
        t = await startTestRuntime(kind, { rateLimits: 'default', redisUrl: TEST_REDIS_URL, redisKeyPrefix }, { startWorkers: false });
      });
      after(async () => {
        await t?.close();
        inspector.disconnect();
      });

      test('buckets in Redis under the prefix; the database table stays empty', async () => {
        const m = await t.createMerchant({ physical: false });
        const res = await m.api.get(`${API}/transactions`);
        assert.equal(res.status, 200);
        assert.equal(res.headers['x-ratelimit-remaining'], '29');
        assert.deepEqual(await inspector.keys(`${redisKeyPrefix}*`), [`${redisKeyPrefix}ratelimit:list:${m.accountId}`]);
        assert.deepEqual((await sql`SELECT bucket FROM rate_limit_buckets`.execute(t.runtime.store.db)).rows, []);
      });
    });
  }
});
