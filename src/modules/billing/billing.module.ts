/**
 * Subscription billing assembled from its parts, for the composition root (services.ts): the
 * three services, the scheduler, their routes and jobs, the payment-result listener and the CIT
 * session hook.
 */
import type { Clock } from '../../clock.js';
import type { JobDefinition } from '../../jobs/job.js';
import type { EventsLog } from '../../shared/events-log.js';
import type { RouteDef } from '../../shared/route.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { Chargeable } from '../subscriptions/subscriptions.repository.js';
import type { PaymentRequest, PipelineRepos } from '../transactions/payment-engine.js';
import type { Transaction } from '../transactions/transaction.js';
import type { BillingAgreementsRepository } from './agreements.repository.js';
import { billingAgreementsRoutes } from './agreements.routes.js';
import { BillingAgreementsService, type SessionWithAgreement } from './agreements.service.js';
import type { BillingRepos, RunInTransaction } from './billing.ports.js';
import { PipelineChargePayments } from './charge-payments.js';
import { ChargeScheduler } from './charge-scheduler.js';
import type { BillingChargesRepository } from './charges.repository.js';
import { billingChargesRoutes } from './charges.routes.js';
import { BillingChargesService } from './charges.service.js';
import type { BillingPlansRepository } from './plans.repository.js';
import { billingPlansRoutes } from './plans.routes.js';
import { BillingPlansService } from './plans.service.js';

export interface BillingModuleDeps<R extends PipelineRepos & BillingRepos> {
  repos: { billingPlans: BillingPlansRepository; billingAgreements: BillingAgreementsRepository; billingCharges: BillingChargesRepository };
  transaction: RunInTransaction<R>;
  subscriptions: {
    requireActive(accountId: string, subscriptionId: string, field?: string): Promise<Subscription>;
    requireChargeable(accountId: string, subscriptionId: string): Promise<Chargeable>;
  };
  paymentMethods: { find(accountId: string, id: string, withDeleted?: boolean): Promise<PaymentMethod | null> };
  payments: { submit(request: PaymentRequest<R>): Promise<Transaction> };
  /** The transactions carrying one billingAgreementChargeId. */
  transactionsOfCharge(accountId: string, chargeId: string): Promise<Transaction[]>;
  clock: Clock;
  /** The charges' business events (ChargeScheduler). */
  events?: EventsLog;
}

export interface BillingModule<R extends PipelineRepos & BillingRepos> {
  plans: BillingPlansService;
  agreements: BillingAgreementsService<R>;
  charges: BillingChargesService;
  scheduler: ChargeScheduler<R>;
  routes: RouteDef[];
  jobs: JobDefinition<never>[];
  /** The BILLING_CHARGE effects (declared with the payment engine): a charge attempt's final state moves its charge. */
  attemptFinal(repos: R, transaction: Transaction): Promise<void>;
  /** The CIT session hook (sessions.useBillingAgreements), on the session's commits. */
  sessionHook: {
    sessionCreated(repos: R, session: SessionWithAgreement): Promise<void>;
    sessionCompleted(repos: R, session: Pick<SessionWithAgreement, 'id' | 'accountId'>, subscription: Subscription): Promise<void>;
    sessionExpired(repos: R, session: Pick<SessionWithAgreement, 'id' | 'accountId'>): Promise<void>;
  };
}

export function createBillingModule<R extends PipelineRepos & BillingRepos>(deps: BillingModuleDeps<R>): BillingModule<R> {
  const { repos, clock, transaction } = deps;
  const plans = new BillingPlansService({ plans: repos.billingPlans, clock });
  const agreements = new BillingAgreementsService<R>({
    agreements: repos.billingAgreements,
    plans: repos.billingPlans,
    subscriptions: deps.subscriptions,
    transaction,
    clock,
  });
  const charges = new BillingChargesService({ charges: repos.billingCharges, transactionsOf: deps.transactionsOfCharge });
  const scheduler = new ChargeScheduler<R>({
    plans: repos.billingPlans,
    agreements: repos.billingAgreements,
    charges: repos.billingCharges,
    transaction,
    payments: new PipelineChargePayments<R>(deps),
    clock,
    events: deps.events,
  });
  return {
    plans,
    agreements,
    charges,
    scheduler,
    routes: [...billingPlansRoutes(plans), ...billingAgreementsRoutes(agreements), ...billingChargesRoutes(charges)],
    jobs: scheduler.jobs(),
    async attemptFinal(commit, tx) {
      if (tx.billingAgreementChargeId) await scheduler.attemptFinished(commit, tx);
    },
    sessionHook: {
      sessionCreated: async (commit, session) => void (await agreements.sessionCreated(commit, session)),
      sessionCompleted: async (commit, session, subscription) => void (await agreements.sessionCompleted(commit, session, subscription)),
      sessionExpired: (commit, session) => agreements.sessionExpired(commit, session),
    },
  };
}
