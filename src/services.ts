/**
 * Builds every service and the list of routes from the storage, clock and config. Shared by
 * main.ts (the real process), the tests and the benchmarks, so that all run the same wiring.
 */
import type { Logger } from 'pino';
import type { Acquirer, AcquirerMerchantAccount } from './connectors/acquirer.js';
import { BoundedMap } from './shared/bounded-map.js';
import type { ThreeDSServer } from './connectors/threeds/three-d-secure.js';
import { THREEDS_SANDBOX_PANS } from './connectors/threeds/sandbox-cards.js';
import type { AcquirerCredentials } from './modules/acquirer-agreements/acquirer-agreement.js';
import { ThreeDSecureService } from './modules/three-d-secure/three-d-secure.service.js';
import { SimulatorAcquirer } from './connectors/simulator/simulator.js';
import { AgreementRouting } from './modules/transactions/acquirer-routing.js';
import { timingSafeEqual } from 'node:crypto';
import type { ServiceClock } from './clock.js';
import type { Config } from './config.js';
import { BacklogGauge } from './jobs/backlog.js';
import { maintenanceJob } from './jobs/maintenance.js';
import { pinoEventsLog } from './logger.js';
import type { JobDefinition } from './jobs/job.js';
import { accountsRoutes } from './modules/accounts/accounts.routes.js';
import { AccountsService } from './modules/accounts/accounts.service.js';
import { acquirerAgreementsRoutes } from './modules/acquirer-agreements/acquirer-agreements.routes.js';
import { AcquirerAgreementsService } from './modules/acquirer-agreements/acquirer-agreements.service.js';
import { operationsRoutes } from './modules/operations/operations.routes.js';
import { inDoubtRoutes } from './modules/operations/in-doubt.routes.js';
import { InDoubtService } from './modules/operations/in-doubt.service.js';
import { OperationsService } from './modules/operations/operations.service.js';
import { PaymentMethodsService } from './modules/payment-methods/payment-methods.service.js';
import { pointsOfSaleRoutes } from './modules/points-of-sale/points-of-sale.routes.js';
import { secretsInForce, signatureHeaders } from './shared/signing.js';
import { PointsOfSaleService } from './modules/points-of-sale/points-of-sale.service.js';
import { sandboxClockRoutes } from './modules/sandbox/sandbox.routes.js';
import { SANDBOX_FEE_SCHEDULE, type FeeSchedule } from './modules/settlements/fees.js';
import { settlementRunJob } from './modules/settlements/settlements.jobs.js';
import { settlementsRoutes, settlementsSandboxRoutes } from './modules/settlements/settlements.routes.js';
import { SettlementsService } from './modules/settlements/settlements.service.js';
import { terminalsRoutes } from './modules/terminals/terminals.routes.js';
import { TerminalsService } from './modules/terminals/terminals.service.js';
import { transactionsRoutes } from './modules/transactions/transactions.routes.js';
import { TransactionsService } from './modules/transactions/transactions.service.js';
import { TimelineService } from './modules/transactions/timeline.js';
import { KyselyTimelineRepository } from './storage/repositories/timeline.js';
import { operatorJobsRoutes } from './dashboard/operator-jobs.routes.js';
import { callbackRetryDelay } from './delivery/callbacks.js';
import { DeliveryGate } from './delivery/delivery-gate.js';
import { CALLBACK_TIMEOUT_MS, UndiciSender } from './delivery/http-sender.js';
import { CallbackUrlPolicy } from './delivery/url-policy.js';
import { CALLBACK_JOB, CALLBACK_MAX_ATTEMPTS, PaymentEngine } from './modules/transactions/payment-engine.js';
import { newId } from './shared/ids.js';
import { newJob } from './jobs/catalogue.js';
import { CallbackDelivery } from './delivery/callbacks.js';
import { notificationsRoutes } from './delivery/notifications.routes.js';
import { motoRoutes } from './modules/moto/moto.routes.js';
import { MotoService } from './modules/moto/moto.service.js';
import { cardObject } from './modules/payment-methods/payment-method.js';
import { paymentMethodsRoutes, paymentMethodsSandboxRoutes } from './modules/payment-methods/payment-methods.routes.js';
import { payoutsRoutes } from './modules/payouts/payouts.routes.js';
import { PayoutsService } from './modules/payouts/payouts.service.js';
import { NotificationBuilder } from './modules/transactions/notification.js';
import { AppError } from './shared/errors.js';
import type { Repositories } from './storage/store.js';
import { saleJobs } from './modules/sales/sales.jobs.js';
import { salesRoutes, salesSandboxRoutes } from './modules/sales/sales.routes.js';
import { SalesService } from './modules/sales/sales.service.js';
import { webhookDeliveryJob, webhookRelayJob } from './modules/webhooks/webhooks.jobs.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { type RetrySchedule, WebhooksService } from './modules/webhooks/webhooks.service.js';
import { mitRoutes } from './modules/mit/mit.routes.js';
import { MitService } from './modules/mit/mit.service.js';
import { IngestionCap } from './modules/mit/ingestion-cap.js';
import { sessionsRoutes } from './modules/sessions/sessions.routes.js';
import { sessionWire } from './modules/sessions/sessions.schemas.js';
import { SESSION_EXPIRED_EVENT, SessionsService } from './modules/sessions/sessions.service.js';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.js';
import { paymentMethodExpiryJob } from './modules/subscriptions/subscriptions.jobs.js';
import { paymentLinksRoutes } from './modules/payment-links/payment-links.routes.js';
import { PaymentLinksService } from './modules/payment-links/payment-links.service.js';
import { multiLinksRoutes } from './modules/multi-links/multi-links.routes.js';
import { MultiLinksService } from './modules/multi-links/multi-links.service.js';
import { subscriptionWire } from './modules/subscriptions/subscriptions.schemas.js';
import { CardSubscriptions } from './modules/subscriptions/card-subscriptions.js';
import { SubscriptionsService } from './modules/subscriptions/subscriptions.service.js';
import { type BillingModule, createBillingModule } from './modules/billing/billing.module.js';
import type { SessionRepos } from './modules/sessions/sessions.service.js';
import { hashSecret, type Sealer } from './security/secret-box.js';
import type { RouteDef } from './shared/route.js';
import type { Store } from './storage/store.js';

export interface ServiceDeps {
  config: Pick<
    Config,
    | 'sandbox'
    | 'publicUrl'
    | 'sandboxLatencyMs'
    | 'sandboxAcquirerLog'
    | 'allowPrivateUrls'
    | 'maxBacklog'
    | 'maxLagMs'
    | 'mitCapPerMinute'
    | 'mitBatchCapPerMinute'
  >;
  store: Store;
  clock: ServiceClock;
  sealer: Sealer;
  operatorKey: string;
  logger: Logger;
  /** The acquirer connector; default: the sandbox simulator. Tests may pass a scripted one. */
  acquirer?: Acquirer;
  /** Settlement fee schedule; default the sandbox schedule. */
  settlementFees?: FeeSchedule;
  /** How old the backlog figure may get before it is counted again (default BACKLOG_REFRESH_MS; tests: 0). */
  backlogRefreshMs?: number;
  /** The workers' pace (jobs settled per second) when this process runs them: turns the lag bound on. */
  drainRate?: () => number;
  /** Whether the deployment has a Clearhaus signing key (INTERFACE §12.2); default false: `clearhaus` agreements are refused. */
  clearhausAvailable?: boolean;
  /** The Clearhaus connector (runtime.ts builds it from CLEARHAUS_*; tests point one at a fake); null/absent: none. */
  clearhaus?: Acquirer | null;
  /** The 3-D Secure server of agreements that name one (runtime.ts: 3dsecure.io at THREEDS_URL); null/absent: none. */
  threeDSServer?: ThreeDSServer | null;
}

/** How long a merchant's account at its acquirer is remembered for 3-D Secure's AReq. */
const ACQUIRER_ACCOUNT_CACHE_MS = 10 * 60_000;

/** The acquirer's `merchantAccount` of an agreement, remembered per agreement row for a while (one GET /account, not one per payment). */
function cachedAcquirerAccounts(connector: Acquirer | null, now: () => number): (credentials: AcquirerCredentials) => Promise<AcquirerMerchantAccount | null> {
  const known = new BoundedMap<string, { account: AcquirerMerchantAccount; until: number }>(10_000);
  return async (credentials) => {
    const hit = known.get(credentials.id);
    if (hit && hit.until > now()) return hit.account;
    const account = (await connector?.merchantAccount?.(credentials)) ?? null;
    if (account) known.set(credentials.id, { account, until: now() + ACQUIRER_ACCOUNT_CACHE_MS });
    return account;
  };
}

export interface Services {
  accounts: AccountsService;
  /** MIT ingestion; the runtime asks its cap when a request bucket refuses (honest Retry-After). */
  mit: MitService<Repositories>;
  /** Acquirer agreements of accounts (INTERFACE §12.1): the partner routes, and credentialsOf/currentFor for the payment engine. */
  acquirerAgreements: AcquirerAgreementsService;
  pointsOfSale: PointsOfSaleService;
  terminals: TerminalsService;
  transactions: TransactionsService;
  acquirer: Acquirer;
  paymentMethods: PaymentMethodsService;
  /** The one payment engine: every operation that moves money (payments, lifecycle operations, instant capture). */
  payments: PaymentEngine<Repositories>;
  /** NotificationWebhook builder; the sections of sessions, subscriptions and payment methods are given at construction. */
  notificationBuilder: NotificationBuilder<Repositories>;
  callbacks: CallbackDelivery<Repositories>;
  operations: OperationsService<Repositories>;
  webhooks: WebhooksService;
  settlements: SettlementsService;
  /** requireActive(accountId, subscriptionId) before charging (MIT, billing). */
  subscriptions: SubscriptionsService;
  /** CIT sessions; billing plugs its agreement hook in with sessions.useBillingAgreements. */
  sessions: SessionsService;
  /** Subscription billing: plans, agreements, charges and the charge scheduler. */
  billing: BillingModule<Repositories>;
  /** Payment links: a CIT session behind a shareable URL. */
  paymentLinks: PaymentLinksService;
  /** Due jobs not yet done, against PAYMENTS_MAX_BACKLOG: MIT, MIT batch and asynchronous payouts are refused at the bound. */
  backlog: BacklogGauge;
  routes: RouteDef[];
  jobs: JobDefinition<never>[];
}

/** Compares a secret's hash (hashSecret) with the operator key's in constant time. */
function operatorMatcher(operatorKey: string): (secretHash: string) => boolean {
  const expected = Buffer.from(hashSecret(operatorKey), 'hex');
  return (secretHash) => timingSafeEqual(Buffer.from(secretHash, 'hex'), expected);
}

export function buildServices(deps: ServiceDeps): Services {
  const { store, clock, sealer } = deps;
  // One info line per business event (src/shared/events-log.ts), on the service's logger.
  const events = pinoEventsLog(deps.logger);
  const accounts = new AccountsService({
    accounts: store.accounts,
    transaction: (fn) => store.transaction((repos) => fn(repos)),
    clock,
    hashSecret,
    isOperatorKeyHash: operatorMatcher(deps.operatorKey),
  });
  const acquirerAgreements = new AcquirerAgreementsService({
    agreements: store.acquirerAgreements,
    transaction: (fn) => store.transaction((repos) => fn(repos)),
    accounts: store.accounts,
    sealer,
    clock,
    clearhausAvailable: deps.clearhausAvailable ?? Boolean(deps.clearhaus),
    events,
  });
  const pointsOfSale = new PointsOfSaleService({ pointsOfSale: store.pointsOfSale, clock, sealer });
  const terminals = new TerminalsService({
    terminals: store.terminals,
    transaction: (fn) => store.transaction((repos) => fn(repos)),
    pointsOfSale,
    clock,
  });
  const transactions = new TransactionsService({
    transactions: store.transactions,
    agreementOf: (id) => acquirerAgreements.credentialsOf(id),
    acquirerRequests: store.acquirerRequests,
  });
  const acquirer = deps.acquirer ?? new SimulatorAcquirer(deps.config.sandboxLatencyMs, deps.config.sandboxAcquirerLog ?? null);
  // A card's deletion, block or expiry makes its subscriptions INVALID in that commit; an account update reinstates them.
  const cardSubscriptions = new CardSubscriptions({ clock });
  const paymentMethods = new PaymentMethodsService({
    paymentMethods: store.paymentMethods,
    sealer,
    clock,
    transaction: (fn) => store.transaction(fn),
    effects: {
      deleted: (repos, accountId, id) => cardSubscriptions.invalidate(repos as Repositories, accountId, id, 'PAYMENT_METHOD_DELETED'),
      updated: (repos, method) => cardSubscriptions.reinstate(repos as Repositories, method),
    },
    luhnExempt: deps.config.sandbox ? THREEDS_SANDBOX_PANS : undefined,
  });
  // Callbacks and webhooks: private addresses only in the sandbox or when allowed (INTERFACE §8).
  const allowPrivate = deps.config.sandbox || deps.config.allowPrivateUrls;
  // One pooled outbound HTTP agent for callbacks and webhook deliveries.
  const httpSender = new UndiciSender({ allowPrivate, now: () => clock.now() });
  // One gate for both: deliveries under way per merchant and per destination are bounded, so one
  // merchant's slow receiver cannot take the delivery lane's job slots from the others (issue 9).
  const deliveryGate = new DeliveryGate();

  // Online payments: the pipeline, the NotificationWebhook, callbacks, MOTO and payouts.
  const findPointOfSale = async (accountId: string, id: string) => {
    try {
      return await pointsOfSale.get(accountId, id);
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  };
  const notificationBuilder = new NotificationBuilder<Repositories>(transactions, {
    session: async (tx, repos) => {
      const session = tx.sessionId ? await (repos ?? store).sessions.findById(tx.accountId, tx.sessionId) : null;
      return session ? sessionWire(session) : null;
    },
    subscription: async (tx, repos) => {
      const subscription = tx.subscriptionId ? await (repos ?? store).subscriptions.findById(tx.accountId, tx.subscriptionId) : null;
      return subscription ? subscriptionWire(subscription) : null;
    },
    subscriptionOf: subscriptionWire,
    card: async (tx, repos) => cardObject(tx.paymentMethodId ? await (repos ?? store).paymentMethods.findById(tx.accountId, tx.paymentMethodId, true) : null),
    cardOf: cardObject,
  });
  const callbackUrlPolicy = new CallbackUrlPolicy({ allowPrivate });
  const callbacks = new CallbackDelivery<Repositories>({
    notifications: store.notifications,
    transaction: (fn, unit) => store.transaction(fn, unit),
    findTransaction: (accountId, id) => store.transactions.findById(accountId, id),
    pointsOfSale,
    builder: notificationBuilder,
    sender: httpSender,
    sealer,
    gate: deliveryGate,
    clock,
    events,
  });
  const payments = new PaymentEngine<Repositories>({
    transactions: store.transactions,
    transaction: (fn, unit) => store.transaction(fn, unit),
    // The cardholder blocked the merchant (Clearhaus 40420): no MIT may be sent for the card again.
    cardBlocked: (repos, tx) =>
      tx.paymentMethodId ? cardSubscriptions.invalidate(repos, tx.accountId, tx.paymentMethodId, 'CARD_BLOCKED').then(() => undefined) : Promise.resolve(),
    routing: new AgreementRouting({ sandbox: acquirer, clearhaus: deps.clearhaus ?? null, agreements: acquirerAgreements, sandboxMode: deps.config.sandbox }),
    acquirerRequests: store.acquirerRequests,
    clock,
    // A final transaction's callback row (with its body) and job are written in the commit that made it final.
    callbacks,
    // Deleted payment methods too: running transactions keep working.
    openInstrument: ({ paymentMethod, panSealed }) => paymentMethods.instrumentFor(paymentMethod, panSealed),
    events,
  });
  // Capture, refund, void and renew: the lifecycle flow decides, the engine moves the money.
  const operations = new OperationsService<Repositories>({ transactions: store.transactions, payments });
  // The backlog bound (INTERFACE §3): asynchronous work is refused with 503 while due jobs are at it.
  const backlog = new BacklogGauge({
    count: (now, limit) => store.jobs.countBacklog(now, limit),
    bound: deps.config.maxBacklog,
    ...(deps.drainRate ? { maxLagMs: deps.config.maxLagMs, drainRate: deps.drainRate } : {}),
    now: () => clock.now(),
    ...(deps.backlogRefreshMs === undefined ? {} : { refreshMs: deps.backlogRefreshMs }),
    // Once per run of failed counts (the database is down: the requests meet that themselves).
    onError: (err) => deps.logger.warn({ err }, 'could not count the job backlog; the last figure stays'),
  });
  const moto = new MotoService({
    pointsOfSale: { find: findPointOfSale },
    paymentMethods,
    payments,
    notifications: notificationBuilder,
    urlPolicy: callbackUrlPolicy,
  });
  const payouts = new PayoutsService({
    pointsOfSale: { find: findPointOfSale },
    paymentMethods,
    payments,
    notifications: notificationBuilder,
    urlPolicy: callbackUrlPolicy,
    overload: backlog,
  });

  // Webhooks reuse the callbacks' sender, URL policy and retry schedule (INTERFACE §8).
  const webhookSchedule: RetrySchedule = {
    maxAttempts: CALLBACK_MAX_ATTEMPTS,
    timeoutMs: CALLBACK_TIMEOUT_MS,
    delayBeforeAttemptMs: (attempt) => callbackRetryDelay(attempt - 1),
  };
  const webhooks = new WebhooksService({
    webhooks: store.webhooks,
    transaction: (fn) => store.transaction((repos) => fn(repos)),
    pointsOfSale,
    checkUrl: (field, url, domain) => callbackUrlPolicy.check(field, url, domain),
    async sender({ url, headers, body }) {
      const result = await httpSender.post(url, headers, body);
      // One literal, not the result spread with \`ok\` added (docs/object-shapes.md).
      const ok = result.status !== null && result.status >= 200 && result.status < 300;
      return { ok, status: result.status, error: result.error, durationMs: result.durationMs };
    },
    gate: deliveryGate,
    schedule: webhookSchedule,
    clock,
    sealer,
    events,
  });

  // In-person sales on card terminals: the pipeline moves the money after the tap.
  const sales = new SalesService<Repositories>({
    transaction: (fn) => store.transaction(fn),
    sales: store.sales,
    transactions: store.transactions,
    terminals: store.terminals,
    pointsOfSale,
    paymentMethods,
    payments,
    urlPolicy: callbackUrlPolicy,
    clock,
  });
  payments.declareEffects('TERMINAL_SALE', (repos, transaction) => sales.saleFinal(repos, transaction));

  // Subscriptions, CIT sessions (hosted payment window) and MIT on the same pipeline.
  const subscriptions = new SubscriptionsService({
    subscriptions: store.subscriptions,
    transaction: (fn) => store.transaction(fn),
    paymentMethods,
    cards: cardSubscriptions,
    clock,
  });
  // The payment window's 3-D Secure (INTERFACE §13): only where the deployment has a 3DS Server.
  const threeDS = deps.threeDSServer
    ? new ThreeDSecureService({
        attempts: store.threeDSAttempts,
        server: deps.threeDSServer,
        agreements: acquirerAgreements,
        acquirerAccount: cachedAcquirerAccounts(deps.clearhaus ?? null, () => clock.now()),
        sealer,
        clock,
      })
    : null;
  const sessions = new SessionsService({
    // Billing and payment links are built from sessions below; these run only once a session is written.
    billing: {
      sessionCreated: (repos, session) => billing.sessionHook.sessionCreated(storeRepos(repos), session),
      sessionCompleted: (repos, session, subscription) => billing.sessionHook.sessionCompleted(storeRepos(repos), session, subscription),
      // The one session-expired hook also expires the session's payment link, in the same commit.
      sessionExpired: async (repos, session) => {
        await billing.sessionHook.sessionExpired(storeRepos(repos), session);
        await paymentLinks.onSessionExpired(storeRepos(repos), session);
      },
    },
    sessions: store.sessions,
    transaction: (fn) => store.transaction(fn),
    pointsOfSale,
    paymentMethods,
    subscriptions,
    urlPolicy: callbackUrlPolicy,
    payments,
    clock,
    findSubscription: (accountId, id) => store.subscriptions.findById(accountId, id),
    // preAuthUrl and the EXPIRED report: the callbacks' sender, Authorization value and delivery (INTERFACE §11.2).
    outbound: {
      async post(session, url, body, deliveryId) {
        const pointOfSale = await pointsOfSale.getWithSecret(session.accountId, session.pointOfSaleId);
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'x-delivery-id': deliveryId,
          'user-agent': 'payments-service-callbacks/1',
        };
        if (pointOfSale?.webhookAuthentication) headers.authorization = pointOfSale.webhookAuthentication;
        // Signed like every callback (INTERFACE §11.10), at the time it is sent.
        const text = JSON.stringify(body);
        const signing = await pointsOfSale.signingSecrets(session.accountId, session.pointOfSaleId);
        const now = clock.now();
        if (signing) Object.assign(headers, signatureHeaders(deliveryId, text, secretsInForce(signing, now), now));
        return (await httpSender.post(url, headers, text)).status;
      },
      // A delivery row of its own (event SESSION_EXPIRED) on the last failed attempt, sent by the callback job.
      async scheduleExpiredCallback(sessionRepos, session, transaction) {
        const repos = sessionRepos as Repositories;
        const pointOfSale = await repos.pointsOfSale.findById(transaction.accountId, transaction.pointOfSaleId);
        const now = clock.nowIso();
        const body = JSON.stringify(await notificationBuilder.build(transaction, repos));
        const notification = {
          ...{ id: newId(), accountId: transaction.accountId, transactionId: transaction.id, event: SESSION_EXPIRED_EVENT, url: session.notificationUrl! },
          ...{ state: 'PENDING' as const, body, attempts: 0, lastStatus: null, lastError: null, nextAttemptAt: now, createdAt: now, updatedAt: now },
          ...{ deliveredAt: null, authorizationSealed: pointOfSale?.webhookAuthenticationSealed ?? null },
        };
        await repos.notifications.addIfAbsent(notification);
        const payload = { accountId: transaction.accountId, transactionId: transaction.id, event: SESSION_EXPIRED_EVENT, notificationId: notification.id };
        await repos.jobs.enqueue(newJob(CALLBACK_JOB, payload, { dedupeKey: `${CALLBACK_JOB}:${transaction.id}:${SESSION_EXPIRED_EVENT}` }));
      },
    },
  });

  // Subscription billing: plans, agreements and their charges, scheduled on the service clock;
  // a charge's attempts are MIT payments on the same pipeline.
  const billing = createBillingModule<Repositories>({
    repos: store,
    transaction: (fn) => store.transaction(fn),
    subscriptions,
    paymentMethods,
    payments,
    transactionsOfCharge: (accountId, chargeId) => transactions.list(accountId, { billingAgreementChargeId: chargeId }, null, 100),
    clock,
    events,
  });
  payments.declareEffects('BILLING_CHARGE', (repos, transaction) => billing.attemptFinal(repos, transaction));
  // The charge's log lines, once the commit of its attempt's final answer is done.
  // Sessions commit through store.transaction, so their repositories are the store's full set.
  const storeRepos = (repos: SessionRepos) => repos as Repositories;
  // Payment links: the link is written, cancelled and expired in its session's commits.
  const paymentLinks = new PaymentLinksService({
    links: store.paymentLinks,
    transaction: (fn) => store.transaction(fn),
    sessions: {
      create: (accountId, input, inCommit) => sessions.create(accountId, input, { inCommit: (repos, session) => inCommit(storeRepos(repos), session) }),
      get: (accountId, id) => sessions.get(accountId, id),
      cancelInCommit: (repos, accountId, sessionId) => sessions.cancelInCommit(repos, accountId, sessionId),
    },
    clock,
  });
  // A session's payment, in the commit that makes it final: the session completes (its subscription
  // and billing agreement with it), then its payment link, if any, becomes PAID.
  payments.declareEffects('SESSION', async (repos, transaction) => {
    const after = (await sessions.paymentFinal(repos, transaction)) ?? transaction;
    await paymentLinks.sessionPaymentFinal(repos, after);
    return after;
  });
  // Multi-links: every visit starts a new session through the sessions module; URLs are never the point of sale's.
  const multiLinks = new MultiLinksService({
    links: store.multiLinks,
    transaction: (fn) => store.transaction(fn),
    pointsOfSale,
    urlPolicy: callbackUrlPolicy,
    billingPlans: { find: (accountId, id) => store.billingPlans.findById(accountId, id) },
    sessions: {
      create: (accountId, input, inCommit) =>
        sessions.create(accountId, input, { inheritUrls: false, inCommit: (repos, session) => inCommit(storeRepos(repos), session) }),
    },
    clock,
  });
  const mit = new MitService<Repositories>({
    subscriptions,
    urlPolicy: callbackUrlPolicy,
    payments,
    overload: backlog,
    ingestion: new IngestionCap({
      caps: { mit: deps.config.mitCapPerMinute, mitBatch: deps.config.mitBatchCapPerMinute },
      clock,
      counters: store.ingestionCounters,
    }),
  });

  // Settlement runs: daily on the service clock, and on demand in the sandbox.
  const settlements = new SettlementsService({
    settlements: store.settlements,
    transaction: (fn) => store.transaction(fn),
    settings: store.settings,
    clock,
    schedule: deps.settlementFees ?? SANDBOX_FEE_SCHEDULE,
    events,
  });

  const routes: RouteDef[] = [
    ...paymentMethodsRoutes(paymentMethods),
    ...motoRoutes(moto),
    ...payoutsRoutes(payouts),
    ...notificationsRoutes(callbacks),
    ...accountsRoutes(accounts),
    ...acquirerAgreementsRoutes(acquirerAgreements),
    ...pointsOfSaleRoutes(pointsOfSale),
    ...terminalsRoutes(terminals),
    ...transactionsRoutes(transactions, new TimelineService({ transactions, timeline: new KyselyTimelineRepository(store.db) })),
    ...operationsRoutes(operations),
    ...inDoubtRoutes(new InDoubtService({ payments })),
    ...webhooksRoutes(webhooks),
    ...salesRoutes(sales),
    ...subscriptionsRoutes(subscriptions),
    ...sessionsRoutes(sessions, { sandbox: deps.config.sandbox, threeDS }),
    ...mitRoutes(mit),
    ...paymentLinksRoutes(paymentLinks),
    ...multiLinksRoutes(multiLinks),
    ...billing.routes,
    ...(deps.config.sandbox ? salesSandboxRoutes(sales) : []),
    ...(deps.config.sandbox ? sandboxClockRoutes(clock) : []),
    ...settlementsRoutes(settlements),
    ...operatorJobsRoutes({ jobs: store.jobs, now: () => clock.now() }),
    ...(deps.config.sandbox ? settlementsSandboxRoutes(settlements) : []),
    ...(deps.config.sandbox ? paymentMethodsSandboxRoutes(paymentMethods) : []),
  ];
  const jobs = [
    maintenanceJob({ idempotency: store.idempotency, jobs: store.jobs }),
    payments.driveJob(),
    payments.releaseJob(),
    sessions.expireJob(),
    ...billing.jobs,
    callbacks.job(),
    ...saleJobs(sales),
    webhookRelayJob({ service: webhooks, jobs: store.jobs }),
    webhookDeliveryJob({ service: webhooks }),
    settlementRunJob({ service: settlements, jobs: store.jobs }),
    paymentMethodExpiryJob({ service: subscriptions, jobs: store.jobs }),
  ] as JobDefinition<never>[];
  payments.checkEffectsDeclared();
  return {
    accounts,
    acquirerAgreements,
    pointsOfSale,
    terminals,
    transactions,
    acquirer,
    paymentMethods,
    payments,
    notificationBuilder,
    callbacks,
    operations,
    webhooks,
    settlements,
    subscriptions,
    sessions,
    billing,
    paymentLinks,
    mit,
    backlog,
    routes,
    jobs,
  };
}
