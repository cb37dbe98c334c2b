/**
 * The job catalogue: every kind of durable job, in one place — its payload schema, lease, retry
 * schedule and attempts. Modules enqueue with `newJob(kind, payload, ...)` (the payload typed by
 * the kind) and register their handler with `defineJob(kind, handle)` (the policy taken from here);
 * the runner checks each claimed payload against the schema before the handler sees it.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { acquirerRetryDelay, callbackRetryDelay, exponentialBackoff } from './retry-schedules.js';
import { type Job, JOB_LEASE_MS, type JobContext, type JobDefinition, type JobLane, type NewJob } from './job.js';

/** Callbacks: 25 attempts (INTERFACE §8). */
export const CALLBACK_MAX_ATTEMPTS = 25;

interface JobSpec {
  payload: TSchema;
  maxAttempts: number;
  /** Wall-clock lease, renewed by the runner's heartbeat while the handler runs. */
  leaseMs: number;
  /** Delay before the next run after `failures` failed runs, in ms. */
  backoff(failures: number): number;
  /** May start in the process that enqueues it, without a claim (JobDefinition.handoff). */
  handoff?: boolean;
  /** Starts from what its commit wrote when claimed for its first attempt in that process (JobDefinition.knownWhenClaimed). */
  knownWhenClaimed?: boolean;
  /** The runner lane (JobDefinition.lane); default `payments`. */
  lane?: JobLane;
}

const Id = Type.String({ minLength: 1 });
const Empty = Type.Object({});

export const JOB_CATALOGUE = {
  /** The payment engine: asks the acquirer about one operation until it answers (about 7 days at the 10-minute cap). */
  'payment.drive': {
    payload: Type.Object({ operationId: Id, attempt: Type.Optional(Type.Integer({ minimum: 1 })) }),
    maxAttempts: 1000,
    leaseMs: JOB_LEASE_MS,
    backoff: acquirerRetryDelay,
    // Enqueued only with its operation, in the same statement or commit: its row is always new.
    handoff: true,
    // Only its own answer changes the operation, and that answer's commit is conditional on it.
    knownWhenClaimed: true,
  },
  /** The void of an authorization in doubt whose id the acquirer named (INTERFACE §12.4); voids are repeatable. */
  'payment.release-in-doubt': {
    payload: Type.Object({ operationId: Id, authorizationReference: Type.String({ minLength: 1 }) }),
    maxAttempts: 50,
    leaseMs: JOB_LEASE_MS,
    backoff: acquirerRetryDelay,
  },
  /** One callback delivery row (INTERFACE §8); `resend`: a merchant's resend, sent even after a delivered attempt. */
  'callback.deliver': {
    payload: Type.Object({
      accountId: Id,
      transactionId: Id,
      event: Type.String(),
      notificationId: Type.Optional(Id),
      resend: Type.Optional(Type.Boolean()),
    }),
    maxAttempts: CALLBACK_MAX_ATTEMPTS,
    leaseMs: JOB_LEASE_MS,
    backoff: (failures: number) => callbackRetryDelay(failures),
    // A job whose row was not inserted (its state's callback already scheduled) names a delivery
    // row that was not inserted either, finds none and sends nothing.
    handoff: true,
    // A resend may deliver the row while its first job waits: that job then sends once more (callbacks
    // are at least once), numbers its attempt from the row and leaves a DELIVERED row delivered.
    knownWhenClaimed: true,
    lane: 'deliveries',
  },
  /** Outbox → webhook deliveries, one run per second of service time. */
  'webhooks.relay': { payload: Empty, maxAttempts: 3, leaseMs: JOB_LEASE_MS, backoff: () => 1_000 },
  /** One webhook delivery; the handler ends it after the schedule's last attempt, the slack covers runs lost to a crash. */
  'webhooks.deliver': {
    payload: Type.Object({ deliveryId: Id }),
    maxAttempts: CALLBACK_MAX_ATTEMPTS + 5,
    leaseMs: JOB_LEASE_MS,
    backoff: (failures: number) => callbackRetryDelay(failures),
    lane: 'deliveries',
  },
  /** A CIT session due to expire at expiresAt (service clock). */
  'session.expire': {
    payload: Type.Object({ sessionId: Id }),
    maxAttempts: 10,
    leaseMs: JOB_LEASE_MS,
    backoff: (failures: number) => Math.min(60_000, 1000 * 2 ** failures),
  },
  /** A terminal sale sent to its terminal. */
  'sales.dispatch': { payload: Type.Object({ transactionId: Id }), maxAttempts: 25, leaseMs: JOB_LEASE_MS, backoff: exponentialBackoff(250, 30_000) },
  /** An untapped terminal sale's timeout. */
  'sales.expire': { payload: Type.Object({ transactionId: Id }), maxAttempts: 25, leaseMs: JOB_LEASE_MS, backoff: exponentialBackoff(1_000, 60_000) },
  /** A billing agreement's period falls due: its charge is created. */
  'billing.charge-due': {
    payload: Type.Object({ accountId: Id, agreementId: Id, periodStart: Type.String() }),
    maxAttempts: 10,
    leaseMs: JOB_LEASE_MS,
    backoff: exponentialBackoff(1_000, 5 * 60_000),
  },
  /** One attempt of a billing charge (a MIT on the agreement's subscription). */
  'billing.charge-attempt': {
    payload: Type.Object({ accountId: Id, chargeId: Id, attempt: Type.Integer({ minimum: 1 }) }),
    maxAttempts: 10,
    leaseMs: JOB_LEASE_MS,
    backoff: exponentialBackoff(1_000, 5 * 60_000),
  },
  /** The daily settlement run of one posting date. */
  'settlements.daily-run': {
    payload: Type.Object({ postingDate: Type.String() }),
    maxAttempts: 10,
    leaseMs: JOB_LEASE_MS,
    backoff: exponentialBackoff(30_000, 15 * 60_000),
  },
  /** The daily sweep that invalidates subscriptions whose card expired. */
  'subscriptions.payment-method-expiry': { payload: Empty, maxAttempts: 10, leaseMs: JOB_LEASE_MS, backoff: exponentialBackoff(30_000, 15 * 60_000) },
  /** Housekeeping every 15 minutes: idempotency records past 24 h, finished jobs past a week. */
  'maintenance.sweep': { payload: Empty, maxAttempts: 5, leaseMs: JOB_LEASE_MS, backoff: exponentialBackoff(5_000, 60_000) },
} as const satisfies Record<string, JobSpec>;

export type JobKind = keyof typeof JOB_CATALOGUE;
export type PayloadOf<K extends JobKind> = Static<(typeof JOB_CATALOGUE)[K]['payload']>;

/**
 * What the commit that enqueues a job of a kind hands to its first run in this process (NewJob.known),
 * by kind. The module that owns the kind declares it by declaration merging, so that the catalogue
 * names no module: `declare module '…/jobs/catalogue.js' { interface KnownByKind { 'payment.drive': DriveRecord } }`.
 * A kind that declares nothing takes nothing.
 */
export interface KnownByKind {}
export type KnownOf<K extends JobKind> = K extends keyof KnownByKind ? KnownByKind[K] : never;

/** A handler's context: its job's `known` typed by the kind. */
export type JobContextOf<K extends JobKind> = Omit<JobContext, 'job'> & { job: Omit<Job, 'known'> & { known?: KnownOf<K> } };

/** A job of `kind` to enqueue, its attempts from the catalogue. */
export function newJob<K extends JobKind>(kind: K, payload: PayloadOf<K>, options: { runAt?: number; dedupeKey?: string; known?: KnownOf<K> } = {}): NewJob {
  // Every field present, in one order: one shape for every new job (docs/object-shapes.md).
  return { kind, payload, maxAttempts: JOB_CATALOGUE[kind].maxAttempts, runAt: options.runAt, dedupeKey: options.dedupeKey, known: options.known };
}

/** The runner's definition of `kind`: the catalogue's policy with the module's handler. */
export function defineJob<K extends JobKind>(kind: K, handle: (payload: PayloadOf<K>, ctx: JobContextOf<K>) => Promise<void>): JobDefinition<PayloadOf<K>> {
  const spec: JobSpec = JOB_CATALOGUE[kind];
  return {
    kind,
    maxAttempts: spec.maxAttempts,
    leaseMs: spec.leaseMs,
    backoff: spec.backoff,
    payload: spec.payload,
    // The one place `known` is typed: only newJob of this kind sets it, with KnownOf<K>.
    handle: (payload, ctx) => handle(payload, ctx as JobContextOf<K>),
    ...(spec.handoff ? { handoff: true } : {}),
    ...(spec.knownWhenClaimed ? { knownWhenClaimed: true } : {}),
    ...(spec.lane ? { lane: spec.lane } : {}),
  };
}
