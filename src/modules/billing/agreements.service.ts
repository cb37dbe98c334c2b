/**
 * Billing agreement use cases: create (on an ACTIVE subscription, or inside a CIT session's
 * completion), read, list, stop and resume. Every state change goes through the transition table
 * as a compare-and-set, and commits together with its event and the job that schedules its
 * next charge.
 */
import type { Clock } from '../../clock.js';
import { AppError, fieldError, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { parseInstant } from '../../shared/time.js';
import { AGREEMENT_EVENTS, type AgreementAction, type BillingAgreement, nextAgreementState } from './agreement.js';
import type { AgreementChanges, BillingAgreementsRepository } from './agreements.repository.js';
import { billingAgreementWire } from './agreements.schemas.js';
import { defaultFirstChargeAt, desiredDateFor, startOfUtcDay, utcDateOf } from './billing-schedule.js';
import type { BillingRepos, ChargeableSubscription, RunInTransaction, SubscriptionGate } from './billing.ports.js';
import { enqueueChargeDue } from './charge-jobs.js';
import type { BillingPlan } from './plan.js';
import type { BillingPlansRepository } from './plans.repository.js';

export interface CreateAgreementInput {
  billingPlanId: string;
  subscriptionId: string;
  reference?: string | null | undefined;
  /** Date-time, or YYYY-MM-DD for 00:00 UTC. */
  nextChargeAt?: string | null | undefined;
}

/** Where 422s about a session's `subscription.billingAgreement` point. */
const SESSION_FIELD = 'subscription.billingAgreement';

/** The parts of a CIT session the agreement hook reads. */
export interface SessionWithAgreement {
  id: string;
  accountId: string;
  currency: string;
  customerId: string | null;
  subscriptionRequest: { billingAgreement: { billingPlanId: string; reference: string | null; nextChargeAt: string | null } | null } | null;
}

interface FirstCharge {
  at: number;
  /** The agreement's desiredDate: the day of month of `at` on a MONTH plan, else null. */
  desiredDate: number | null;
}

export interface BillingAgreementsDeps<R extends BillingRepos> {
  agreements: BillingAgreementsRepository;
  plans: BillingPlansRepository;
  subscriptions: SubscriptionGate;
  transaction: RunInTransaction<R>;
  clock: Clock;
}

export class BillingAgreementsService<R extends BillingRepos> {
  constructor(private readonly deps: BillingAgreementsDeps<R>) {}

  async create(accountId: string, input: CreateAgreementInput): Promise<BillingAgreement> {
    const plan = await this.planFor(accountId, input.billingPlanId, 'billingPlanId');
    const subscription = await this.deps.subscriptions.requireActive(accountId, input.subscriptionId, 'subscriptionId');
    const firstChargeAt = this.firstChargeAt(plan, subscription.currency, input.nextChargeAt, { plan: 'billingPlanId', nextChargeAt: 'nextChargeAt' });
    return this.deps.transaction((repos) => this.insertActive(repos, { accountId, plan, subscription, reference: input.reference ?? null, firstChargeAt }));
  }

  /**
   * POST /cit with `subscription.billingAgreement`, in the session's creation commit: the plan
   * must exist in the session's currency (else 422 on `subscription.billingAgreement.*`, refusing
   * the session before the customer pays), and the agreement waits PENDING for the payment.
   */
  async sessionCreated(repos: R, session: SessionWithAgreement): Promise<BillingAgreement | null> {
    const request = session.subscriptionRequest?.billingAgreement;
    if (!request) return null;
    const plan = await repos.billingPlans.findById(session.accountId, request.billingPlanId);
    if (!plan) throw fieldError(`${SESSION_FIELD}.billingPlanId`, 'uuid', 'no billing plan with this id exists');
    const first = this.firstChargeAt(plan, session.currency, request.nextChargeAt, {
      plan: `${SESSION_FIELD}.billingPlanId`,
      nextChargeAt: `${SESSION_FIELD}.nextChargeAt`,
    });
    const now = this.deps.clock.nowIso();
    const agreement: BillingAgreement = {
      id: newId(),
      accountId: session.accountId,
      billingPlanId: plan.id,
      subscriptionId: null,
      sessionId: session.id,
      customerId: session.customerId,
      state: 'PENDING',
      // The date asked for, if any; without one the first charge counts from the day the customer pays.
      nextChargeAt: request.nextChargeAt ? new Date(first.at).toISOString() : null,
      lastChargeAt: null,
      desiredDate: request.nextChargeAt ? first.desiredDate : null,
      reference: request.reference,
      stateChangedAt: now,
      createdAt: now,
      updatedAt: now,
    };
    await repos.billingAgreements.insert(agreement);
    return agreement;
  }

  /**
   * The session's payment succeeded and created `subscription` (same commit): its PENDING
   * agreement becomes ACTIVE on it. Runs inside the payment result's commit, so it only refuses
   * what cannot happen (the plan was checked when the session was created and plans never change).
   */
  async sessionCompleted(
    repos: R,
    session: Pick<SessionWithAgreement, 'id' | 'accountId'>,
    subscription: ChargeableSubscription,
  ): Promise<BillingAgreement | null> {
    const pending = await repos.billingAgreements.findBySession(session.accountId, session.id);
    if (!pending || pending.state !== 'PENDING') return null;
    const plan = await repos.billingPlans.findById(session.accountId, pending.billingPlanId);
    if (!plan) throw new Error(`billing plan ${pending.billingPlanId} of agreement ${pending.id} is missing`);
    const nowMs = this.deps.clock.now();
    // A date asked for that has passed meanwhile stays: its first period is due at once.
    const at = pending.nextChargeAt ? Date.parse(pending.nextChargeAt) : defaultFirstChargeAt(nowMs, plan.interval);
    return this.applyTransition(repos, pending, 'activate', {
      subscriptionId: subscription.id,
      customerId: subscription.customerId ?? pending.customerId,
      nextChargeAt: new Date(at).toISOString(),
      desiredDate: pending.desiredDate ?? desiredDateFor(plan.interval, at),
    });
  }

  /** The session ended without a payment: its PENDING agreement stops (it has no subscription to charge). */
  async sessionExpired(repos: R, session: Pick<SessionWithAgreement, 'id' | 'accountId'>): Promise<void> {
    const pending = await repos.billingAgreements.findBySession(session.accountId, session.id);
    if (pending?.state === 'PENDING') await this.applyTransition(repos, pending, 'stop', { nextChargeAt: null });
  }

  async get(accountId: string, id: string): Promise<BillingAgreement> {
    const agreement = await this.deps.agreements.findById(accountId, id);
    if (!agreement) throw notFound('billing agreement');
    return agreement;
  }

  list(accountId: string, offset: number, limit: number): Promise<{ items: BillingAgreement[]; total: number }> {
    return this.deps.agreements.list(accountId, offset, limit);
  }

  /** No automatic charges until resumed; stopping a STOPPED agreement answers it unchanged. */
  stop(accountId: string, id: string): Promise<BillingAgreement> {
    return this.transition(accountId, id, 'stop', () => ({ nextChargeAt: null }));
  }

  /** ACTIVE again; the first charge after resuming is made at `nextChargeAt`; desiredDate stays (INTERFACE §11.7). */
  async resume(accountId: string, id: string, nextChargeAt: string): Promise<BillingAgreement> {
    const at = this.parseChargeInstant(nextChargeAt, 'nextChargeAt');
    const current = await this.get(accountId, id);
    if (current.state === 'STOPPED') {
      // Stopped because its CIT session expired unpaid: there is nothing to charge.
      if (!current.subscriptionId)
        throw new AppError('CONFLICT', 'The billing agreement has no subscription (its CIT session ended without a payment); it cannot resume.');
      await this.deps.subscriptions.requireActive(accountId, current.subscriptionId, 'subscriptionId');
    }
    return this.transition(accountId, id, 'resume', () => ({ nextChargeAt: new Date(at).toISOString() }));
  }

  private async planFor(accountId: string, billingPlanId: string, field: string): Promise<BillingPlan> {
    const plan = await this.deps.plans.findById(accountId, billingPlanId);
    if (!plan) throw fieldError(field, 'uuid', 'no billing plan with this id exists');
    return plan;
  }

  /**
   * The first charge: the instant asked for, or today (UTC) plus one plan interval. On a MONTH
   * plan its day of month is the desiredDate later periods keep: first on Jan 31 → Feb 29 → Mar 31.
   */
  private firstChargeAt(
    plan: BillingPlan,
    currency: string,
    requested: string | null | undefined,
    fields: { plan: string; nextChargeAt: string },
  ): FirstCharge {
    if (plan.currency !== currency) {
      throw fieldError(fields.plan, `in:${currency}`, `the plan is in ${plan.currency} but the subscription is in ${currency}`);
    }
    if (requested === undefined || requested === null) {
      const at = defaultFirstChargeAt(this.deps.clock.now(), plan.interval);
      return { at, desiredDate: desiredDateFor(plan.interval, at) };
    }
    const at = this.parseChargeInstant(requested, fields.nextChargeAt);
    return { at, desiredDate: desiredDateFor(plan.interval, at) };
  }

  /** A charge date may be today (then it is due at once) but not earlier. */
  private parseChargeInstant(value: string, field: string): number {
    const at = parseInstant(value);
    const today = startOfUtcDay(this.deps.clock.now());
    if (at < today) throw fieldError(field, 'date', `must not be before today (${utcDateOf(today)})`);
    return at;
  }

  private async insertActive(
    repos: R,
    input: { accountId: string; plan: BillingPlan; subscription: ChargeableSubscription; reference: string | null; firstChargeAt: FirstCharge },
  ): Promise<BillingAgreement> {
    const now = this.deps.clock.nowIso();
    const agreement: BillingAgreement = {
      id: newId(),
      accountId: input.accountId,
      billingPlanId: input.plan.id,
      subscriptionId: input.subscription.id,
      // Made by the API, not by a CIT session.
      sessionId: null,
      customerId: input.subscription.customerId,
      state: 'ACTIVE',
      nextChargeAt: new Date(input.firstChargeAt.at).toISOString(),
      lastChargeAt: null,
      desiredDate: input.firstChargeAt.desiredDate,
      reference: input.reference,
      stateChangedAt: now,
      createdAt: now,
      updatedAt: now,
    };
    await repos.billingAgreements.insert(agreement);
    await repos.events.append(input.accountId, AGREEMENT_EVENTS.ACTIVE, billingAgreementWire(agreement));
    await enqueueChargeDue(repos.jobs, agreement);
    return agreement;
  }

  /** One state change by id, retried a few times when a concurrent change won the compare-and-set. */
  private async transition(
    accountId: string,
    id: string,
    action: AgreementAction,
    changesFor: (current: BillingAgreement) => AgreementChanges,
  ): Promise<BillingAgreement> {
    for (let round = 0; round < 3; round++) {
      const result = await this.deps.transaction(async (repos) => {
        const current = await repos.billingAgreements.findById(accountId, id);
        if (!current) throw notFound('billing agreement');
        return this.applyTransition(repos, current, action, changesFor(current));
      });
      if (result) return result;
    }
    throw new AppError('CONFLICT', 'The billing agreement was changed concurrently; retry the request.');
  }

  /**
   * Through the transition table, as a compare-and-set on the state read, with its event and
   * (when it becomes ACTIVE) the job of its next charge, on the caller's commit. Null when a
   * concurrent change won.
   */
  private async applyTransition(repos: R, current: BillingAgreement, action: AgreementAction, changes: AgreementChanges): Promise<BillingAgreement | null> {
    const next = nextAgreementState(current.state, action);
    if (!next) throw new AppError('CONFLICT', `The billing agreement is ${current.state}; it cannot ${action}.`);
    if (next === current.state) return current;
    const now = this.deps.clock.nowIso();
    const updated = await repos.billingAgreements.updateIf(
      current.accountId,
      current.id,
      { state: current.state },
      { ...changes, state: next, stateChangedAt: now, updatedAt: now },
    );
    if (!updated) return null;
    // A PENDING agreement that never became active stops silently: nobody was told it was active.
    if (next === 'ACTIVE' || current.state === 'ACTIVE') {
      await repos.events.append(current.accountId, next === 'ACTIVE' ? AGREEMENT_EVENTS.ACTIVE : AGREEMENT_EVENTS.STOPPED, billingAgreementWire(updated));
    }
    await enqueueChargeDue(repos.jobs, updated);
    return updated;
  }
}
