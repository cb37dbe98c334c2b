/**
 * The job runner on both stores: retries with backoff, dead letter after the definition's
 * maxAttempts, a crashed worker's lease picked up again, clock jumps and graceful stop.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ServiceClock } from '../../src/clock.js';
import { Deferred, exponentialBackoff, type JobDefinition, RetryLater } from '../../src/jobs/job.js';
import { JobRunner, KNOWN_LIMIT } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import { newId } from '../../src/shared/ids.js';
import { availableStores } from '../support/stores.js';
import { iso, openTestStore, type TestStore, waitFor } from './fixtures.js';

const logger = createLogger('silent');

test('exponential backoff doubles from the base and stops at the cap', () => {
  const backoff = exponentialBackoff(1000, 10_000);
  assert.deepEqual([1, 2, 3, 4, 5, 9].map(backoff), [1000, 2000, 4000, 8000, 10_000, 10_000]);
});

for (const kind of await availableStores()) {
  describe(`job runner (${kind})`, () => {
    let t: TestStore;
    const runners: JobRunner[] = [];
    const fakeClock = () => ({ now: () => t.clock.ms, nowIso: () => new Date(t.clock.ms).toISOString() });
    const runner = (definitions: JobDefinition<never>[], options: Partial<ConstructorParameters<typeof JobRunner>[0]> = {}) => {
      const r = new JobRunner({ store: t.store.jobs, clock: fakeClock(), wallNow: () => t.clock.ms, logger, definitions, ...options });
      runners.push(r);
      return r;
    };
    const stateOf = async (id: string) =>
      await t.store.db.selectFrom('jobs').select(['state', 'attempts', 'runAt', 'lastError']).where('id', '=', id).executeTakeFirstOrThrow();
    const jobIdOf = async (kind: string) => (await t.store.db.selectFrom('jobs').select('id').where('kind', '=', kind).executeTakeFirstOrThrow()).id;

    before(async () => {
      t = await openTestStore(kind);
    });
    afterEach(async () => {
      t.handoff.to = null;
      for (const r of runners.splice(0)) await r.stop(100);
    });
    after(() => t.close());

    test('a failing job is retried after its backoff and completes; the handler sees the attempt number', async () => {
      const kind = `retry.${newId()}`;
      const attempts: number[] = [];
      const r = runner([
        {
          kind,
          maxAttempts: 5,
          leaseMs: 30_000,
          backoff: (n) => n * 10_000,
          async handle(_payload, ctx) {
            attempts.push(ctx.attempt);
            if (ctx.attempt < 3) throw new Error(`failure ${ctx.attempt}`);
          },
        } as JobDefinition<never>,
      ]);
      await t.store.jobs.enqueue({ kind, payload: { x: 1 } });
      const id = await jobIdOf(kind);
      const start = t.clock.ms;
      assert.equal(await r.drain(), 1);
      let row = await stateOf(id);
      assert.deepEqual([row.state, row.attempts, row.lastError], ['queued', 1, 'failure 1']);
      assert.equal(Date.parse(row.runAt), start + 10_000, 'first backoff');
      assert.equal(await r.drain(), 0, 'not due before the backoff');
      t.clock.ms = start + 10_000;
      await r.drain();
      row = await stateOf(id);
      assert.equal(Date.parse(row.runAt), start + 10_000 + 20_000, 'second backoff is longer');
      t.clock.ms = start + 30_000;
      await r.drain();
      assert.equal((await stateOf(id)).state, 'done');
      assert.deepEqual(attempts, [1, 2, 3]);
    });

    test('claims: a job ending wakes the runner only when its claim may have left jobs behind or the job went back to the queue', async () => {
      const quick = `quick.${newId()}`;
      const flaky = `flaky.${newId()}`;
      const done: string[] = [];
      let claims = 0;
      const store = Object.create(t.store.jobs) as typeof t.store.jobs;
      store.claim = (...args: Parameters<typeof t.store.jobs.claim>) => {
        claims++;
        return t.store.jobs.claim(...args);
      };
      const r = runner(
        [
          { kind: quick, maxAttempts: 5, leaseMs: 30_000, backoff: () => 1000, handle: async () => void done.push(quick) } as JobDefinition<never>,
          {
            kind: flaky,
            maxAttempts: 5,
            leaseMs: 30_000,
            backoff: () => 0,
            async handle(_payload, ctx) {
              if (ctx.attempt === 1) throw new Error('once');
              done.push(flaky);
            },
          } as JobDefinition<never>,
        ],
        { store, concurrency: 4, idlePollMs: 60_000 },
      );
      r.start();
      await waitFor('the first idle claim', () => claims >= 1);
      const idle = claims;
      await t.store.jobs.enqueue({ kind: quick, payload: {} });
      r.notify();
      await waitFor('the quick job', () => done.includes(quick));
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(claims - idle, 1, 'one claim took the job; its end claimed nothing more (the claim had room to spare)');
      // A job that fails with a retry due at once goes back to the queue: its end wakes the runner.
      await t.store.jobs.enqueue({ kind: flaky, payload: {} });
      r.notify();
      await waitFor('the retried job', () => done.includes(flaky));
    });

    test("dead-letters after the definition's maxAttempts (not the store's default of 25)", async () => {
      const kind = `dead.${newId()}`;
      let calls = 0;
      const r = runner([
        {
          kind,
          maxAttempts: 3,
          leaseMs: 30_000,
          backoff: () => 1,
          async handle() {
            calls++;
            throw new Error('always');
          },
        } as JobDefinition<never>,
      ]);
      await t.store.jobs.enqueue({ kind, payload: null });
      const id = await jobIdOf(kind);
      for (let i = 0; i < 6; i++) {
        await r.drain();
        t.clock.ms += 10;
      }
      assert.equal(calls, 3);
      const row = await stateOf(id);
      assert.deepEqual([row.state, row.attempts, row.lastError], ['dead', 3, 'always']);
      assert.ok((await t.store.jobs.listDead(1000)).some((j) => j.id === id));
      assert.equal(await t.store.jobs.retryDead(id, t.clock.ms), true);
      await r.drain();
      assert.equal(calls, 4, 'an operator retry runs it again');
    });

    test('RetryLater sets its own delay; a job with no handler is retried, then dead', async () => {
      const kind = `later.${newId()}`;
      let calls = 0;
      const r = runner([
        {
          kind,
          maxAttempts: 5,
          leaseMs: 30_000,
          backoff: () => 999_999,
          async handle() {
            calls++;
            if (calls === 1) throw new RetryLater('acquirer timeout', 1234);
          },
        } as JobDefinition<never>,
      ]);
      await t.store.jobs.enqueue({ kind, payload: null });
      const id = await jobIdOf(kind);
      const start = t.clock.ms;
      await r.drain();
      assert.equal(Date.parse((await stateOf(id)).runAt), start + 1234);
      t.clock.ms = start + 1234;
      await r.drain();
      assert.equal((await stateOf(id)).state, 'done');
    });

    test("a crashed worker's lease runs out and another worker picks the job up", async () => {
      const kind = `crash.${newId()}`;
      const seen: number[] = [];
      const def = {
        kind,
        maxAttempts: 5,
        leaseMs: 30_000,
        backoff: () => 1000,
        async handle(_p: never, ctx: { attempt: number }) {
          seen.push(ctx.attempt);
        },
      } as JobDefinition<never>;
      await t.store.jobs.enqueue({ kind, payload: null });
      // The crashed worker claimed it and vanished without completing or failing it.
      const [claimed] = await t.store.jobs.claim('crashed-worker', { now: t.clock.ms, wallNow: t.clock.ms }, 30_000, 1, [kind]);
      assert.ok(claimed);
      const survivor = runner([def]);
      assert.equal(await survivor.drain(), 0, 'the lease still holds');
      t.clock.ms += 30_001;
      assert.equal(await survivor.drain(), 1);
      assert.deepEqual(seen, [2], 'the crashed attempt counts');
      assert.equal((await stateOf(claimed.id)).state, 'done');
    });

    test('a service-clock jump does not take a running job from its worker: leases are wall-clock time', async () => {
      const kind = `jump.${newId()}`;
      let release: () => void = () => undefined;
      const blocker = new Promise<void>((resolve) => (release = resolve));
      let runs = 0;
      const def = {
        kind,
        maxAttempts: 5,
        leaseMs: 30_000,
        backoff: () => 0,
        async handle() {
          runs++;
          await blocker;
        },
      } as JobDefinition<never>;
      const wall = t.clock.ms;
      const busy = runner([def], { wallNow: () => wall });
      const other = runner([def], { wallNow: () => wall + 1000 });
      await t.store.jobs.enqueue({ kind, payload: null });
      const running = busy.drain();
      await waitFor('the handler to start', () => runs === 1);
      t.clock.ms += 3_600_000; // the sandbox moves service time an hour ahead
      assert.equal(await other.drain(), 0, 'the lease still holds one second of real time later');
      release();
      await running;
      assert.equal(runs, 1);
    });

    test('the heartbeat keeps renewing the lease of a job that runs longer than its lease', async () => {
      const kind = `beat.${newId()}`;
      let release: () => void = () => undefined;
      const blocker = new Promise<void>((resolve) => (release = resolve));
      let runs = 0;
      const def = {
        kind,
        maxAttempts: 5,
        leaseMs: 1500,
        backoff: () => 0,
        async handle() {
          runs++;
          await blocker;
        },
      } as JobDefinition<never>;
      // Real wall time: the lease of 1.5 s is renewed every 0.5 s while the handler runs for 3.5 s.
      const busy = runner([def], { wallNow: Date.now, idlePollMs: 20 });
      const other = runner([def], { wallNow: Date.now });
      await t.store.jobs.enqueue({ kind, payload: null });
      busy.start();
      await waitFor('the handler to start', () => runs === 1);
      for (let i = 0; i < 7; i++) {
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(await other.drain(), 0, `still leased after ${(i + 1) * 0.5} s`);
      }
      release();
      assert.equal(runs, 1);
    });

    test('a sandbox clock jump wakes a sleeping runner at once', async () => {
      const clock = new ServiceClock(t.store.settings, true);
      await clock.init();
      const kind = `wake.${newId()}`;
      let ran = false;
      // A poll interval far beyond the test: only the wake-up can make the job run in time.
      const r = new JobRunner({
        store: t.store.jobs,
        clock,
        logger,
        idlePollMs: 600_000,
        definitions: [
          {
            kind,
            maxAttempts: 1,
            leaseMs: 30_000,
            backoff: () => 0,
            async handle() {
              ran = true;
            },
          } as JobDefinition<never>,
        ],
      });
      runners.push(r);
      clock.onJump(() => r.notify());
      await t.store.jobs.enqueue({ kind, payload: null, runAt: clock.now() + 3_600_000 });
      r.start();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(ran, false, 'not due yet');
      await clock.advance(3601);
      await waitFor('the job to run after the jump', () => ran, 3000);
    });

    test('stop waits for running handlers, then gives back leases it still holds without counting the attempt', async () => {
      const clock = new ServiceClock(null, false);
      const kind = `stop.${newId()}`;
      let release: () => void = () => undefined;
      let started = false;
      const blocker = new Promise<void>((resolve) => (release = resolve));
      const r = new JobRunner({
        store: t.store.jobs,
        clock,
        logger,
        definitions: [
          {
            kind,
            maxAttempts: 5,
            leaseMs: 30_000,
            backoff: () => 0,
            async handle() {
              started = true;
              await blocker;
            },
          } as JobDefinition<never>,
        ],
      });
      await t.store.jobs.enqueue({ kind, payload: null, runAt: 0 });
      r.start();
      await waitFor('the handler to start', () => started);
      const id = await jobIdOf(kind);
      await r.stop(50);
      const row = await stateOf(id);
      assert.deepEqual([row.state, row.attempts], ['queued', 0], 'lease released, attempt not counted');
      release();
    });

    /** A runner whose claims are counted, idle after its first (empty) claim, taking handed jobs. */
    const handingRunner = async (definitions: JobDefinition<never>[], concurrency = 4) => {
      const counted = { claims: 0 };
      const store = Object.create(t.store.jobs) as typeof t.store.jobs;
      store.claim = (...args: Parameters<typeof t.store.jobs.claim>) => {
        counted.claims++;
        return t.store.jobs.claim(...args);
      };
      const r = runner(definitions, { store, concurrency, idlePollMs: 60_000 });
      r.start();
      await waitFor('the first idle claim', () => counted.claims >= 1);
      // Its sleep after that claim reads the next due time; let it settle.
      await new Promise((resolve) => setTimeout(resolve, 50));
      t.handoff.to = r;
      return { r, counted };
    };
    /** Until the runner's last claim took every due job (it takes jobs again); the slot that check takes is given back. */
    const untilTaking = (r: JobRunner, kind: string) =>
      waitFor('a claim that took every due job', () => {
        const lease = r.take(kind);
        lease?.cancel();
        return lease !== null;
      });
    const handedKind = (kind: string, handle: JobDefinition<never>['handle']) =>
      ({ kind, handoff: true, maxAttempts: 5, leaseMs: 30_000, backoff: () => 1000, handle }) as JobDefinition<never>;
    const knowingKind = (kind: string, handle: JobDefinition<never>['handle']) =>
      ({ ...handedKind(kind, handle), knownWhenClaimed: true }) as JobDefinition<never>;

    test('a due job enqueued in a commit goes to the idle runner of the same process: written leased, run after the commit, no claim', async () => {
      const kind = `handed.${newId()}`;
      const seen: Array<{ attempt: number; state: string; attempts: number; leasedBy: string | null }> = [];
      const { r, counted } = await handingRunner([
        handedKind(kind, async (_payload, ctx) => {
          const row = await t.store.db.selectFrom('jobs').select(['state', 'attempts', 'leasedBy']).where('id', '=', ctx.job.id).executeTakeFirstOrThrow();
          seen.push({ attempt: ctx.attempt, ...row });
        }),
      ]);
      const claimsBefore = counted.claims;
      await t.store.transaction(async (repos) => {
        await repos.jobs.enqueue({ kind, payload: { n: 1 } });
        // Inside the commit nothing has started yet.
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(seen.length, 0, 'not started before its commit is done');
      });
      await waitFor('the handed job to run', () => seen.length === 1);
      assert.deepEqual(seen[0], { attempt: 1, state: 'running', attempts: 1, leasedBy: r.workerId }, 'its row leased to this runner, first attempt');
      const id = await jobIdOf(kind);
      await waitFor('the job to be done', async () => (await stateOf(id)).state === 'done');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(counted.claims, claimsBefore, 'no claim for it, and none after it');
    });

    test('not handed over: a kind that does not allow it, a job not yet due, a full runner, jobs queued ahead; a failed commit gives its slot back', async () => {
      const handed = `handed.${newId()}`;
      const plain = `plain.${newId()}`;
      const ran: string[] = [];
      let release: () => void = () => undefined;
      const blocker = new Promise<void>((resolve) => (release = resolve));
      const { r } = await handingRunner(
        [
          handedKind(handed, async (payload: never) => {
            ran.push((payload as { name: string }).name);
            if ((payload as { block?: boolean }).block) await blocker;
          }),
          { kind: plain, maxAttempts: 5, leaseMs: 30_000, backoff: () => 1000, handle: async () => void ran.push('plain') } as JobDefinition<never>,
        ],
        1,
      );
      const rowOf = async (name: string) =>
        await t.store.db
          .selectFrom('jobs')
          .select(['state', 'leasedBy'])
          .where('kind', '=', handed)
          .where('payload', 'like', `%"${name}"%`)
          .executeTakeFirstOrThrow();
      // A kind without `handoff`: queued, for a claim.
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind: plain, payload: {} }));
      assert.equal((await t.store.db.selectFrom('jobs').select('state').where('kind', '=', plain).executeTakeFirstOrThrow()).state, 'queued');
      r.notify(); // what the service's store does after a commit that queued a job
      await waitFor('the plain job, claimed', () => ran.includes('plain'));
      await untilTaking(r, handed);
      // A failed commit: its slot is given back, and the one slot takes the next job.
      const failed = t.store.transaction(async (repos) => {
        await repos.jobs.enqueue({ kind: handed, payload: { name: 'rolled-back' } });
        throw new Error('the commit fails');
      });
      await assert.rejects(failed, /the commit fails/);
      // Not yet due: queued at its time.
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind: handed, payload: { name: 'later' }, runAt: t.clock.ms + 60_000 }));
      assert.equal((await rowOf('later')).state, 'queued');
      // The one slot takes a job that blocks; the next finds the runner full and is queued.
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind: handed, payload: { name: 'first', block: true } }));
      assert.deepEqual(await rowOf('first'), { state: 'running', leasedBy: r.workerId }, 'handed over: the failed commit gave its slot back');
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind: handed, payload: { name: 'second' } }));
      assert.deepEqual(await rowOf('second'), { state: 'queued', leasedBy: null }, 'the runner is full');
      r.notify();
      // The slot frees; until a claim has taken 'second', nothing goes ahead of it.
      release();
      await waitFor('the queued job, claimed', () => ran.includes('second'));
      assert.deepEqual(ran.slice(1), ['first', 'second']);
      assert.equal(ran.includes('rolled-back'), false);
      assert.equal((await t.store.db.selectFrom('jobs').select('id').where('payload', 'like', '%rolled-back%').execute()).length, 0);
    });

    test('a unit run again (SQLite: a replayable unit after which another failed) hands its job over once and runs its after-commit work once', async () => {
      const kind = `replayed.${newId()}`;
      const ran: string[] = [];
      await handingRunner([handedKind(kind, async (payload: never) => void ran.push((payload as { name: string }).name))], 1);
      const replaysBefore = t.store.batcher?.stats.replays ?? 0;
      let afterCommits = 0;
      // Queued in one turn: one group commit on SQLite, the failing unit after the other.
      const [first, second] = await Promise.allSettled([
        t.store.transaction(async (repos) => {
          await repos.jobs.enqueue({ kind, payload: { name: 'kept' } });
          repos.afterCommit(() => afterCommits++);
        }, 'rerunnable'),
        t.store.transaction(async () => {
          throw new Error('the second unit fails');
        }, 'rerunnable'),
      ]);
      assert.equal(first.status, 'fulfilled');
      assert.equal(second.status, 'rejected');
      if (t.store.batcher) assert.equal(t.store.batcher.stats.replays, replaysBefore + 1, 'the first unit ran again');
      await waitFor('the handed job to run', () => ran.length === 1);
      const rows = await t.store.db.selectFrom('jobs').select(['state', 'leasedBy']).where('kind', '=', kind).execute();
      assert.equal(rows.length, 1);
      await waitFor('the job to be done', async () => (await stateOf(await jobIdOf(kind))).state === 'done');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(ran, ['kept'], 'started once');
      assert.equal(afterCommits, 1);
      // The slot the first run was handed came back: the one slot takes the next job.
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind, payload: { name: 'next' } }));
      await waitFor('the next job to run', () => ran.length === 2);
    });

    test("a job queued with its commit's record (the runner full) gets that record at its first claim here, again after a deferral; not a retry, not one pushed out of the runner's memory, not a kind that does not allow it", async () => {
      const kind = `known.${newId()}`;
      const seen: Array<{ name: string; attempt: number; known: unknown }> = [];
      let release: () => void = () => undefined;
      const blocker = new Promise<void>((resolve) => (release = resolve));
      const handle: JobDefinition<never>['handle'] = async (payload: never, ctx) => {
        const { name } = payload as { name: string };
        seen.push({ name, attempt: ctx.attempt, known: ctx.job.known });
        if (name === 'blocking') await blocker;
        if (name === 'failing' && ctx.attempt === 1) throw new RetryLater('once more', 1000);
        // Put back without an attempt (a full delivery gate), once.
        if (name === 'deferred' && seen.filter((run) => run.name === 'deferred').length === 1) throw new Deferred('gate full', 0);
      };
      // A kind handed over but not allowed its record when claimed.
      const handedOnly = `handed-only.${newId()}`;
      const { r } = await handingRunner([knowingKind(kind, handle), handedKind(handedOnly, handle)], 1);
      const enqueue = (name: string) => t.store.transaction((repos) => repos.jobs.enqueue({ kind, payload: { name }, known: { wrote: name } }));
      await enqueue('blocking');
      await waitFor('the blocking job, handed over', () => seen.length === 1);
      assert.deepEqual(seen[0], { name: 'blocking', attempt: 1, known: { wrote: 'blocking' } });
      // The one slot is taken: these are queued, for a claim.
      await enqueue('forgotten');
      const forgottenId = (
        await t.store.db.selectFrom('jobs').select('id').where('kind', '=', kind).where('payload', 'like', '%forgotten%').executeTakeFirstOrThrow()
      ).id;
      assert.equal((await stateOf(forgottenId)).state, 'queued');
      // Newer records push the oldest out: the runner keeps KNOWN_LIMIT of them.
      for (let i = 0; i < KNOWN_LIMIT; i++) r.remember(`other-${i}`, kind, {});
      await enqueue('queued');
      await enqueue('failing');
      await enqueue('deferred');
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind: handedOnly, payload: { name: 'handed-only' }, known: { wrote: 'handed-only' } }));
      release();
      r.notify();
      await waitFor('every job to run once, the deferred one twice', () => seen.length === 7, 4000);
      t.clock.ms += 1000;
      r.notify();
      await waitFor('the retry', () => seen.length === 8);
      const byRun = seen.slice(1).map(({ name, attempt, known }) => `${name}#${attempt}:${known === undefined ? 'read' : (known as { wrote: string }).wrote}`);
      assert.deepEqual(
        byRun.sort(),
        [
          'deferred#1:deferred',
          'deferred#1:deferred',
          'failing#1:failing',
          'failing#2:read',
          'forgotten#1:read',
          'handed-only#1:read',
          'queued#1:queued',
        ].sort(),
      );
    });

    test('a notice of a job not yet due does not wake the runner for a claim: it wakes when the job comes due', async () => {
      const kind = `later.${newId()}`;
      const ran: number[] = [];
      const { r, counted } = await handingRunner([handedKind(kind, async () => void ran.push(t.clock.ms))]);
      const claimsBefore = counted.claims;
      const dueAt = t.clock.ms + 300;
      await t.store.transaction((repos) => repos.jobs.enqueue({ kind, payload: {}, runAt: dueAt }));
      r.notify(dueAt); // what the service's store does after a commit that queued a job for later
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(counted.claims, claimsBefore, 'no claim for a job that is not due');
      const lease = r.take(kind);
      assert.ok(lease, 'nothing due is queued ahead: the runner still takes handed jobs');
      lease.cancel();
      t.clock.ms = dueAt;
      await waitFor('the job, claimed when it came due', () => ran.length === 1, 2000);
      assert.equal(counted.claims, claimsBefore + 1, 'one claim, at its due time (not the 60 s idle poll)');
    });

    test('a job is not handed over while a notified enqueue may wait in the queue, and stop waits for a handed job whose commit is under way', async () => {
      const kind = `handed.${newId()}`;
      const ran: string[] = [];
      const { r } = await handingRunner([handedKind(kind, async (payload: never) => void ran.push((payload as { name: string }).name))]);
      const first = r.take(kind);
      assert.ok(first, 'idle, nothing queued: a slot');
      first.cancel();
      r.notify();
      assert.equal(r.take(kind), null, 'something was enqueued for a claim: no job goes ahead of it');
      await untilTaking(r, kind);
      const lease = r.take(kind)!;
      const stopped = r.stop(2000);
      setTimeout(
        () =>
          lease.start({
            id: newId(),
            kind,
            payload: { name: 'late' },
            state: 'running',
            attempts: 1,
            maxAttempts: 5,
            runAt: iso(t.clock.ms),
            lastError: null,
            createdAt: iso(t.clock.ms),
            updatedAt: iso(t.clock.ms),
          }),
        30,
      );
      await stopped;
      assert.deepEqual(ran, ['late'], 'stop waited for the commit under way, then for its job');
    });

    /** Kind `first` settles in its own commit as done, continued as a job of `next`, then throws after that commit. */
    const continuing = (first: string, next: string) =>
      ({
        kind: first,
        maxAttempts: 5,
        leaseMs: 30_000,
        backoff: () => 1000,
        handle: async (_payload: never, ctx) => {
          await t.store.transaction((repos) =>
            ctx.settleIn(repos.jobs, { done: true, continueAs: { kind: next, payload: { from: ctx.job.id }, dedupeKey: `${next}:${ctx.job.id}` } }),
          );
          throw new Error('a failure after the commit that settled the job');
        },
      }) as JobDefinition<never>;
    const rowsOf = async (kinds: string[]) => await t.store.db.selectFrom('jobs').selectAll().where('kind', 'in', kinds).execute();

    test("continueAs: the finished job's row becomes the next job under a new id (no row added), handed over; a failure after the commit leaves it alone", async () => {
      const first = `first.${newId()}`;
      const next = `next.${newId()}`;
      const ran: Array<{ id: string; attempt: number; payload: unknown }> = [];
      const { r } = await handingRunner([
        continuing(first, next),
        handedKind(next, async (payload, ctx) => void ran.push({ id: ctx.job.id, attempt: ctx.attempt, payload })),
      ]);
      await untilTaking(r, next);
      await t.store.jobs.enqueue({ kind: first, payload: null });
      r.notify();
      await waitFor('the next job to run', () => ran.length === 1);
      const firstId = (ran[0]!.payload as { from: string }).from;
      assert.notEqual(ran[0]!.id, firstId, 'a new id');
      assert.equal(ran[0]!.attempt, 1);
      await waitFor('the next job to be done', async () => (await stateOf(ran[0]!.id)).state === 'done');
      const rows = await rowsOf([first, next]);
      assert.equal(rows.length, 1, 'one row: the first job became the next');
      assert.deepEqual(
        { kind: rows[0]!.kind, state: rows[0]!.state, attempts: rows[0]!.attempts, dedupeKey: rows[0]!.dedupeKey, lastError: rows[0]!.lastError },
        { kind: next, state: 'done', attempts: 1, dedupeKey: `${next}:${firstId}`, lastError: null },
        'the failure after the commit found no row of the first job to mark',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(ran.length, 1, 'ran once');
    });

    test('continueAs without a runner taking it: the next job is queued in the row, and a claim runs it', async () => {
      const first = `first.${newId()}`;
      const next = `next.${newId()}`;
      const ran: string[] = [];
      const r = runner(
        [
          continuing(first, next),
          { kind: next, maxAttempts: 5, leaseMs: 30_000, backoff: () => 1000, handle: async (_p, ctx) => void ran.push(ctx.job.id) } as JobDefinition<never>,
        ],
        {
          idlePollMs: 20,
        },
      );
      await t.store.jobs.enqueue({ kind: first, payload: null });
      r.start();
      await waitFor('the next job to run', () => ran.length === 1);
      await waitFor('the next job to be done', async () => (await stateOf(ran[0]!)).state === 'done');
      const rows = await rowsOf([first, next]);
      assert.deepEqual(
        rows.map((row) => [row.id, row.kind, row.state, row.attempts]),
        [[ran[0], next, 'done', 1]],
      );
    });
  });
}
