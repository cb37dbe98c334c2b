/**
 * The cost of one rate-limit take, which every request of a limited category pays before anything
 * else: in memory (one process, SQLite), in PostgreSQL (one upsert, src/storage/postgres/rate-limit-buckets.ts)
 * and in Redis (one Lua script, src/http/rate-limit-redis.ts). Baselines of the same run: for
 * PostgreSQL a `SELECT $1` through the same pool (the price of any round trip), for Redis a PING.
 * Measured one take in flight (the latency a request waits) and 32 in flight over 200 merchants'
 * buckets (the throughput), then 32 in flight on one merchant's bucket (every take waits for the
 * row or the script before it). Targets: a PostgreSQL take is one statement and stays well under
 * a millisecond (no WAL flush: the table is UNLOGGED); a Redis take costs about one round trip
 * (p50 within 2× of PING's, one in flight).
 *
 *   npm run bench rate-limit        (BENCH_QUICK=1 for a short run; REDIS_URL, default redis://127.0.0.1:6379)
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { MemoryRateLimiter, type RateLimiter } from '../src/http/rate-limit.js';
import { createRedisClient, RedisRateLimiter } from '../src/http/rate-limit-redis.js';
import { connect } from '../src/storage/connect.js';
import { migrate } from '../src/storage/migrate.js';
import { PostgresRateLimiter } from '../src/storage/postgres/rate-limit-buckets.js';
import { BENCH_DATABASE_URL, postgresUnreachable, safeUrl } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MERCHANTS = 200;
const IN_FLIGHT = 32;
const TARGET_RATIO = 2;
/**
 * A PostgreSQL take is one round trip plus an upsert that is planned anew each time (Kysely sends
 * unnamed statements): a few hundred µs here. The same take on a logged table waited for a WAL
 * flush, 3 ms; this bound catches a return to that.
 */
const PG_TAKE_P50_LIMIT_US = 1_000;
const ROUNDS = 5;

interface Figure {
  /** Microseconds per operation, one in flight. */
  p50: number;
  p99: number;
  /** Operations per second, IN_FLIGHT in flight. */
  perSecond: number;
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/**
 * Each of `operations` `count` times one after the other (latencies), then `count` times with
 * IN_FLIGHT at once (throughput), in ROUNDS alternating rounds, so that they share whatever else
 * the machine is doing.
 */
async function measure(count: number, operations: Array<(i: number) => Promise<unknown>>): Promise<Figure[]> {
  for (const operation of operations) for (let i = 0; i < Math.min(200, count); i++) await operation(i); // warm-up: connections, plans, script cache
  const latencies = operations.map(() => [] as number[]);
  const busyMs = operations.map(() => 0);
  const perRound = Math.ceil(count / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, operation] of operations.entries()) {
      for (let i = 0; i < perRound; i++) {
        const started = performance.now();
        await operation(i);
        latencies[k]!.push((performance.now() - started) * 1000);
      }
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < perRound) await operation(next++);
        }),
      );
      busyMs[k]! += performance.now() - started;
    }
  }
  return latencies.map((l, k) => {
    l.sort((x, y) => x - y);
    return { p50: percentile(l, 0.5), p99: percentile(l, 0.99), perSecond: (perRound * ROUNDS) / (busyMs[k]! / 1000) };
  });
}

const takes = (limiter: RateLimiter) => (i: number) => limiter.take('list', `bench-${i % MERCHANTS}`);
const hotTakes = (limiter: RateLimiter) => () => limiter.take('list', 'bench-hot');

function line(ctx: BenchContext, label: string, f: Figure, base?: Figure): void {
  const ratio = (a: number, b: number | undefined) => (b ? ` (${(a / b).toFixed(2)}×)` : '');
  ctx.report.note(
    `${label.padEnd(52)} p50 ${f.p50.toFixed(1).padStart(7)} µs${ratio(f.p50, base?.p50).padEnd(9)} p99 ${f.p99.toFixed(1).padStart(8)} µs${ratio(f.p99, base?.p99).padEnd(9)} ${Math.round(
      f.perSecond,
    )
      .toString()
      .padStart(7)}/s at ${IN_FLIGHT} in flight${ratio(f.perSecond, base?.perSecond)}`,
  );
}

export default defineSuite({
  name: 'rate-limit',
  description: 'one rate-limit take in memory, in PostgreSQL and in Redis, beside one round trip of each',
  async run(ctx) {
    const count = ctx.quick ? 2_000 : 10_000;

    const memory = new MemoryRateLimiter();
    const [inMemory] = (await measure(count * 10, [takes(memory)])) as [Figure];
    await memory.close();
    line(ctx, 'memory take (BASELINE of the limiters)', inMemory);

    const why = await postgresUnreachable();
    if (why) ctx.report.skip('PostgreSQL take', `${safeUrl(BENCH_DATABASE_URL)} not reachable (${why})`);
    else {
      // A schema of its own, made afresh: the table as the current migration makes it.
      const admin = connect({ kind: 'postgres', url: BENCH_DATABASE_URL });
      await sql`DROP SCHEMA IF EXISTS bench_rate_limit CASCADE`.execute(admin.db);
      await admin.close();
      const connection = connect({ kind: 'postgres', url: BENCH_DATABASE_URL }, { schema: 'bench_rate_limit' });
      try {
        await migrate(connection);
        // With a parameter, as the take: both through the extended protocol (parse, bind, execute: one round trip).
        const limiter = new PostgresRateLimiter(connection.db, { sweepIntervalMs: 0 });
        const [roundTrip, take, hot] = (await measure(count, [
          (i) => sql`SELECT ${i}::int AS i`.execute(connection.db),
          takes(limiter),
          hotTakes(limiter),
        ])) as [Figure, Figure, Figure];
        connection.counters.start();
        await limiter.take('list', 'bench-counted');
        const counted = connection.counters.stop();
        await limiter.close();
        line(ctx, 'PostgreSQL SELECT $1 (BASELINE: one round trip)', roundTrip);
        line(ctx, `PostgreSQL take, ${MERCHANTS} merchants`, take, roundTrip);
        line(ctx, 'PostgreSQL take, one merchant (row lock)', hot, roundTrip);
        line(ctx, 'PostgreSQL take against memory', take, inMemory);
        ctx.report.target(
          `PostgreSQL take p50 ≤ ${PG_TAKE_P50_LIMIT_US} µs`,
          take.p50 <= PG_TAKE_P50_LIMIT_US,
          `p50 ${take.p50.toFixed(0)} µs, ${(take.p50 / roundTrip.p50).toFixed(1)}× the ${roundTrip.p50.toFixed(0)} µs of SELECT $1`,
        );
        ctx.report.target(
          'PostgreSQL take is one statement',
          counted.statements === 1 && counted.control === 0,
          `${counted.statements} statement(s), ${counted.control} BEGIN/COMMIT`,
        );
      } finally {
        await connection.close();
      }
    }

    const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const reachable = await probe
      .connect()
      .then(() => true)
      .catch(() => false);
    if (!reachable) {
      probe.disconnect();
      ctx.report.skip('Redis take', `${safeUrl(REDIS_URL)} not reachable`);
      return;
    }
    const client = createRedisClient(REDIS_URL);
    await client.connect();
    try {
      const limiter = new RedisRateLimiter(client, { keyPrefix: `bench-${process.pid}:` });
      const [ping, take, hot] = (await measure(count, [() => client.ping(), takes(limiter), hotTakes(limiter)])) as [Figure, Figure, Figure];
      line(ctx, 'Redis PING (BASELINE: one round trip)', ping);
      line(ctx, `Redis take, ${MERCHANTS} merchants`, take, ping);
      line(ctx, 'Redis take, one merchant', hot, ping);
      line(ctx, 'Redis take against memory', take, inMemory);
      ctx.report.target(
        'Redis take ≈ one round trip',
        take.p50 <= ping.p50 * TARGET_RATIO,
        `p50 ${take.p50.toFixed(0)} µs against ${ping.p50.toFixed(0)} µs for PING (≤ ${TARGET_RATIO}×)`,
      );
      const keys = await client.keys(`bench-${process.pid}:*`);
      if (keys.length) await client.del(...keys);
    } finally {
      await client.quit();
      probe.disconnect();
    }
  },
});
