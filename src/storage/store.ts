/**
 * The storage adapter: every repository bound to either the pool or one database transaction.
 * `store.transaction(fn)` gives `fn` the same repositories running inside one commit, so that a
 * state change and the jobs it causes are written together or not at all.
 */
import { Kysely } from 'kysely';
import { duplicateIdOf } from './duplicate-id.js';
import { StaleWrite } from '../shared/errors.js';
import { staleWriteOf } from './stale-write.js';
import { lingerCommit } from './postgres/write-combining.js';
import type { JobHandoff, JobStore } from '../jobs/job.js';
import type { AccountsRepository } from '../modules/accounts/accounts.repository.js';
import type { PointsOfSaleRepository } from '../modules/points-of-sale/points-of-sale.repository.js';
import type { TerminalsRepository } from '../modules/terminals/terminals.repository.js';
import type { PaymentRecords, TransactionsRepository } from '../modules/transactions/transactions.repository.js';
import type { PaymentMethodsRepository } from '../modules/payment-methods/payment-methods.repository.js';
import type { NotificationsRepository } from '../delivery/notification.js';
import type { SalesRepository } from '../modules/sales/sales.repository.js';
import type { EventOutbox } from '../modules/events/event-outbox.js';
import type { LifecycleRepository } from '../modules/operations/operations.repository.js';
import type { SubscriptionsRepository } from '../modules/subscriptions/subscriptions.repository.js';
import type { SessionsRepository } from '../modules/sessions/sessions.repository.js';
import type { WebhooksRepository } from '../modules/webhooks/webhooks.repository.js';
import type { BillingPlansRepository } from '../modules/billing/plans.repository.js';
import type { BillingAgreementsRepository } from '../modules/billing/agreements.repository.js';
import type { BillingChargesRepository } from '../modules/billing/charges.repository.js';
import type { DashboardSessionsRepository } from '../dashboard/sessions.repository.js';
import type { Connection, Dialect } from './connect.js';
import { KyselyAccountsRepository } from './repositories/accounts.js';
import { KyselyIdempotencyStore } from './repositories/idempotency.js';
import {
  addQueued,
  type EnqueueNotice,
  handingPlacer,
  type JobPlacer,
  KyselyJobStore,
  noticeQueued,
  type QueuedJobs,
  queueEveryJob,
} from './repositories/jobs.js';
import { KyselyPointsOfSaleRepository } from './repositories/points-of-sale.js';
import { KyselySettings } from './repositories/settings.js';
import { KyselyTerminalsRepository } from './repositories/terminals.js';
import { KyselyTransactionsRepository } from './repositories/transactions.js';
import { KyselyPaymentMethodsRepository } from './repositories/payment-methods.js';
import { KyselyNotificationsRepository } from './repositories/notifications.js';
import { KyselySalesRepository } from './repositories/sales.js';
import { KyselyEventOutbox } from './repositories/events.js';
import { KyselyLifecycleRepository } from './repositories/lifecycle.js';
import { KyselyPaymentRecords } from './repositories/payment-records.js';
import { KyselySubscriptionsRepository } from './repositories/subscriptions.js';
import { KyselySessionsRepository } from './repositories/sessions.js';
import { KyselyWebhooksRepository } from './repositories/webhooks.js';
import { KyselyBillingPlansRepository } from './repositories/billing-plans.js';
import { KyselyBillingAgreementsRepository } from './repositories/billing-agreements.js';
import { KyselyBillingChargesRepository } from './repositories/billing-charges.js';
import { KyselySettlementsRepository } from './repositories/settlements.js';
import type { SettlementsRepository } from '../modules/settlements/settlements.repository.js';
import type { PaymentLinksRepository } from '../modules/payment-links/payment-links.repository.js';
import { KyselyPaymentLinksRepository } from './repositories/payment-links.js';
import type { IngestionCountersRepository } from '../modules/mit/ingestion-cap.js';
import { KyselyIngestionCounters } from './repositories/ingestion-counters.js';
import type { MultiLinksRepository } from '../modules/multi-links/multi-links.repository.js';
import { KyselyMultiLinksRepository } from './repositories/multi-links.js';
import { KyselyDashboardSessionsRepository } from './repositories/dashboard-sessions.js';
import type { AcquirerAgreementsRepository } from '../modules/acquirer-agreements/acquirer-agreements.repository.js';
import { KyselyAcquirerAgreementsRepository } from './repositories/acquirer-agreements.js';
import type { Database } from './schema.js';
import type { AcquirerRequestsRepository } from '../modules/transactions/acquirer-requests.repository.js';
import { KyselyAcquirerRequestsRepository } from './repositories/acquirer-requests.js';
import { KyselyThreeDSAttemptsRepository } from './repositories/three-ds-attempts.js';
import type { ThreeDSAttemptsRepository } from '../modules/three-d-secure/three-ds-attempts.repository.js';
import type { StatementCounter } from './statement-counter.js';
import { groupCommitDialect, WriteBatcher, type WriteBatcherOptions } from './sqlite/group-commit.js';
import type { UnitKind } from '../shared/unit-of-work.js';
import { unitCommit, UNIT_COMMITS } from './unit-commits.js';

export interface Repositories {
  /** Runs `fn` once this commit is done (nothing runs when it rolls back): log lines, wake-ups. */
  afterCommit(fn: () => void): void;
  billingPlans: BillingPlansRepository;
  billingAgreements: BillingAgreementsRepository;
  billingCharges: BillingChargesRepository;
  settlements: SettlementsRepository;
  webhooks: WebhooksRepository;
  accounts: AccountsRepository;
  pointsOfSale: PointsOfSaleRepository;
  terminals: TerminalsRepository;
  transactions: TransactionsRepository;
  paymentMethods: PaymentMethodsRepository;
  notifications: NotificationsRepository;
  sales: SalesRepository;
  jobs: JobStore;
  lifecycle: LifecycleRepository;
  paymentRecords: PaymentRecords;
  events: EventOutbox;
  settings: KyselySettings;
  subscriptions: SubscriptionsRepository;
  sessions: SessionsRepository;
  paymentLinks: PaymentLinksRepository;
  /** MIT ingestion caps (INTERFACE §11.8): per-merchant per-minute counters. */
  ingestionCounters: IngestionCountersRepository;
  multiLinks: MultiLinksRepository;
  dashboardSessions: DashboardSessionsRepository;
  /** Acquirer agreements of accounts (INTERFACE §12.1): append-only, the API key sealed. */
  acquirerAgreements: AcquirerAgreementsRepository;
  /** Acquirer requests that are never repeated, recorded before they go out (INTERFACE §12.4). */
  acquirerRequests: AcquirerRequestsRepository;
  threeDSAttempts: ThreeDSAttemptsRepository;
}

export interface Store extends Repositories {
  readonly dialect: Dialect;
  readonly db: Kysely<Database>;
  readonly idempotency: KyselyIdempotencyStore;
  /** SQLite: the group commit every write goes through (null on PostgreSQL, whose pool commits concurrently). */
  readonly batcher: WriteBatcher | null;
  /** The connection's statement and commit counter (off by default; see statement-counter.ts). */
  readonly counters: StatementCounter;
  /**
   * One unit of work: on SQLite group-committed with others (see sqlite/group-commit.ts), on PostgreSQL one
   * pool transaction. `kind` says what the unit is; the store commits it accordingly (unit-commits.ts).
   */
  transaction<T>(fn: (repos: Repositories) => Promise<T>, kind?: UnitKind): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  now(): number;
  /** Called when jobs were queued, per kind, with the time the first of them comes due (the runner's lane of that kind wakes then). */
  onEnqueue?: EnqueueNotice;
  /** This process's runner, which may take a transaction's new due jobs at once (JobHandoff). */
  handoff?: JobHandoff;
  /** SQLite group commit settings (tests). */
  batcher?: WriteBatcherOptions;
}

/**
 * `afterCommit`: runs `fn` once the commit these repositories write in is done (a transaction's
 * repositories), or at once (the store's own, whose every write is its own commit).
 */
function repositories(
  db: Kysely<Database>,
  dialect: Dialect,
  options: StoreOptions,
  onEnqueue: EnqueueNotice,
  afterCommit: (fn: () => void) => void = (fn) => fn(),
  placer: JobPlacer = queueEveryJob,
  predicting = false,
): Repositories {
  return {
    afterCommit,
    billingPlans: new KyselyBillingPlansRepository(db),
    billingAgreements: new KyselyBillingAgreementsRepository(db),
    billingCharges: new KyselyBillingChargesRepository(db),
    settlements: new KyselySettlementsRepository(db),
    webhooks: new KyselyWebhooksRepository(db, dialect),
    accounts: new KyselyAccountsRepository(db),
    pointsOfSale: new KyselyPointsOfSaleRepository(db),
    terminals: new KyselyTerminalsRepository(db),
    transactions: new KyselyTransactionsRepository(db, dialect, predicting),
    paymentMethods: new KyselyPaymentMethodsRepository(db),
    notifications: new KyselyNotificationsRepository(db),
    sales: new KyselySalesRepository(db),
    jobs: new KyselyJobStore(db, dialect, options.now, onEnqueue, placer),
    lifecycle: new KyselyLifecycleRepository(db),
    paymentRecords: new KyselyPaymentRecords(db, dialect, options.now, onEnqueue, placer),
    events: new KyselyEventOutbox(db, options.now),
    settings: new KyselySettings(db),
    subscriptions: new KyselySubscriptionsRepository(db),
    sessions: new KyselySessionsRepository(db),
    paymentLinks: new KyselyPaymentLinksRepository(db),
    ingestionCounters: new KyselyIngestionCounters(db, dialect),
    multiLinks: new KyselyMultiLinksRepository(db),
    dashboardSessions: new KyselyDashboardSessionsRepository(db),
    acquirerAgreements: new KyselyAcquirerAgreementsRepository(db, dialect),
    acquirerRequests: new KyselyAcquirerRequestsRepository(db, dialect),
    threeDSAttempts: new KyselyThreeDSAttemptsRepository(db),
  };
}

export function createStore(connection: Connection, options: StoreOptions): Store {
  const notify: EnqueueNotice = (firstDueAt, kind) => options.onEnqueue?.(firstDueAt, kind);
  if (connection.statements) return createSqliteStore(connection, connection.statements, options, notify);
  const base = repositories(connection.db, connection.dialect, options, notify);
  return {
    ...base,
    dialect: connection.dialect,
    db: connection.db,
    idempotency: new KyselyIdempotencyStore(connection.db),
    batcher: null,
    counters: connection.counters,
    transaction: (fn, kind) =>
      inTransaction(
        (work) =>
          connection.db.transaction().execute(async (trx) => {
            const lingerMs = unitCommit(kind).lingerMs;
            if (lingerMs) await lingerCommit(trx, lingerMs);
            return work(trx);
          }),
        fn,
        connection.dialect,
        options,
        notify,
      ),
    ping: () => connection.ping(),
    close: () => connection.close(),
  };
}

/**
 * SQLite: every write is group-committed. Transactions are closures of the batcher; the
 * repositories outside a transaction sit on a Kysely whose write statements each become a unit
 * of work of the next group commit (idempotency claims, job claims and completions, ...).
 */
function createSqliteStore(connection: Connection, statements: NonNullable<Connection['statements']>, options: StoreOptions, notify: EnqueueNotice): Store {
  const batcher = new WriteBatcher(connection.db, statements, { ...(connection.sync ? { durable: connection.sync } : {}), ...options.batcher });
  // connection.db's plugins: its statements' rows come named already (prenamed-rows.ts).
  const batched = new Kysely<Database>({ dialect: groupCommitDialect(batcher), plugins: [...connection.db.getExecutor().plugins] });
  const base = repositories(batched, connection.dialect, options, notify);
  return {
    ...base,
    // A request's series claim and its record: one unit, one durable commit before it is sent.
    acquirerRequests: new KyselyAcquirerRequestsRepository(batched, connection.dialect, (work) => batcher.run(work, UNIT_COMMITS.rerunnable)),
    dialect: connection.dialect,
    db: connection.db,
    idempotency: new KyselyIdempotencyStore(batched),
    batcher,
    counters: connection.counters,
    transaction: (fn, kind) => inTransaction((work) => batcher.run(work, unitCommit(kind)), fn, connection.dialect, options, notify),
    ping: () => connection.ping(),
    async close() {
      await batcher.drain();
      await connection.close();
    },
  };
}

/**
 * `fn` on the repositories of one transaction, which `commit` runs (a pool transaction, a unit of
 * the group commit); the after-commit work it asked for runs once `commit` has returned: the runner
 * can see the new jobs (or starts those handed to it), a log line reports what stays. When the
 * commit fails, the runner slots its handed jobs held are given back.
 */
/**
 * One unit of work, its first run predicting (KyselyTransactionsRepository): a prediction that did
 * not hold (another commit moved the row first) rolls that run back with StaleWrite, and the unit
 * runs again reading the rows back. The caller's `fn` knows none of it.
 */
async function inTransaction<T>(
  commit: (work: (db: Kysely<Database>) => Promise<T>) => Promise<T>,
  fn: (repos: Repositories) => Promise<T>,
  dialect: Dialect,
  options: StoreOptions,
  notify: EnqueueNotice,
): Promise<T> {
  try {
    return await runUnit(commit, fn, dialect, options, notify, true);
  } catch (err) {
    if (!(err instanceof StaleWrite)) throw err;
    return runUnit(commit, fn, dialect, options, notify, false);
  }
}

async function runUnit<T>(
  commit: (work: (db: Kysely<Database>) => Promise<T>) => Promise<T>,
  fn: (repos: Repositories) => Promise<T>,
  dialect: Dialect,
  options: StoreOptions,
  notify: EnqueueNotice,
  predicting: boolean,
): Promise<T> {
  // What one run of `fn` asks for after the commit; a replayable unit run again (sqlite/group-commit.ts)
  // starts afresh, the slots its first run was handed given back.
  const last: { run: CommitRun | null } = { run: null };
  const work = (db: Kysely<Database>) => {
    last.run?.handing?.giveBack();
    const run = (last.run = commitRun(options, notify));
    return fn(repositories(db, dialect, options, run.queued, run.afterCommit, run.handing ?? queueEveryJob, predicting));
  };
  let result: T;
  try {
    result = await commit(work);
  } catch (err) {
    last.run?.handing?.giveBack();
    throw duplicateIdOf(err) ?? staleWriteOf(err) ?? err;
  }
  runAll(last.run?.committed ?? []);
  return result;
}

interface CommitRun {
  committed: Array<() => void>;
  queued: EnqueueNotice;
  afterCommit(after: () => void): void;
  handing: (JobPlacer & { giveBack(): void }) | null;
}

function commitRun(options: StoreOptions, notify: EnqueueNotice): CommitRun {
  const committed: Array<() => void> = [];
  // One notice per commit and kind, for the first of its queued jobs to come due.
  let queued: QueuedJobs | null = null;
  const afterCommit = (after: () => void) => void committed.push(after);
  return {
    committed,
    queued(at, kind) {
      if (queued === null) {
        const all: QueuedJobs = (queued = new Map());
        committed.push(() => noticeQueued(all, notify));
      }
      addQueued(queued, kind, at);
    },
    afterCommit,
    handing: options.handoff ? handingPlacer(options.handoff, afterCommit) : null,
  };
}

/** The after-commit functions of one commit, each once. */
function runAll(fns: Array<() => void>): void {
  for (const fn of new Set(fns)) fn();
}
