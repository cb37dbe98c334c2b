/**
 * The runner's lanes on both stores: deliveries and payment work run in slots of their own, each
 * lane claims, takes handed jobs and wakes for its own kinds, and drain() runs every lane empty.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { JobDefinition, JobLane } from '../../src/jobs/job.js';
import { JobLanes } from '../../src/jobs/lanes.js';
import { createLogger } from '../../src/logger.js';
import { newId } from '../../src/shared/ids.js';
import { availableStores } from '../support/stores.js';
import { openTestStore, type TestStore, waitFor } from './fixtures.js';

const logger = createLogger('silent');

/** A job kind of `lane` (handed over when asked) whose runs call `handle`. */
function kindOf(lane: JobLane, handle: JobDefinition<never>['handle']): JobDefinition<never> {
  return { kind: `${lane}.${newId()}`, lane, handoff: true, maxAttempts: 3, leaseMs: 30_000, backoff: () => 1000, handle };
}

for (const store of await availableStores()) {
  describe(`job runner lanes (${store})`, () => {
    let t: TestStore;
    let lanes: JobLanes[] = [];
    /** Lanes over the test store whose claims are recorded (the kinds each asked for). */
    const lanesOf = (definitions: JobDefinition<never>[], concurrency: number) => {
      const claims: string[][] = [];
      const jobs = Object.create(t.store.jobs) as typeof t.store.jobs;
      jobs.claim = (...args: Parameters<typeof t.store.jobs.claim>) => {
        claims.push(args[4]);
        return t.store.jobs.claim(...args);
      };
      const clock = { now: () => t.clock.ms, nowIso: () => new Date(t.clock.ms).toISOString() };
      const l = new JobLanes({ store: jobs, clock, wallNow: () => t.clock.ms, logger, definitions, concurrency, idlePollMs: 60_000 });
      lanes.push(l);
      return { lanes: l, claims };
    };
    const stateOf = async (kind: string) => (await t.store.db.selectFrom('jobs').select('state').where('kind', '=', kind).execute()).map((r) => r.state).sort();

    before(async () => {
      t = await openTestStore(store);
    });
    afterEach(async () => {
      t.handoff.to = null;
      t.enqueued.to = null;
      for (const l of lanes) await l.stop(100);
      lanes = [];
    });
    after(() => t.close());

    test('deliveries that fill their lane hold no slot of payment work: a payment queued after them runs while they wait', async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let delivering = 0;
      let mostDelivering = 0;
      const delivery = kindOf('deliveries', async () => {
        mostDelivering = Math.max(mostDelivering, ++delivering);
        await released;
        delivering--;
      });
      let paid = false;
      const payment = kindOf('payments', async () => void (paid = true));
      const { lanes: l } = lanesOf([delivery, payment], 2);
      for (let i = 0; i < 4; i++) await t.store.jobs.enqueue({ kind: delivery.kind, payload: { i } });
      await t.store.jobs.enqueue({ kind: payment.kind, payload: {}, runAt: t.clock.ms + 1 });
      l.start();
      // The payment falls due once the deliveries hold their lane (else its lane may run it first).
      await waitFor('the deliveries to fill their lane', () => delivering === 2);
      t.clock.ms += 1;
      l.notify(t.clock.ms, payment.kind);
      await waitFor('the payment to run', () => paid);
      assert.equal(delivering, 2, 'two deliveries still waiting on their receiver, in their lane’s two slots');
      release();
      await waitFor('every delivery to be done', async () => (await stateOf(delivery.kind)).every((s) => s === 'done'));
      assert.equal(mostDelivering, 2, 'never more deliveries at once than their lane’s slots');
      assert.deepEqual(await stateOf(payment.kind), ['done']);
    });

    test('a lane with a backlog does not stop the other taking jobs handed over in a commit; each hands over only its own kinds', async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const delivery = kindOf('deliveries', () => released);
      const ran: string[] = [];
      const payment = kindOf('payments', async (payload) => void ran.push((payload as { n: string }).n));
      const { lanes: l, claims } = lanesOf([delivery, payment], 1);
      // One delivery running, two queued behind it: the deliveries lane is full, its queue not claimed to the end.
      for (let i = 0; i < 3; i++) await t.store.jobs.enqueue({ kind: delivery.kind, payload: { i } });
      l.start();
      await waitFor('both lanes’ first claims', () => claims.length >= 2);
      await waitFor('the payments lane to take handed jobs', () => {
        const lease = l.take(payment.kind);
        lease?.cancel();
        return lease !== null;
      });
      assert.equal(l.take(delivery.kind), null, 'the full deliveries lane takes none');
      t.handoff.to = l;
      const claimsBefore = claims.length;
      await t.store.transaction(async (repos) => repos.jobs.enqueue({ kind: payment.kind, payload: { n: 'handed' } }));
      await waitFor('the handed payment to run', () => ran.length === 1);
      assert.deepEqual(ran, ['handed']);
      assert.equal(claims.length, claimsBefore, 'run without a claim');
      release();
      await waitFor('the deliveries to be done', async () => (await stateOf(delivery.kind)).every((s) => s === 'done'));
    });

    test('jobs queued in a commit wake the lane of their kind only', async () => {
      const delivery = kindOf('deliveries', async () => undefined);
      const payment = kindOf('payments', async () => undefined);
      const { lanes: l, claims } = lanesOf([delivery, payment], 2);
      t.enqueued.to = (dueAt, kind) => l.notify(dueAt, kind);
      l.start();
      await waitFor('both lanes’ first claims', () => claims.length >= 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = claims.length;
      // Not handed over (no handoff set): queued, and its lane told.
      await t.store.transaction(async (repos) => repos.jobs.enqueue({ kind: delivery.kind, payload: {} }));
      await waitFor('the delivery to be done', async () => (await stateOf(delivery.kind)).join() === 'done');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const woken = claims.slice(before);
      assert.ok(woken.length >= 1, 'the deliveries lane claimed');
      assert.ok(
        woken.every((kinds) => kinds.includes(delivery.kind) && !kinds.includes(payment.kind)),
        `only the deliveries lane claimed: ${JSON.stringify(woken)}`,
      );
    });

    test('drain runs every lane until none has a due job, across lanes', async () => {
      const delivered: string[] = [];
      const delivery = kindOf('deliveries', async (payload) => void delivered.push((payload as { of: string }).of));
      const payment = kindOf('payments', async (payload) => {
        await t.store.jobs.enqueue({ kind: delivery.kind, payload: { of: (payload as { n: string }).n } });
      });
      const { lanes: l } = lanesOf([delivery, payment], 4);
      for (const n of ['a', 'b', 'c']) await t.store.jobs.enqueue({ kind: payment.kind, payload: { n } });
      assert.equal(await l.drain(), 6, 'three payments, then the three deliveries they queued');
      assert.deepEqual(delivered.sort(), ['a', 'b', 'c']);
      assert.equal(await l.drain(), 0);
    });
  });
}
