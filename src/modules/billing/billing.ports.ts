/**
 * What billing needs from storage and from its neighbours (subscriptions, MIT, the event outbox),
 * as ports: the composition root (services.ts) binds them, so this module imports no other
 * module's service.
 */
import type { JobQueue } from '../../jobs/job.js';
import type { EventOutbox } from '../events/event-outbox.js';
import type { InstantCapture } from '../transactions/transaction.js';
import type { BillingAgreementsRepository } from './agreements.repository.js';
import type { BillingChargesRepository } from './charges.repository.js';
import type { BillingPlansRepository } from './plans.repository.js';

/** The repositories of one database transaction, as billing uses them. */
export interface BillingRepos {
  billingPlans: BillingPlansRepository;
  billingAgreements: BillingAgreementsRepository;
  billingCharges: BillingChargesRepository;
  jobs: JobQueue;
  events: Pick<EventOutbox, 'append'>;
  /** Runs `fn` once the commit is done (the store's transaction). */
  afterCommit(fn: () => void): void;
}

export type RunInTransaction<R extends BillingRepos> = <T>(fn: (repos: R) => Promise<T>) => Promise<T>;

/** The subscription fields billing reads. */
export interface ChargeableSubscription {
  id: string;
  currency: string;
  customerId: string | null;
  sessionId: string | null;
}

/** SubscriptionsService.requireActive: the subscription, or a 422 on `field` when it cannot be charged. */
export interface SubscriptionGate {
  requireActive(accountId: string, subscriptionId: string, field?: string): Promise<ChargeableSubscription>;
}

export interface ChargeAttemptInput {
  accountId: string;
  subscriptionId: string;
  billingAgreementChargeId: string;
  amount: number;
  currency: string;
  instantCapture: InstantCapture;
  reference: string | null;
}

/**
 * The MIT side: creates one attempt's PENDING MIT transaction on the subscription (with
 * billingAgreementChargeId) and runs `inCommit` — the charge's own writes — in the same commit,
 * so that a charge attempt and its transaction exist together or not at all. Throws a 422
 * AppError when the subscription can no longer be charged; whatever `inCommit` throws rolls the
 * whole commit back and comes out unchanged.
 */
export interface ChargePayments<R extends BillingRepos> {
  submitAttempt(input: ChargeAttemptInput, inCommit: (repos: R, transactionId: string) => Promise<void>): Promise<string>;
}
