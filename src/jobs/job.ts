/**
 * Durable jobs: the job catalogue's shape, the queue port and the job state machine.
 * queued → running (leased) → done | queued (retry with backoff) | dead (attempts exhausted).
 * A lease that runs out (crashed worker) puts the job back in reach of other workers.
 */
import type { TSchema } from '@sinclair/typebox';

export type JobState = 'queued' | 'running' | 'done' | 'dead';

/**
 * Slots a job runs in (lanes.ts): `deliveries` wait on merchants' receivers (callbacks, webhooks),
 * `payments` on the acquirer and the database (everything else).
 */
export type JobLane = 'payments' | 'deliveries';

export interface NewJob {
  kind: string;
  payload: unknown;
  /** When the job may run first (service clock, ms). Default: now. */
  runAt?: number;
  /** A unique key: enqueueing a second job with the same key is a no-op (exactly-once scheduling). */
  dedupeKey?: string;
  maxAttempts?: number;
  /**
   * What the enqueuing commit wrote and the handler would read first (process memory, never
   * stored): given to the handler when the job is handed to this process's runner in that commit
   * (JobHandoff), or, for kinds that allow it (JobDefinition.knownWhenClaimed), when that runner
   * claims it later for its first attempt. A job claimed by another process, or run again, has
   * none: its handler reads.
   */
  known?: unknown;
}

export interface Job {
  id: string;
  kind: string;
  payload: unknown;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  runAt: string;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  /** NewJob.known, when the job was handed over in the commit that wrote it, or claimed here for its first attempt. */
  known?: unknown;
}

/**
 * The queue as a commit sees it: enqueue, and settle jobs, inside the caller's database
 * transaction, so that a change, the jobs it causes and the job that made it commit together.
 */
export interface JobQueue {
  enqueue(job: NewJob): Promise<void>;
  enqueueMany(jobs: NewJob[]): Promise<void>;
  complete(id: string, workerId: string, now: number): Promise<void>;
  /**
   * Finishes the leased job `id` by making its row the new job `next`, under a new id (placed as
   * enqueue would: queued, or handed to this process's runner): one write where complete + enqueue
   * are two, and one row fewer. Only for a `next` whose dedupe key no other row can hold, in a
   * commit whose own guard makes it happen once (the job's work is applied once), since the row
   * is taken by id, whoever holds its lease.
   */
  completeAs(id: string, now: number, next: NewJob): Promise<void>;
  /** Records a failure: back to queued at `retryAt`, or dead when attempts are exhausted. */
  fail(id: string, workerId: string, now: number, error: string, retryAt: number | null): Promise<void>;
  /** Marks done a queued job that is no longer needed (a safety net whose work was done), by its dedupe key. */
  cancelQueued(dedupeKey: string, now: number): Promise<void>;
}

/** When a claim happens: `now` (service time) decides what is due, `wallNow` (real time) what a lease covers. */
export interface ClaimTimes {
  now: number;
  wallNow: number;
}

export interface JobStore extends JobQueue {
  /**
   * Leases up to `limit` due jobs (queued and due at `now`, or running with a lease that ran out
   * before `wallNow`). `leaseMs` is one lease for all, or a lease per kind (every kind in `kinds` named).
   */
  claim(workerId: string, at: ClaimTimes, leaseMs: number | Readonly<Record<string, number>>, limit: number, kinds: string[]): Promise<Job[]>;
  /** Heartbeat: moves the leases `workerId` still holds on `ids` to `leaseUntil` (wall time); returns how many. */
  extendLeases(workerId: string, ids: string[], leaseUntil: number): Promise<number>;
  /**
   * Gives a claimed job back without counting an attempt (the handler threw Deferred): queued
   * again at `runAt` (service time) with the attempt its claim counted taken back; no error kept.
   */
  defer(id: string, workerId: string, runAt: number): Promise<void>;
  /** Gives back leases held by a worker (graceful shutdown). */
  releaseLeases(workerId: string, now: number): Promise<number>;
  /** Earliest run_at of a queued job, for the runner's sleep. */
  nextDueAt(kinds: string[]): Promise<number | null>;
  countsByState(): Promise<Array<{ kind: string; state: string; count: number }>>;
  /**
   * The backlog (jobs/backlog.ts): jobs of every kind queued and due at `now` (service time) plus
   * running ones, counted up to `limit` only (a bounded read of the jobs_due and jobs_leased indexes).
   */
  countBacklog(now: number, limit: number): Promise<number>;
  listDead(limit: number): Promise<Job[]>;
  retryDead(id: string, now: number): Promise<boolean>;
  purgeFinished(before: number, limit: number): Promise<number>;
}

/**
 * This process's runner, asked in the commit that enqueues a due job whether it takes the job at
 * once (runner.ts): with a slot free and nothing due waiting in the queue, the row is written
 * leased to it and the job starts once the commit is done — no claim (a write transaction and,
 * on SQLite, a read of the next due time) and no wake-up. Otherwise the job is queued as usual.
 */
export interface JobHandoff {
  take(kind: string): LocalLease | null;
  /**
   * A job of a kind it may take was queued instead (no slot free, or jobs due ahead of it), by a
   * commit now done: what that commit wrote (NewJob.known) is kept for the job's first claim here.
   */
  remember(jobId: string, kind: string, known: unknown): void;
}

/** A runner slot held for a job written leased to it (JobHandoff), in a commit under way. */
export interface LocalLease {
  workerId: string;
  /** Wall-clock ms, as a claim's lease. */
  leaseUntil: number;
  /** The commit is done: run the job (its row as written: running, first attempt). */
  start(job: Job): void;
  /** The commit failed: the slot is free again. */
  cancel(): void;
}

export interface JobContext {
  job: Job;
  attempt: number;
  now(): number;
  /**
   * Settles the job inside the caller's commit (`jobs` bound to that transaction) — done, or failed
   * with a retry time (null: dead) — so that the result and the job's outcome are one commit; the
   * runner then records nothing more.
   */
  settleIn(jobs: JobQueue, outcome: JobOutcome): Promise<void>;
}

/** `continueAs`: done, and the job's row becomes this next job (JobQueue.completeAs). */
export type JobOutcome = { done: true; continueAs?: NewJob } | { error: string; retryAt: number | null };

export interface JobDefinition<P = unknown> {
  kind: string;
  /**
   * The process whose commit enqueues a job of this kind may start it at once, the row written
   * already leased to its runner (JobHandoff). Only for kinds whose handler does nothing when its
   * row was not inserted (a dedupe key already taken): the runner cannot know.
   */
  handoff?: boolean;
  /**
   * A job of this kind queued instead of handed over keeps what its commit wrote (NewJob.known)
   * for its first claim in this process (JobHandoff.remember). Only for kinds whose handler's
   * writes hold whatever changed since: the record may be seconds old by then (a payment's answer
   * is conditional on its operation's state; a callback's attempt is numbered from its row, and a
   * row a resend delivered meanwhile stays delivered).
   */
  knownWhenClaimed?: boolean;
  /** The runner lane whose slots it runs in (lanes.ts); default `payments`. */
  lane?: JobLane;
  /** The payload's schema (catalogue.ts): a claimed job whose payload does not match is dead at once, never handled. */
  payload?: TSchema;
  maxAttempts: number;
  /** Wall-clock lease, renewed by the runner's heartbeat while the handler runs; what a crashed worker holds comes back after it. */
  leaseMs: number;
  /** Delay before attempt n+1 after n failures, in ms. */
  backoff(failures: number): number;
  handle(payload: P, ctx: JobContext): Promise<void>;
}

/**
 * The lease every job kind takes: wall-clock time, renewed by the runner's heartbeat while the
 * handler runs, so it bounds only how soon a crashed worker's job is taken over, not how long a
 * job may run.
 */
export const JOB_LEASE_MS = 15_000;

export { exponentialBackoff } from './retry-schedules.js';

/** Thrown by a handler to retry later without counting as an error in logs (e.g. acquirer timeout). */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs?: number,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

/**
 * Thrown by a handler that cannot do its work now for a reason that is not the job's (e.g. the
 * delivery gate is full for its merchant or destination): the runner gives the job back to the
 * queue `delayMs` later, without counting an attempt and without a log line (deferrals are routine
 * under load). Nothing of the attempt may have happened before it is thrown.
 */
export class Deferred extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'Deferred';
  }
}
