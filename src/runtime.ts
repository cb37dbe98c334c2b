/**
 * One running instance: storage (migrated), clock, services, job runner and the HTTP app.
 * main.ts wraps it with config, start-up output and signals; tests and benchmarks use it directly.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { ServiceClock } from './clock.js';
import type { ClearhausConfig, Config } from './config.js';
import type { Acquirer } from './connectors/acquirer.js';
import { ClearhausAcquirer } from './connectors/clearhaus/connector.js';
import { loadSigningKey } from './connectors/clearhaus/signing.js';
import type { ThreeDSServer } from './connectors/threeds/three-d-secure.js';
import { ThreeDSecureIo } from './connectors/threeds/threedsecure-io.js';
import { buildApp } from './http/app.js';
import { dashboardPaymentsRoutes } from './dashboard/payments.routes.js';
import { Metrics } from './http/metrics.js';
import { scheduleMaintenance } from './jobs/maintenance.js';
import { DrainMeter } from './jobs/drain-meter.js';
import { JobLanes } from './jobs/lanes.js';
import { pinoEventsLog } from './logger.js';
import { scheduleWebhookRelay } from './modules/webhooks/webhooks.jobs.js';
import { scheduleSettlementRun } from './modules/settlements/settlements.jobs.js';
import { schedulePaymentMethodExpiry } from './modules/subscriptions/subscriptions.jobs.js';
import { createRateLimiter } from './rate-limiter.js';
import { loadOrCreateSecretFile, SecretBox } from './security/secret-box.js';
import { buildServices, type Services } from './services.js';
import { connect, type ConnectOptions } from './storage/connect.js';
import { migrate } from './storage/migrate.js';
import { createStore, type Store } from './storage/store.js';

export interface Runtime {
  app: FastifyInstance;
  store: Store;
  clock: ServiceClock;
  runner: JobLanes;
  services: Services;
  operatorKey: string;
  operatorKeyGenerated: boolean;
  sealer: SecretBox;
  /** Graceful: stop accepting, finish in-flight requests, stop workers (releasing leases), close the database. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  logger: Logger;
  connectOptions?: ConnectOptions;
  /** Start the job runner loop (default: config.workers). Tests may drive jobs with runner.drain(). */
  startWorkers?: boolean;
  /** Job slots per runner lane (jobs/lanes.ts; default 64 each). */
  jobConcurrency?: number;
  /** Replaces the sandbox simulator (tests with scripted acquirer answers). */
  acquirer?: Acquirer;
  /** How long a request may take to arrive (default REQUEST_TIMEOUT_MS; tests shorten it). */
  requestTimeoutMs?: number;
  /** How old the backlog figure may get before it is counted again (default 250 ms; tests: 0, a count per check). */
  backlogRefreshMs?: number;
  /** Whether the deployment has a Clearhaus signing key (INTERFACE §12.2): `clearhaus` agreements are refused without one (default). */
  clearhausAvailable?: boolean;
  /** Replaces the Clearhaus connector built from config.clearhaus (tests: one pointed at a fake). */
  clearhaus?: Acquirer;
  /** Replaces the 3-D Secure server built from config.threeDSecure (tests: one pointed at a fake). */
  threeDSServer?: ThreeDSServer;
}

export async function createRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const { logger } = options;
  const connection = connect(config.database, { poolSize: config.dbPoolSize, ...options.connectOptions });
  try {
    const { applied } = await migrate(connection);
    if (applied.length) logger.info({ applied }, 'database migrated');
  } catch (err) {
    await connection.close();
    throw err;
  }

  let runner: JobLanes | null = null;
  const clockRef: { clock: ServiceClock | null } = { clock: null };
  const now = () => clockRef.clock?.now() ?? Date.now();
  const store = createStore(connection, {
    now,
    onEnqueue: (dueAt, kind) => runner?.notify(dueAt, kind),
    handoff: { take: (kind) => runner?.take(kind) ?? null, remember: (id, kind, known) => runner?.remember(id, kind, known) },
  });
  const clock = new ServiceClock(store.settings, config.sandbox);
  clockRef.clock = clock;
  await clock.init();

  const operator = config.operatorKey
    ? { value: config.operatorKey, created: false }
    : loadOrCreateSecretFile(config.dataDir, 'operator.key', () => `op_${randomBytes(32).toString('base64url')}`);
  const vaultKey = config.vaultKey ?? Buffer.from(loadOrCreateSecretFile(config.dataDir, 'vault.key', () => randomBytes(32).toString('hex')).value, 'hex');
  const sealer = new SecretBox(vaultKey);

  // The lag bound needs the workers' pace: only a process that runs them can refuse by it.
  const runsWorkers = options.startWorkers ?? config.workers;
  const drain = runsWorkers ? new DrainMeter() : null;
  // INTERFACE §12.2: the signing key is read once, here; a bad file stops the start naming its variable.
  const clearhaus = options.clearhaus ?? (config.clearhaus ? clearhausConnector(config.clearhaus, logger) : null);
  // INTERFACE §13: 3dsecure.io at THREEDS_URL, used only for agreements that name it (a lazy pool).
  const threeDSServer =
    options.threeDSServer ?? (config.threeDSecure ? new ThreeDSecureIo({ baseUrl: config.threeDSecure.url, timeoutMs: config.threeDSecure.timeoutMs }) : null);
  const services = buildServices({
    config,
    store,
    clock,
    sealer,
    operatorKey: operator.value,
    logger,
    ...(options.acquirer ? { acquirer: options.acquirer } : {}),
    ...(options.backlogRefreshMs === undefined ? {} : { backlogRefreshMs: options.backlogRefreshMs }),
    ...(options.clearhausAvailable === undefined ? {} : { clearhausAvailable: options.clearhausAvailable }),
    clearhaus,
    threeDSServer,
    ...(drain ? { drainRate: () => drain.ratePerSecond() } : {}),
  });
  runner = new JobLanes({
    store: store.jobs,
    clock,
    logger,
    definitions: services.jobs,
    concurrency: options.jobConcurrency ?? 64,
    events: pinoEventsLog(logger),
    ...(drain ? { meter: drain } : {}),
  });
  clock.onJump(() => runner?.notify());
  // Sandbox: a clock move made through another process reaches this one within a second.
  // Logged once per outage, not every second while the database is down.
  let clockUnreadable = false;
  const stopFollowingClock = clock.follow(
    1000,
    (err) => {
      if (!clockUnreadable) logger.warn({ err }, 'could not re-read the sandbox clock; retrying every second');
      clockUnreadable = true;
    },
    () => (clockUnreadable = false),
  );
  await scheduleMaintenance(store.jobs, clock.now());
  await scheduleWebhookRelay(store.jobs, clock.now());
  await scheduleSettlementRun(store.jobs, clock.now());
  await schedulePaymentMethodExpiry(store.jobs, clock.now());
  // Cards stored before INTERFACE §11.1 get the first 8 digits of their masked number (from the vault); a no-op once done.
  await services.paymentMethods.upgradeLegacyCards(logger);

  const metrics = new Metrics();
  metrics.gauge('payments_jobs', 'Jobs not yet done, by kind and state (dead = needs the operator)', ['kind', 'state'], async () =>
    (await store.jobs.countsByState()).map((r) => ({ labels: { kind: r.kind, state: r.state }, value: r.count })),
  );
  // The gauge's cached figure (a scrape counts again only when it is older than the refresh interval).
  const { backlog } = services;
  if (backlog.enabled) {
    metrics.gauge('payments_job_backlog', 'Due jobs not yet done (queued and due, or running), counted up to the bound', [], async () => [
      { labels: {}, value: await backlog.current() },
    ]);
    metrics.gauge(
      'payments_job_backlog_bound',
      'The bound in force: PAYMENTS_MAX_BACKLOG, or less by the lag bound (PAYMENTS_MAX_LAG_MS at the workers’ pace); at it MIT and asynchronous payouts are refused with 503',
      [],
      async () => [{ labels: {}, value: backlog.effectiveBound() }],
    );
    if (drain)
      metrics.gauge('payments_jobs_settled_per_second', 'Jobs this process’s workers settled per second over the last 5 s', [], async () => [
        { labels: {}, value: drain.ratePerSecond() },
      ]);
  }
  const rateLimiter = await createRateLimiter(config, store, logger);
  const app = await buildApp({
    logger,
    // The dashboard's own list (src/dashboard/payments.routes.ts) beside the service's routes.
    routes: [...services.routes, ...dashboardPaymentsRoutes(services.transactions)],
    authenticate: (secret) => services.accounts.authenticate(secret),
    idempotency: store.idempotency,
    sealer,
    dashboardSessions: store.dashboardSessions,
    sandbox: config.sandbox,
    accountName: async (accountId) => (await services.accounts.get(accountId)).name,
    rateLimiter,
    furtherLimit: async (category, accountId, body) => {
      if (category === 'mit') return services.mit.capRefusalFor(accountId, 'mit', 1);
      const entries = (body as { transactions?: unknown } | null)?.transactions;
      if (category === 'mitBatch') return services.mit.capRefusalFor(accountId, 'mit_batch', Array.isArray(entries) ? entries.length : 1);
      return null;
    },
    overload: services.backlog,
    now: () => clock.now(),
    publicUrl: config.publicUrl,
    ready: () => store.ping(),
    metrics,
    version: '1.0.0',
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  });

  if (runsWorkers) runner.start();

  let closing: Promise<void> | null = null;
  return {
    app,
    store,
    clock,
    runner,
    services,
    operatorKey: operator.value,
    operatorKeyGenerated: operator.created,
    sealer,
    close() {
      closing ??= (async () => {
        await app.close();
        stopFollowingClock();
        await runner?.stop(config.shutdownTimeoutMs);
        await clearhaus?.close?.();
        await threeDSServer?.close();
        await rateLimiter?.close();
        await store.close();
      })();
      return closing;
    },
  };
}

/** The Clearhaus connector of the deployment (INTERFACE §12.2); its log lines carry ids and codes only. */
function clearhausConnector(settings: ClearhausConfig, logger: Logger): ClearhausAcquirer {
  return new ClearhausAcquirer({
    baseUrl: settings.url,
    signingKeyId: settings.signingKeyId,
    signingKey: loadSigningKey(settings.signingKeyFile),
    timeoutMs: settings.timeoutMs,
    maxInFlight: settings.maxInFlight,
    logger: { warn: (obj, msg) => logger.warn({ ...obj, acquirer: 'clearhaus' }, msg) },
  });
}
