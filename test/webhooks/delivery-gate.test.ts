/**
 * The pieces of delivery fairness (issue 9, point 5) on their own: the delivery gate's bounds per
 * merchant and per destination, its slow marks and deferral delays; the jittered retry schedule;
 * and the job queue's defer path (JobStore.defer, the runner's handling of Deferred) on both stores.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { callbackBackoff, callbackRetryDelay } from '../../src/delivery/callbacks.js';
import { DELIVERY_GATE_DEFAULTS, DeliveryGate, destinationOf } from '../../src/delivery/delivery-gate.js';
import { Deferred, type JobDefinition } from '../../src/jobs/job.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import { newId } from '../../src/shared/ids.js';
import { openTestStore, type TestStore } from '../foundation/fixtures.js';
import { availableStores } from '../support/stores.js';

const { perMerchant, perDestination, perSlowDestination, slowAfterMs, slowForMs, deferMs, maxDeferMs, waitingPerKey, maxWaitMs } = DELIVERY_GATE_DEFAULTS;

/**
 * A gate on a fake clock with a fixed jitter (0.5: the middle, i.e. no spread); by default nobody
 * waits for a slot (the bounds and deferrals on their own), `waiting` sets how many may.
 */
function fakeGate(random = () => 0.5, waiting: { waitingPerKey?: number; maxWaitMs?: number } = { waitingPerKey: 0 }) {
  const clock = { ms: 1_000_000 };
  return { clock, gate: new DeliveryGate({ now: () => clock.ms, random, ...waiting }) };
}

/** A send that stays under way until `finish` is called. */
function pending() {
  let finish!: (value: string) => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { send: () => promise, finish, fail };
}

const deferredBy = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    if (err instanceof Deferred) return err;
    throw err;
  }
  return null;
};

async function rejectsDeferred(promise: Promise<unknown>): Promise<Deferred> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Deferred) return err;
    throw err;
  }
  assert.fail('expected Deferred');
}

describe('delivery gate', () => {
  test('the defaults: 32 per merchant and 32 per destination (half of the delivery lane’s 64 job slots; three quarters with 16 waiting), 2 per slow destination; 16 may wait up to 1 s per key', () => {
    assert.deepEqual(
      { perMerchant, perDestination, perSlowDestination, slowAfterMs, slowForMs, waitingPerKey, maxWaitMs },
      { perMerchant: 32, perDestination: 32, perSlowDestination: 2, slowAfterMs: 2500, slowForMs: 5000, waitingPerKey: 16, maxWaitMs: 1000 },
    );
  });

  test('a full key: up to waitingPerKey deliveries wait for a slot (sent as slots come back, nothing deferred), the next one is deferred', async () => {
    const { gate } = fakeGate(undefined, { waitingPerKey: 3, maxWaitMs: 60_000 });
    const url = 'http://localhost:7000/cb';
    const sends = Array.from({ length: perMerchant }, () => pending());
    const running = sends.map((s) => gate.run({ merchant: 'A', url }, s.send));
    assert.equal(
      deferredBy(() => gate.check({ merchant: 'A', url })),
      null,
      'room to wait: the early check lets it read',
    );
    const order: number[] = [];
    const waiting = [0, 1, 2].map((i) => gate.run({ merchant: 'A', url }, async () => order.push(i)));
    await new Promise((r) => setImmediate(r));
    assert.equal(gate.stats().waiting, 3);
    assert.ok(
      deferredBy(() => gate.check({ merchant: 'A', url })),
      'the waiting room is full: the early check defers',
    );
    const deferred = await rejectsDeferred(gate.run({ merchant: 'A', url }, async () => 'x'));
    assert.match(deferred.message, /merchant A/);
    assert.equal(gate.stats().deferrals, 2);
    assert.equal(order.length, 0, 'nothing sent past the bound');
    for (const [i, s] of sends.entries()) {
      s.finish('ok');
      await running[i];
    }
    await Promise.all(waiting);
    assert.deepEqual([...order].sort(), [0, 1, 2], 'every waiting delivery was sent once a slot came back');
    assert.deepEqual(
      { waiting: gate.stats().waiting, inFlight: gate.stats().inFlight, deferrals: gate.stats().deferrals },
      { waiting: 0, inFlight: 0, deferrals: 2 },
    );
  });

  test('a wait ends after maxWaitMs with a deferral; a slow destination is never waited for', async () => {
    const { gate, clock } = fakeGate(undefined, { waitingPerKey: 4, maxWaitMs: 30 });
    const url = 'http://localhost:7000/cb';
    const sends = Array.from({ length: perMerchant }, () => pending());
    const running = sends.map((s) => gate.run({ merchant: 'A', url }, s.send));
    let sent = false;
    const started = performance.now();
    await rejectsDeferred(gate.run({ merchant: 'A', url }, async () => (sent = true)));
    assert.ok(performance.now() - started >= 25, 'it waited first');
    assert.equal(sent, false);
    assert.equal(gate.stats().waiting, 0);
    for (const s of sends) s.finish('ok');
    await Promise.all(running);
    // A timeout marks the destination slow: 2 at once, and the third is deferred at once.
    await gate.run({ merchant: 'B', url }, async () => {
      clock.ms += 5000;
    });
    const probes = Array.from({ length: perSlowDestination }, () => pending());
    const slowRunning = probes.map((p, i) => gate.run({ merchant: `S${i}`, url }, p.send));
    const at = performance.now();
    await rejectsDeferred(gate.run({ merchant: 'C', url }, async () => 'x'));
    assert.ok(performance.now() - at < 25, 'no wait for a slow destination');
    assert.ok(deferredBy(() => gate.check({ merchant: 'C', url })));
    for (const p of probes) p.finish('ok');
    await Promise.all(slowRunning);
  });

  test('the destination is host:port (the scheme’s default port when none is given)', () => {
    assert.equal(destinationOf('http://localhost:8080/cb?x=1'), 'localhost:8080');
    assert.equal(destinationOf('https://Shop.Example.com/cb'), 'shop.example.com:443');
    assert.equal(destinationOf('http://shop.example.com/cb'), 'shop.example.com:80');
    assert.equal(destinationOf('http://[::1]:9000/'), '[::1]:9000');
    assert.equal(destinationOf('not a url'), 'not a url');
  });

  test('per merchant: the bound holds across destinations; another merchant is not held back; nothing is sent when deferred', async () => {
    const { gate } = fakeGate();
    const sends = Array.from({ length: perMerchant }, () => pending());
    const running = sends.map((s, i) => gate.run({ merchant: 'A', url: `http://localhost:${9000 + i}/cb` }, s.send));
    let sent = false;
    const deferred = await rejectsDeferred(gate.run({ merchant: 'A', url: 'http://localhost:9999/cb' }, async () => (sent = true)));
    assert.equal(sent, false, 'nothing sent');
    assert.match(deferred.message, /merchant A/);
    assert.ok(
      deferredBy(() => gate.check({ merchant: 'A' })),
      'the early check agrees',
    );
    assert.equal(
      deferredBy(() => gate.check({ merchant: 'B' })),
      null,
    );
    assert.equal(await gate.run({ merchant: 'B', url: 'http://localhost:9000/cb' }, async () => 'b'), 'b', 'B goes through, even to a destination A uses');
    assert.equal(gate.stats().inFlight, perMerchant);
    sends[0]!.finish('a');
    assert.equal(await running[0], 'a');
    assert.equal(await gate.run({ merchant: 'A', url: 'http://localhost:9999/cb' }, async () => 'again'), 'again', 'a freed slot is usable at once');
    for (const s of sends.slice(1)) s.finish('a');
    await Promise.all(running);
    assert.equal(gate.stats().inFlight, 0);
  });

  test('per destination: the bound holds across merchants; the same host on another port is another destination', async () => {
    const { gate } = fakeGate();
    const sends = Array.from({ length: perDestination }, () => pending());
    const running = sends.map((s, i) => gate.run({ merchant: `M${i}`, url: `http://localhost:7000/cb/${i}` }, s.send));
    const deferred = await rejectsDeferred(gate.run({ merchant: 'fresh', url: 'http://LOCALHOST:7000/other' }, async () => 'x'));
    assert.match(deferred.message, /destination localhost:7000/);
    assert.ok(
      deferredBy(() => gate.check({ merchant: 'fresh', url: 'http://localhost:7000/x' })),
      'the early check agrees',
    );
    assert.equal(
      deferredBy(() => gate.check({ merchant: 'fresh', url: 'http://localhost:7001/x' })),
      null,
    );
    assert.equal(await gate.run({ merchant: 'fresh', url: 'http://localhost:7001/cb' }, async () => 'other port'), 'other port');
    for (const s of sends) s.finish('ok');
    await Promise.all(running);
  });

  test('the slots are given back whatever the send does: a rejected send frees them (no starvation)', async () => {
    const { gate } = fakeGate();
    for (let round = 0; round < 3; round++) {
      const sends = Array.from({ length: perMerchant }, () => pending());
      const running = sends.map((s) => gate.run({ merchant: 'A', url: 'http://localhost:7000/' }, s.send).catch((err: Error) => err.message));
      await rejectsDeferred(gate.run({ merchant: 'A', url: 'http://localhost:7000/' }, async () => 'x'));
      sends.forEach((s, i) => (i % 2 ? s.fail(new Error('boom')) : s.finish('ok')));
      assert.deepEqual(
        await Promise.all(running),
        sends.map((_, i) => (i % 2 ? 'boom' : 'ok')),
      );
      assert.equal(gate.stats().inFlight, 0);
    }
    await assert.rejects(
      gate.run({ merchant: 'A', url: 'http://localhost:7000/' }, () => Promise.reject(new Error('sync-ish'))),
      /sync-ish/,
    );
    assert.equal(gate.stats().inFlight, 0);
  });

  test('an attempt that takes half the timeout marks its destination slow for 5 s: 2 at once, until one ends quickly', async () => {
    const { gate, clock } = fakeGate();
    const url = 'http://localhost:7000/cb';
    // A timeout: the send ends 5 s after it started.
    await gate.run({ merchant: 'A', url }, async () => {
      clock.ms += 5000;
    });
    assert.deepEqual(gate.stats().slowDestinations, ['localhost:7000']);
    const probes = Array.from({ length: perSlowDestination }, () => pending());
    const running = probes.map((p, i) => gate.run({ merchant: `M${i}`, url }, p.send));
    const deferred = await rejectsDeferred(gate.run({ merchant: 'other', url }, async () => 'x'));
    assert.match(deferred.message, /slow destination localhost:7000/);
    assert.ok(
      deferredBy(() => gate.check({ merchant: 'other', url })),
      'the early check agrees',
    );
    // Just under the threshold is not slow; the mark also ends by itself after slowForMs.
    probes[0]!.finish('quick');
    await running[0];
    assert.deepEqual(gate.stats().slowDestinations, [], 'a quick answer clears the mark');
    await gate.run({ merchant: 'A', url }, async () => {
      clock.ms += slowAfterMs - 1;
    });
    assert.deepEqual(gate.stats().slowDestinations, []);
    await gate.run({ merchant: 'A', url }, async () => {
      clock.ms += slowAfterMs;
    });
    assert.deepEqual(gate.stats().slowDestinations, ['localhost:7000']);
    clock.ms += slowForMs;
    assert.deepEqual(gate.stats().slowDestinations, [], 'expired');
    probes[1]!.finish('done');
    await running[1];
  });

  test('the deferral delay: 250 ms doubling per round of deferrals on a full key up to 10 s, jittered ×0.5–1.5; short again after a quick delivery', async () => {
    let r = 0.5;
    const { gate, clock } = fakeGate(() => r);
    const sends = Array.from({ length: perMerchant }, () => pending());
    const running = sends.map((s) => gate.run({ merchant: 'A', url: 'http://localhost:7000/' }, s.send));
    // A burst deferred in one instant is one round: every job of it comes back after the short delay.
    const burst = Array.from({ length: 20 }, () => deferredBy(() => gate.check({ merchant: 'A' }))!.delayMs);
    assert.deepEqual(new Set(burst), new Set([250]));
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      clock.ms += delays.at(-1) ?? 250;
      delays.push(deferredBy(() => gate.check({ merchant: 'A' }))!.delayMs);
    }
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
    assert.equal(maxDeferMs, 10_000);
    r = 0;
    assert.equal(deferredBy(() => gate.check({ merchant: 'A' }))!.delayMs, maxDeferMs / 2);
    r = 0.999999;
    assert.equal(deferredBy(() => gate.check({ merchant: 'A' }))!.delayMs, Math.round(maxDeferMs * 1.499999));
    // The first delivery ran through all that (fake) time: slow, so nothing resets yet.
    sends[0]!.finish('slow');
    await running[0];
    const quick = pending();
    const quickRun = gate.run({ merchant: 'A', url: 'http://localhost:7002/' }, quick.send);
    quick.finish('quick');
    await quickRun;
    r = 0.5;
    // One slot taken again: A is full, its deferrals start short.
    const again = pending();
    void gate.run({ merchant: 'A', url: 'http://localhost:7001/' }, again.send);
    assert.equal(deferredBy(() => gate.check({ merchant: 'A' }))!.delayMs, deferMs);
    again.finish('x');
    for (const s of sends.slice(1)) s.finish('x');
    await Promise.all(running);
    assert.ok(gate.stats().deferrals >= 10);
  });
});

describe('jittered retry schedule', () => {
  const THREE_H = 3 * 3600 * 1000;

  test('the nominal schedule is the contract: 1 and 2 at once, attempt n ≥ 3 after 2^n s, capped at 3 h', () => {
    assert.deepEqual(
      Array.from({ length: 15 }, (_, i) => callbackBackoff(i)),
      [0, 0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 10_800, 10_800].map((s) => s * 1000),
    );
  });

  test('attempt 2 comes 250–1000 ms after attempt 1: prompt, but not in the same instant', () => {
    assert.equal(
      callbackRetryDelay(0, () => 0.7),
      0,
      'attempt 1 at once',
    );
    assert.equal(
      callbackRetryDelay(1, () => 0),
      250,
    );
    assert.equal(
      callbackRetryDelay(1, () => 0.999999),
      999,
    );
    for (let i = 0; i < 200; i++) {
      const d = callbackRetryDelay(1);
      assert.ok(d >= 250 && d < 1000, `${d}`);
    }
  });

  test('attempt n ≥ 3: 2^n s ± 10 %, never above 3 h; spread, not one value', () => {
    for (let failures = 2; failures < 25; failures++) {
      const nominal = callbackBackoff(failures);
      assert.equal(
        callbackRetryDelay(failures, () => 0),
        Math.min(THREE_H, Math.round(nominal * 0.9)),
        `low end, attempt ${failures + 1}`,
      );
      assert.equal(
        callbackRetryDelay(failures, () => 0.5),
        nominal,
        `middle, attempt ${failures + 1}`,
      );
      assert.equal(
        callbackRetryDelay(failures, () => 0.999999),
        Math.min(THREE_H, Math.round(nominal * (0.9 + 0.2 * 0.999999))),
        `high end, attempt ${failures + 1}`,
      );
      const samples = Array.from({ length: 100 }, () => callbackRetryDelay(failures));
      assert.ok(
        samples.every((d) => d >= nominal * 0.9 - 1 && d <= Math.min(THREE_H, nominal * 1.1 + 1)),
        `attempt ${failures + 1} within ±10 % and the cap`,
      );
      assert.ok(new Set(samples).size > 10, `attempt ${failures + 1} spread`);
    }
    assert.equal(
      callbackRetryDelay(2, () => 0),
      7200,
      'attempt 3: 8 s − 10 %',
    );
    assert.equal(
      callbackRetryDelay(2, () => 0.999999),
      8800,
      'attempt 3: 8 s + 10 %',
    );
  });
});

for (const kind of await availableStores()) {
  describe(`deferred jobs (${kind})`, () => {
    let t: TestStore;
    const runners: JobRunner[] = [];
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const runner = (definition: JobDefinition<never>) => {
      const clock = { now: () => t.clock.ms, nowIso: () => new Date(t.clock.ms).toISOString() };
      const r = new JobRunner({ store: t.store.jobs, clock, wallNow: () => t.clock.ms, logger, definitions: [definition] });
      runners.push(r);
      return r;
    };
    const rowOf = (id: string) =>
      t.store.db
        .selectFrom('jobs')
        .select(['state', 'attempts', 'runAt', 'leasedBy', 'leaseUntil', 'lastError'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const idOf = async (kind: string) => (await t.store.db.selectFrom('jobs').select('id').where('kind', '=', kind).executeTakeFirstOrThrow()).id;

    before(async () => {
      t = await openTestStore(kind);
    });
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop(100);
    });
    after(() => t.close());

    test('JobStore.defer re-queues a claimed job at runAt and takes back the attempt its claim counted; only its own lease', async () => {
      const kind = `defer.${newId()}`;
      await t.store.jobs.enqueue({ kind, payload: {} });
      const id = await idOf(kind);
      const at = { now: t.clock.ms, wallNow: t.clock.ms };
      const [claimed] = await t.store.jobs.claim('w1', at, 30_000, 10, [kind]);
      assert.equal(claimed!.attempts, 1);
      await t.store.jobs.defer(id, 'someone-else', t.clock.ms + 1);
      assert.equal((await rowOf(id)).state, 'running', 'another worker cannot give it back');
      await t.store.jobs.defer(id, 'w1', t.clock.ms + 700);
      const row = await rowOf(id);
      assert.deepEqual(
        { ...row, runAt: Date.parse(row.runAt) },
        { state: 'queued', attempts: 0, runAt: t.clock.ms + 700, leasedBy: null, leaseUntil: null, lastError: null },
      );
      assert.deepEqual(await t.store.jobs.claim('w1', at, 30_000, 10, [kind]), [], 'not due before runAt');
      const [again] = await t.store.jobs.claim('w1', { now: t.clock.ms + 700, wallNow: t.clock.ms }, 30_000, 10, [kind]);
      assert.equal(again!.attempts, 1, 'the next claim is attempt 1 again');
    });

    test('a handler that throws Deferred: the job comes back later with no attempt counted, never dies of it, and nothing is logged', async () => {
      const kind = `deferred.${newId()}`;
      const seen: number[] = [];
      let deferrals = 0;
      const r = runner({
        kind,
        maxAttempts: 2,
        leaseMs: 30_000,
        backoff: () => 60_000,
        async handle(_payload, ctx) {
          if (deferrals < 5) {
            deferrals++;
            throw new Deferred('gate full', 300);
          }
          seen.push(ctx.attempt);
        },
      } as JobDefinition<never>);
      await t.store.jobs.enqueue({ kind, payload: {} });
      const id = await idOf(kind);
      const linesBefore = lines.length;
      for (let i = 0; i < 5; i++) {
        assert.equal(await r.drain(), 1);
        const row = await rowOf(id);
        assert.deepEqual([row.state, row.attempts, Date.parse(row.runAt)], ['queued', 0, t.clock.ms + 300], `deferral ${i + 1}`);
        assert.equal(await r.drain(), 0, 'not before its delay');
        t.clock.ms += 300;
      }
      assert.equal(await r.drain(), 1);
      assert.deepEqual(seen, [1], 'it ran as attempt 1 after 5 deferrals with maxAttempts 2');
      assert.equal((await rowOf(id)).state, 'done');
      assert.equal(lines.length, linesBefore, 'no log line for a deferral');
    });
  });
}
