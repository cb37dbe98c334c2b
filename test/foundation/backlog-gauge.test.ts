/**
 * The backlog gauge (jobs/backlog.ts): a cached figure counted at most once per refresh interval,
 * one count at a time, compared with the bound; and the store's bounded count (JobStore.countBacklog)
 * on both stores: due queued jobs plus running ones, not future, done or dead ones, up to the limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKLOG_REFRESH_MS, BACKLOG_RETRY_AFTER_S, BacklogGauge, DUE_HORIZON_MS } from '../../src/jobs/backlog.js';
import { AppError } from '../../src/shared/errors.js';
import { refuseWhenOverloaded } from '../../src/shared/overload.js';
import { startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

/** A gauge over a scripted count and a hand-moved wall clock. */
function gaugeOf(options: { bound: number; figures?: number[]; refreshMs?: number }) {
  let wall = 1_000_000;
  const calls: Array<{ now: number; limit: number }> = [];
  const figures = [...(options.figures ?? [])];
  let pending: Array<(n: number) => void> | null = null;
  const errors: unknown[] = [];
  let fail = false;
  const gauge = new BacklogGauge({
    bound: options.bound,
    now: () => 42_000,
    wallNow: () => wall,
    ...(options.refreshMs === undefined ? {} : { refreshMs: options.refreshMs }),
    onError: (err) => errors.push(err),
    count: (now, limit) => {
      calls.push({ now, limit });
      if (fail) return Promise.reject(new Error('database down'));
      if (pending) return new Promise<number>((resolve) => pending!.push(resolve));
      return Promise.resolve(figures.shift() ?? 0);
    },
  });
  return {
    gauge,
    calls,
    errors,
    advance: (ms: number) => (wall += ms),
    hold: () => (pending = []),
    release: (n: number) => {
      const waiting = pending ?? [];
      pending = null;
      for (const resolve of waiting) resolve(n);
    },
    failing: (on: boolean) => (fail = on),
  };
}

/** Lets a background count's promise settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('BacklogGauge', () => {
  test('counts at most once per refresh interval, whatever the number of checks', async () => {
    const g = gaugeOf({ bound: 10, figures: [3, 10, 4] });
    assert.equal(BACKLOG_REFRESH_MS, 250);
    for (let i = 0; i < 1000; i++) assert.equal(await g.gauge.isOverloaded(), false);
    assert.equal(g.calls.length, 1, 'one count for a thousand checks');
    assert.deepEqual(g.calls[0], { now: 42_000 + DUE_HORIZON_MS, limit: 10 }, 'due within the horizon of service now, counted up to the bound');
    g.advance(BACKLOG_REFRESH_MS - 1);
    assert.equal(await g.gauge.current(), 3, 'still the cached figure');
    assert.equal(g.calls.length, 1);
    g.advance(1);
    assert.equal(await g.gauge.isOverloaded(), false, 'one interval old: answered from the figure while the next count runs');
    assert.equal(g.calls.length, 2);
    await settle();
    for (let i = 0; i < 100; i++) assert.equal(await g.gauge.isOverloaded(), true, 'the new figure: at the bound');
    assert.equal(g.calls.length, 2);
    g.advance(10 * BACKLOG_REFRESH_MS);
    assert.equal(await g.gauge.isOverloaded(), false, 'after a quiet spell the check waits for a fresh figure (4), not the old one (10)');
    assert.equal(g.calls.length, 3, 'a long pause costs one count, not one per interval missed');
  });

  test('under steady traffic no check waits for a count; concurrent checks share one count', async () => {
    const g = gaugeOf({ bound: 5, figures: [7] });
    assert.equal(await g.gauge.isOverloaded(), true);
    g.hold();
    g.advance(2 * BACKLOG_REFRESH_MS);
    const answer = await Promise.race([g.gauge.isOverloaded(), new Promise((resolve) => setTimeout(() => resolve('waited'), 100))]);
    assert.equal(answer, true, 'answered from the figure at once while the count is held');
    assert.equal(g.calls.length, 2);
    g.release(1);
    await settle();
    assert.equal(await g.gauge.isOverloaded(), false);

    // The first check of all (never counted) waits, and fifty of them share that one count.
    const fresh = gaugeOf({ bound: 5 });
    fresh.hold();
    const checks = Array.from({ length: 50 }, () => fresh.gauge.isOverloaded());
    await settle();
    assert.equal(fresh.calls.length, 1, 'one count under way for fifty checks');
    fresh.release(7);
    assert.deepEqual(new Set(await Promise.all(checks)), new Set([true]));
    assert.equal(fresh.calls.length, 1);
  });

  test('refresh interval 0: every check waits for a count of its own (the tests use it for exact figures)', async () => {
    const g = gaugeOf({ bound: 2, figures: [0, 1, 2], refreshMs: 0 });
    assert.deepEqual([await g.gauge.isOverloaded(), await g.gauge.isOverloaded(), await g.gauge.isOverloaded()], [false, false, true]);
    assert.equal(g.calls.length, 3);
  });

  test('bound 0 is off: never overloaded, never counts', async () => {
    const g = gaugeOf({ bound: 0, figures: [1_000_000] });
    assert.equal(g.gauge.enabled, false);
    assert.equal(await g.gauge.isOverloaded(), false);
    assert.equal(await g.gauge.current(), 0);
    await g.gauge.refresh();
    assert.equal(g.calls.length, 0);
  });

  test('a failed count keeps the last figure, is reported once per run of failures, and is retried after the interval', async () => {
    const g = gaugeOf({ bound: 3, figures: [3, 1] });
    assert.equal(await g.gauge.isOverloaded(), true);
    g.failing(true);
    for (let i = 0; i < 3; i++) {
      g.advance(BACKLOG_REFRESH_MS);
      assert.equal(await g.gauge.isOverloaded(), true, 'the last figure stays');
      await settle();
    }
    assert.equal(await g.gauge.isOverloaded(), true);
    assert.equal(g.calls.length, 4, 'one attempt per interval, not per check');
    assert.equal(g.errors.length, 1, 'reported once');
    g.failing(false);
    g.advance(BACKLOG_REFRESH_MS);
    await g.gauge.refresh();
    assert.equal(await g.gauge.isOverloaded(), false, 'recovered');
    g.failing(true);
    g.advance(BACKLOG_REFRESH_MS);
    await g.gauge.refresh();
    assert.equal(g.errors.length, 2, 'a new run of failures is reported again');
  });

  test('refuseWhenOverloaded: 503 SERVICE_UNAVAILABLE carrying the Retry-After seconds; nothing when below the bound', async () => {
    const g = gaugeOf({ bound: 1, figures: [0, 1] });
    await refuseWhenOverloaded(g.gauge);
    await g.gauge.refresh();
    const err = await refuseWhenOverloaded(g.gauge).then(
      () => assert.fail('not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.equal(err.status, 503);
    assert.equal(err.retryAfterS, BACKLOG_RETRY_AFTER_S);
    assert.equal(g.gauge.retryAfterSeconds(), BACKLOG_RETRY_AFTER_S);
  });
});

for (const kind of await availableStores()) {
  describe(`JobStore.countBacklog (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
    });
    after(() => t.close());

    test('due queued jobs of every kind plus running ones; not future, done or dead ones; counted up to the limit', async () => {
      const jobs = t.runtime.store.jobs;
      const now = t.runtime.clock.now();
      // The start-up schedule (maintenance, relay, settlement, expiry) and anything else already there.
      const base = await jobs.countBacklog(now, 1_000);
      await jobs.enqueueMany([
        ...Array.from({ length: 5 }, (_, i) => ({ kind: 'test.backlog-a', payload: i, runAt: now - 1_000 })),
        ...Array.from({ length: 3 }, (_, i) => ({ kind: 'test.backlog-b', payload: i, runAt: now })),
        ...Array.from({ length: 4 }, (_, i) => ({ kind: 'test.backlog-future', payload: i, runAt: now + 3_600_000 })),
      ]);
      assert.equal(await jobs.countBacklog(now, 1_000), base + 8, 'due ones of every kind; future ones are not due');
      assert.equal((await jobs.countBacklog(now + 3_600_000, 1_000)) >= base + 12, true, 'due once service time reaches them');

      // Two running (claimed), one done, one dead: the running ones still count.
      const wallNow = Date.now();
      const claimed = await jobs.claim('test-worker', { now, wallNow }, 60_000, 4, ['test.backlog-a']);
      assert.equal(claimed.length, 4);
      await jobs.complete(claimed[0]!.id, 'test-worker', now);
      await jobs.fail(claimed[1]!.id, 'test-worker', now, 'gave up', null);
      assert.equal(await jobs.countBacklog(now, 1_000), base + 6, 'done and dead ones left; running ones count');

      assert.equal(await jobs.countBacklog(now, 3), 3, 'counted up to the limit only');
      assert.equal(await jobs.countBacklog(now, 0), 0);
    });
  });
}
