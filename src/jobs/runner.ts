/**
 * The generic job runner: claims due jobs with leases, runs their handlers with bounded
 * concurrency, records success, retry with backoff, or dead-letter. It owns no process signals:
 * main.ts starts and stops it. Wakes up on enqueue notifications and on clock jumps. The service
 * runs one per lane (lanes.ts): deliveries and payment work in slots of their own.
 *
 * What is due follows the service clock; leases follow the wall clock and are renewed by a
 * heartbeat while a handler runs, so neither a sandbox clock jump nor a slow acquirer hands a
 * running job to a second worker, and a crashed worker's jobs come back one lease later.
 */
import { randomUUID } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { Logger } from 'pino';
import { type Clock, wallClock } from '../clock.js';
import { BoundedMap } from '../shared/bounded-map.js';
import type { EventsLog } from '../shared/events-log.js';
import { isStoreUnavailable } from '../storage/unavailable.js';
import type { DrainMeter } from './drain-meter.js';
import { Deferred, type Job, type JobDefinition, type JobHandoff, type JobOutcome, type JobQueue, type JobStore, type LocalLease, RetryLater } from './job.js';

export interface RunnerOptions {
  store: JobStore;
  clock: Clock;
  logger: Logger;
  definitions: JobDefinition<never>[];
  concurrency?: number;
  idlePollMs?: number;
  /** Real time for leases (tests pass a fake one). */
  wallNow?: () => number;
  /** A `job.dead` line per job that will not run again. */
  events?: EventsLog;
  /** Told of every settled job (done, or failed for later): the workers' pace, for the lag bound. */
  meter?: DrainMeter;
}

/** Longest wait between claims while claiming fails (the database is down). */
const CLAIM_BACKOFF_CAP_MS = 5_000;
/**
 * At most this many jobs' known records are kept for their first claim (JobRunner.remember): a
 * backlog a few seconds deep at the rates this serves; beyond it, the oldest jobs read.
 */
export const KNOWN_LIMIT = 8_192;

/** A job whose handler met a database outage runs again this much later (service time). */
const OUTAGE_RETRY_MS = 1_000;

export class JobRunner implements JobHandoff {
  readonly workerId = `worker-${randomUUID().slice(0, 8)}`;
  private readonly definitions = new Map<string, JobDefinition<never>>();
  /** Compiled payload schemas of the definitions that declare one (catalogue.ts). */
  private readonly payloadChecks = new Map<string, TypeCheck<TSchema>>();
  private readonly concurrency: number;
  private readonly idlePollMs: number;
  /**
   * What the commits that queued jobs here wrote (JobHandoff.remember), by job id, for their first
   * claim: under a backlog most jobs are claimed, not handed over, and each would read again what
   * its commit wrote (issue 10: a read per MIT). Oldest first; at most KNOWN_LIMIT entries (a job
   * claimed by another process leaves its entry until pushed out).
   */
  private readonly known = new BoundedMap<string, unknown>(KNOWN_LIMIT);
  private running = 0;
  /** Slots held for jobs handed over in commits under way (take). */
  private reserved = 0;
  private reservationsSettled: (() => void) | null = null;
  private stopped = true;
  private wake: (() => void) | null = null;
  /** A notify() that arrived while the loop was busy: the next sleep returns at once instead of losing it. */
  private woken = false;
  /**
   * The last claim took every job due then (fewer than it could): a job ending frees a slot but
   * makes nothing due, so it wakes the loop only when it went back to the queue. Claims that find
   * nothing cost a write transaction each (issue 10: five per MIT at 100/s before this).
   */
  private claimedAll = false;
  /** notify() calls so far: a claim under way when one arrives may have missed what it announced. */
  private notifications = 0;
  /**
   * The earliest due time announced for a job not yet due (service time) since the loop last read
   * the next due time: that read may have missed it, so the next sleep ends by then.
   */
  private announcedDueAt = Infinity;
  /** The service time the current sleep ends at, and how to end it sooner (while the loop sleeps). */
  private sleepingUntil = Infinity;
  private reschedule: ((ms: number) => void) | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<boolean>>();
  /** Jobs this runner is executing, by id → kind: the heartbeat renews their leases. */
  private readonly leased = new Map<string, string>();
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly wallNow: () => number;

  constructor(private readonly options: RunnerOptions) {
    for (const definition of options.definitions) this.register(definition);
    this.concurrency = options.concurrency ?? 32;
    this.idlePollMs = options.idlePollMs ?? 250;
    this.wallNow = options.wallNow ?? wallClock;
  }

  register(definition: JobDefinition<never>): void {
    this.definitions.set(definition.kind, definition);
    if (definition.payload) this.payloadChecks.set(definition.kind, TypeCompiler.Compile(definition.payload));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loopDone = this.loop();
    // A third of the shortest lease: two beats can be missed before a lease runs out.
    const beatMs = Math.max(500, Math.min(...[...this.definitions.values()].map((d) => d.leaseMs), 30_000) / 3);
    this.heartbeat = setInterval(() => void this.renewLeases(), beatMs);
    this.heartbeat.unref();
  }

  /**
   * Something was enqueued or time moved: look for due jobs now. Until that claim has taken every
   * due job, no job is handed over (take): a new one does not go ahead of those queued before it.
   * `dueAt`: the enqueued jobs come due only then (service time) — a claim now would find nothing
   * (a synchronous payment's safety net, a retry), so the loop wakes at that time instead.
   */
  notify(dueAt?: number): void {
    if (dueAt !== undefined) {
      const inMs = dueAt - this.options.clock.now();
      if (inMs > 0) {
        this.announcedDueAt = Math.min(this.announcedDueAt, dueAt);
        if (this.reschedule && dueAt < this.sleepingUntil) this.reschedule(inMs);
        return;
      }
    }
    this.claimedAll = false;
    this.notifications++;
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /**
   * The handoff (JobHandoff): a slot for a due job of `kind` that a commit under way writes leased
   * to this runner, when the runner is running, has a slot free and its last claim took every due
   * job (nothing waits in the queue ahead of it). The job starts when the commit is done.
   */
  take(kind: string): LocalLease | null {
    const definition = this.definitions.get(kind);
    if (!definition?.handoff || this.stopped || !this.claimedAll || this.busySlots() >= this.concurrency) return null;
    this.reserved++;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      if (--this.reserved === 0) this.reservationsSettled?.();
      return true;
    };
    return {
      workerId: this.workerId,
      leaseUntil: this.wallNow() + definition.leaseMs,
      start: (job) => {
        if (settle()) this.track(this.execute(job));
      },
      cancel: () => void settle(),
    };
  }

  remember(jobId: string, kind: string, known: unknown): void {
    if (!this.definitions.get(kind)?.knownWhenClaimed) return;
    this.known.set(jobId, known);
  }

  /** `job` with what its commit wrote, when remembered here and this is its first attempt (a run after a crash or a retry reads). */
  private withKnown(job: Job): Job {
    // Never undefined when remembered: the placer remembers only jobs that have a record.
    const known = this.known.get(job.id);
    if (known === undefined) return job;
    this.known.delete(job.id);
    return job.attempts === 1 ? { ...job, known } : job;
  }

  private busySlots(): number {
    return this.running + this.reserved;
  }

  /** Stops claiming, waits for running handlers up to `timeoutMs`, then gives back remaining leases. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.notify();
    await this.loopDone;
    // A referenced timer: the deadline must hold even when nothing else keeps the event loop alive.
    let deadline: NodeJS.Timeout | undefined;
    const timeout = new Promise((r) => (deadline = setTimeout(r, timeoutMs)));
    // Jobs handed over in commits still under way start when those commits are done: then they are in flight too.
    if (this.reserved > 0) await Promise.race([new Promise<void>((r) => (this.reservationsSettled = r)), timeout]);
    await Promise.race([Promise.allSettled([...this.inFlight]), timeout]);
    clearTimeout(deadline);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.options.store.releaseLeases(this.workerId, this.options.clock.now());
  }

  /** Runs every due job until none is left (tests, CLI). */
  async drain(maxRounds = 1000): Promise<number> {
    let total = 0;
    for (let round = 0; round < maxRounds; round++) {
      const jobs = await this.claimBatch(this.concurrency);
      if (jobs.length === 0) break;
      total += jobs.length;
      await Promise.all(jobs.map((job) => this.execute(job)));
    }
    return total;
  }

  private get kinds(): string[] {
    return [...this.definitions.keys()];
  }

  private async loop(): Promise<void> {
    const { logger } = this.options;
    // Claims failed in a row: the wait grows from idlePollMs to CLAIM_BACKOFF_CAP_MS, and a database
    // outage is logged once when it starts and once when it ends, not at every attempt.
    let failures = 0;
    let outage = false;
    while (!this.stopped) {
      let claimed = 0;
      try {
        const free = this.concurrency - this.busySlots();
        if (free > 0) {
          const notifiedBefore = this.notifications;
          const jobs = await this.claimBatch(free);
          claimed = jobs.length;
          this.claimedAll = claimed < free && this.notifications === notifiedBefore;
          for (const job of jobs) this.track(this.execute(job));
        } else this.claimedAll = false;
        if (outage) logger.info({ failedClaims: failures }, 'job runner: the database answers again; claiming jobs');
        failures = 0;
        outage = false;
      } catch (err) {
        failures++;
        const unavailable = isStoreUnavailable(err);
        if (!unavailable) logger.error({ err }, 'job claim failed');
        else if (!outage) logger.warn({ err }, 'job runner: the database is unavailable; backing off until it answers');
        outage ||= unavailable;
      }
      if (this.stopped) break;
      if (failures > 0) await this.sleep(Math.min(CLAIM_BACKOFF_CAP_MS, this.idlePollMs * 2 ** (failures - 1)));
      else if (claimed === 0 || this.claimedAll || this.busySlots() >= this.concurrency) await this.sleep(await this.idleDelay());
    }
  }

  private async idleDelay(): Promise<number> {
    if (this.busySlots() >= this.concurrency) return this.idlePollMs;
    // Jobs announced from here on may be committed after the read below has looked.
    this.announcedDueAt = Infinity;
    try {
      const next = await this.options.store.nextDueAt(this.kinds);
      if (next === null) return this.idlePollMs * 4;
      return Math.max(0, Math.min(this.idlePollMs * 4, next - this.options.clock.now()));
    } catch {
      return this.idlePollMs;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.woken) {
        this.woken = false;
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        this.reschedule = null;
        this.sleepingUntil = Infinity;
        resolve();
      };
      let timer: NodeJS.Timeout;
      this.reschedule = (inMs) => {
        clearTimeout(timer);
        this.sleepingUntil = this.options.clock.now() + inMs;
        timer = setTimeout(done, inMs);
        timer.unref();
      };
      this.reschedule(Math.max(0, Math.min(ms, this.announcedDueAt - this.options.clock.now())));
      this.wake = done;
    });
  }

  /** `promise`: the job's run, true when the job went back to the queue (a retry, a deferral). */
  private track(promise: Promise<boolean>): void {
    this.inFlight.add(promise);
    void promise.then((requeued) => {
      this.inFlight.delete(promise);
      if (requeued || !this.claimedAll) this.notify();
    });
  }

  private async claimBatch(limit: number): Promise<Job[]> {
    const leases = Object.fromEntries([...this.definitions.values()].map((d) => [d.kind, d.leaseMs]));
    const jobs = await this.options.store.claim(this.workerId, { now: this.options.clock.now(), wallNow: this.wallNow() }, leases, limit, this.kinds);
    return this.known.size === 0 ? jobs : jobs.map((job) => this.withKnown(job));
  }

  /** The heartbeat: every running job's lease is moved one lease ahead of now (wall time). */
  private async renewLeases(): Promise<void> {
    const byKind = new Map<string, string[]>();
    for (const [id, kind] of this.leased) byKind.set(kind, [...(byKind.get(kind) ?? []), id]);
    for (const [kind, ids] of byKind) {
      try {
        await this.options.store.extendLeases(this.workerId, ids, this.wallNow() + (this.definitions.get(kind)?.leaseMs ?? 30_000));
      } catch (err) {
        this.options.logger.warn({ err, kind }, 'could not renew job leases; they run out if this persists');
      }
    }
  }

  /** Runs one claimed job; true when it went back to the queue (to run again later). */
  private async execute(job: Job): Promise<boolean> {
    const definition = this.definitions.get(job.kind);
    const { store, clock, logger } = this.options;
    this.running++;
    this.leased.set(job.id, job.kind);
    try {
      if (!definition) throw new Error(`no handler for job kind ${job.kind}`);
      const check = this.payloadChecks.get(job.kind);
      if (check && !check.Check(job.payload)) {
        // Never handled: running it again would not change the payload. Dead at once, for the operator.
        const first = check.Errors(job.payload).First();
        const error = `payload does not match the catalogue's schema of ${job.kind}: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`;
        logger.error({ jobId: job.id, kind: job.kind }, error);
        await store.fail(job.id, this.workerId, clock.now(), error, null);
        this.logDead(job, error);
        return false;
      }
      // A handler may settle its job inside its own commit (one commit for the result and the job).
      let settled = false;
      let requeued = false;
      let deadWith: string | null = null;
      const settleIn = async (jobs: JobQueue, outcome: JobOutcome) => {
        if ('done' in outcome) {
          if (outcome.continueAs) await jobs.completeAs(job.id, clock.now(), outcome.continueAs);
          else await jobs.complete(job.id, this.workerId, clock.now());
        } else await jobs.fail(job.id, this.workerId, clock.now(), outcome.error.slice(0, 2000), outcome.retryAt);
        settled = true;
        requeued = 'error' in outcome && outcome.retryAt !== null;
        deadWith = 'error' in outcome && outcome.retryAt === null ? outcome.error : null;
      };
      await definition.handle(job.payload as never, { job, attempt: job.attempts, now: () => clock.now(), settleIn });
      if (!settled) await store.complete(job.id, this.workerId, clock.now());
      // Once the handler (and so the commit that settled its job) is done.
      if (deadWith !== null) this.logDead(job, deadWith);
      this.options.meter?.record();
      return requeued;
    } catch (err) {
      if (err instanceof Deferred || isStoreUnavailable(err)) {
        // Not an attempt (the delivery gate is full, or the database failed under the handler): back
        // to the queue, the slot free at once, the attempt the claim counted taken back. Routine under
        // load: no log line. While the database is down this fails too, and the lease runs out instead.
        const delayMs = err instanceof Deferred ? Math.max(0, err.delayMs) : OUTAGE_RETRY_MS;
        try {
          await store.defer(job.id, this.workerId, clock.now() + delayMs);
          // Not an attempt either for what it started from: its next claim here starts from it again.
          if (job.known !== undefined && job.attempts === 1) this.remember(job.id, job.kind, job.known);
        } catch (deferErr) {
          logger.error({ err: deferErr, jobId: job.id }, 'could not defer job; the lease will expire and it will run again');
        }
        return true;
      }
      const message = err instanceof Error ? err.message : String(err);
      // The definition's limit caps the one stored with the job (which defaults to the store's 25).
      const exhausted = job.attempts >= Math.min(job.maxAttempts, definition?.maxAttempts ?? job.maxAttempts);
      const delay = err instanceof RetryLater && err.delayMs !== undefined ? err.delayMs : (definition?.backoff(job.attempts) ?? 1000);
      const retryAt = exhausted ? null : clock.now() + delay;
      if (!(err instanceof RetryLater)) logger.warn({ err, jobId: job.id, kind: job.kind, attempt: job.attempts, dead: exhausted }, 'job failed');
      try {
        await store.fail(job.id, this.workerId, clock.now(), message.slice(0, 2000), retryAt);
        if (exhausted) this.logDead(job, message);
        this.options.meter?.record();
      } catch (failErr) {
        logger.error({ err: failErr, jobId: job.id }, 'could not record job failure; the lease will expire and it will run again');
      }
      return retryAt !== null;
    } finally {
      this.running--;
      this.leased.delete(job.id);
    }
  }

  private logDead(job: Job, error: string): void {
    this.options.events?.logEvent('job.dead', { kind: job.kind, jobId: job.id, attempts: job.attempts, error: error.slice(0, 500) });
  }
}
