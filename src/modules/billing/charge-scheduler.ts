/**
 * The billing scheduler on the service clock. Three steps, each one database commit:
 *
 * 1. chargeDue — an ACTIVE agreement's period began: insert its charge (the unique key
 *    (agreement, period start) lets exactly one worker win), move nextChargeAt one interval,
 *    and schedule the next period — in the commit that creates attempt 1's MIT transaction.
 *    Catch-up after downtime or a clock jump follows: the next period's job is due at once, so
 *    each missed period is charged, in order.
 * 2. attempt — a retry fell due: compare-and-set attempts n-1 → n in the commit that creates
 *    attempt n's MIT transaction.
 * 3. attemptFinished — the attempt's transaction reached a final state (a listener of the payment
 *    pipeline, inside that commit): SUCCESS, a retry spread before the deadline, or FAILED.
 *
 * The MIT job asks the acquirer outside any commit; a lost race rolls back the attempt's MIT
 * transaction together with the charge writes, so a loser leaves nothing behind.
 */
import type { Clock } from '../../clock.js';
import { defineJob } from '../../jobs/catalogue.js';
import type { JobDefinition, JobQueue } from '../../jobs/job.js';
import { AppError } from '../../shared/errors.js';
import type { BusinessEventName, BusinessEvents, EventsLog } from '../../shared/events-log.js';
import { newId } from '../../shared/ids.js';
import type { TransactionState } from '../transactions/transaction.js';
import { AGREEMENT_EVENTS, type BillingAgreement, nextAgreementState } from './agreement.js';
import type { BillingAgreementsRepository } from './agreements.repository.js';
import { billingAgreementWire } from './agreements.schemas.js';
import { addInterval, nextAttemptAt } from './billing-schedule.js';
import type { BillingRepos, ChargeAttemptInput, ChargePayments, RunInTransaction } from './billing.ports.js';
import { type BillingCharge, CHARGE_EVENTS, type ChargeEvent, nextChargeState } from './charge.js';
import { CHARGE_ATTEMPT_JOB, CHARGE_DUE_JOB, type ChargeAttemptPayload, type ChargeDuePayload, enqueueChargeAttempt, enqueueChargeDue } from './charge-jobs.js';
import type { BillingChargesRepository, ChargeChanges, ChargeExpectation } from './charges.repository.js';
import { billingChargeWire } from './charges.schemas.js';
import type { BillingPlansRepository } from './plans.repository.js';

export interface ChargeSchedulerDeps<R extends BillingRepos> {
  /** Reads outside a commit. */
  plans: BillingPlansRepository;
  agreements: BillingAgreementsRepository;
  charges: BillingChargesRepository;
  transaction: RunInTransaction<R>;
  payments: ChargePayments<R>;
  clock: Clock;
  /** A line per charge created, attempted, retrying and final, after the commit that decided it. */
  events?: EventsLog;
}

/** The attempt's transaction as the payment pipeline reports it. */
export interface FinishedAttempt {
  id: string;
  accountId: string;
  billingAgreementChargeId: string | null;
  state: TransactionState;
}

/** The charge a state change names (the state it moves from is the expectation's). */
type ChargeRef = Pick<BillingCharge, 'accountId' | 'id'>;

/** A compare-and-set on the charge as it was read: its state and its attempts. */
const asRead = (charge: BillingCharge): ChargeExpectation => ({ state: charge.state, attempts: charge.attempts });

/** Another worker made this charge or attempt first (or the agreement moved on): roll back. */
class LostRace extends Error {}

const iso = (ms: number): string => new Date(ms).toISOString();
const unchargeable = (err: unknown): boolean => err instanceof AppError && err.code === 'VALIDATION_ERROR';

export class ChargeScheduler<R extends BillingRepos> {
  constructor(private readonly deps: ChargeSchedulerDeps<R>) {}

  /**
   * Makes the charge of the period starting at `periodStart`, unless it exists or the agreement
   * moved on (stopped, resumed to another date, period already charged). Returns the new charge.
   * `settle`: ends the job that asked, in the charge's commit (one commit fewer per charge).
   */
  async chargeDue(payload: ChargeDuePayload, settle?: (jobs: JobQueue) => Promise<void>): Promise<BillingCharge | null> {
    const { accountId, agreementId, periodStart } = payload;
    const found = await this.deps.agreements.findWithPlan(accountId, agreementId);
    const now = this.deps.clock.now();
    if (!found) return null;
    const { agreement, plan } = found;
    if (agreement.state !== 'ACTIVE' || agreement.nextChargeAt !== periodStart || Date.parse(periodStart) > now) return null;
    if (!plan) throw new Error(`billing plan ${agreement.billingPlanId} of agreement ${agreement.id} is missing`);
    const deadline = addInterval(Date.parse(periodStart), plan.interval, agreement.desiredDate);
    const chargeId = newId();
    let made: BillingCharge | null = null;
    try {
      const transactionId = await this.submit(
        agreement,
        { billingAgreementChargeId: chargeId, amount: plan.amount, currency: plan.currency, instantCapture: plan.instantCapture },
        async (repos, transactionId) => {
          const charge: BillingCharge = {
            id: chargeId,
            accountId,
            billingAgreementId: agreement.id,
            billingPlanId: plan.id,
            periodStart,
            state: 'PROCESSING',
            amount: plan.amount,
            currency: plan.currency,
            maxAttempts: plan.maxAttempts,
            attempts: 1,
            transactionId,
            deadlineAt: iso(deadline),
            nextAttemptAt: null,
            createdAt: iso(now),
            updatedAt: iso(now),
            finalizedAt: null,
          };
          if (!(await repos.billingCharges.insertIfAbsent(charge))) throw new LostRace();
          const moved = await repos.billingAgreements.updateIf(
            accountId,
            agreement.id,
            { state: 'ACTIVE', nextChargeAt: periodStart },
            {
              nextChargeAt: iso(deadline),
              updatedAt: iso(now),
            },
          );
          if (!moved) throw new LostRace();
          await repos.events.append(accountId, CHARGE_EVENTS.CREATED, billingChargeWire(charge, [transactionId]));
          await enqueueChargeDue(repos.jobs, moved);
          await settle?.(repos.jobs);
          made = charge;
        },
      );
      this.deps.events?.logEvent('billing.charge.created', {
        chargeId,
        accountId,
        billingAgreementId: agreement.id,
        transactionId,
        amount: plan.amount,
        currency: plan.currency,
        attempt: 1,
      });
    } catch (err) {
      if (err instanceof LostRace) return null;
      if (!unchargeable(err)) throw err;
      // The subscription can no longer be charged (disabled, invalid, expired): the agreement stops.
      await this.deps.transaction((repos) => this.stopUnchargeable(repos, agreement));
      return null;
    }
    return made;
  }

  /** A retry fell due: makes attempt `attempt` unless it was made, or the charge ended. */
  async attempt(payload: ChargeAttemptPayload): Promise<BillingCharge | null> {
    const { accountId, chargeId, attempt } = payload;
    const charge = await this.deps.charges.findById(accountId, chargeId);
    const now = this.deps.clock.now();
    if (
      !charge ||
      charge.state !== 'PROCESSING' ||
      charge.attempts !== attempt - 1 ||
      charge.nextAttemptAt === null ||
      Date.parse(charge.nextAttemptAt) > now
    ) {
      return null;
    }
    const agreement = await this.deps.agreements.findById(accountId, charge.billingAgreementId);
    // A stopped agreement makes no automatic charge, retries included; a past deadline ends the charge.
    if (!agreement || agreement.state !== 'ACTIVE' || now >= Date.parse(charge.deadlineAt)) return this.failNow(charge);
    const plan = await this.deps.plans.findById(accountId, charge.billingPlanId);
    let made: BillingCharge | null = null;
    try {
      const transactionId = await this.submit(
        agreement,
        { billingAgreementChargeId: charge.id, amount: charge.amount, currency: charge.currency, instantCapture: plan?.instantCapture ?? 'OFF' },
        async (repos, transactionId) => {
          made = await repos.billingCharges.updateIf(
            accountId,
            charge.id,
            { state: 'PROCESSING', attempts: charge.attempts },
            {
              attempts: attempt,
              transactionId,
              nextAttemptAt: null,
              updatedAt: iso(now),
            },
          );
          if (!made) throw new LostRace();
        },
      );
      this.deps.events?.logEvent('billing.charge.attempt', { chargeId: charge.id, accountId, transactionId, attempt });
    } catch (err) {
      if (err instanceof LostRace) return null;
      if (!unchargeable(err)) throw err;
      return this.failNow(charge);
    }
    return made;
  }

  /**
   * The attempt's transaction is final: called on the repositories of the commit that made it
   * final. Stale reports (an earlier attempt, a finished charge) change nothing.
   */
  async attemptFinished(repos: R, tx: FinishedAttempt): Promise<void> {
    if (!tx.billingAgreementChargeId || (tx.state !== 'SUCCESS' && tx.state !== 'FAILED')) return;
    const ref = { accountId: tx.accountId, id: tx.billingAgreementChargeId };
    if (tx.state === 'SUCCESS') {
      // Nothing read: the update applies only while the charge waits for this very attempt.
      const done = await this.finish(repos, ref, { state: 'PROCESSING', answerOf: tx.id }, 'succeed');
      if (!done) return;
      this.afterCommit(repos, 'billing.charge.final', finalFields(done, tx.id));
      await repos.billingAgreements.recordCharge(done.accountId, done.billingAgreementId, done.finalizedAt ?? done.updatedAt);
      return;
    }
    const charge = await repos.billingCharges.findById(ref.accountId, ref.id);
    if (!charge || charge.state !== 'PROCESSING' || charge.transactionId !== tx.id || charge.nextAttemptAt !== null) return;
    const now = this.deps.clock.now();
    const retryAt = nextAttemptAt({
      attemptsMade: charge.attempts,
      maxAttempts: charge.maxAttempts,
      periodStartMs: Date.parse(charge.periodStart),
      deadlineMs: Date.parse(charge.deadlineAt),
      nowMs: now,
    });
    if (retryAt === null) {
      const failed = await this.finish(repos, charge, asRead(charge), 'fail');
      if (failed) this.afterCommit(repos, 'billing.charge.final', finalFields(failed, tx.id));
      return;
    }
    const waiting = await this.change(repos, charge, asRead(charge), 'retry', { nextAttemptAt: iso(retryAt), updatedAt: iso(now) });
    if (!waiting) return;
    await enqueueChargeAttempt(repos.jobs, waiting);
    this.afterCommit(repos, 'billing.charge.retrying', {
      chargeId: waiting.id,
      accountId: waiting.accountId,
      transactionId: tx.id,
      attempts: waiting.attempts,
      nextAttemptAt: iso(retryAt),
    });
  }

  jobs(): JobDefinition<never>[] {
    const due = defineJob(CHARGE_DUE_JOB, async (payload, ctx) => void (await this.chargeDue(payload, (jobs) => ctx.settleIn(jobs, { done: true }))));
    const attempt = defineJob(CHARGE_ATTEMPT_JOB, async (payload) => void (await this.attempt(payload)));
    return [due, attempt] as JobDefinition<never>[];
  }

  private submit(
    agreement: BillingAgreement,
    attempt: Omit<ChargeAttemptInput, 'accountId' | 'subscriptionId' | 'reference'>,
    inCommit: (repos: R, transactionId: string) => Promise<void>,
  ): Promise<string> {
    if (!agreement.subscriptionId) throw new AppError('VALIDATION_ERROR', `billing agreement ${agreement.id} has no subscription`);
    return this.deps.payments.submitAttempt(
      { ...attempt, accountId: agreement.accountId, subscriptionId: agreement.subscriptionId, reference: agreement.reference },
      inCommit,
    );
  }

  private async failNow(charge: BillingCharge): Promise<BillingCharge | null> {
    const failed = await this.deps.transaction((repos) => this.finish(repos, charge, asRead(charge), 'fail'));
    if (failed) this.deps.events?.logEvent('billing.charge.final', finalFields(failed, failed.transactionId));
    return failed;
  }

  /** A line decided in the payment engine's commit, written once that commit is done. */
  private afterCommit<N extends BusinessEventName>(repos: R, event: N, fields: BusinessEvents[N]): void {
    const { events } = this.deps;
    if (events) repos.afterCommit(() => events.logEvent(event, fields));
  }

  /** SUCCESS or FAILED through the transition table, with its event; `expected`: what the compare-and-set checks. */
  private async finish(repos: R, charge: ChargeRef, expected: ChargeExpectation, event: 'succeed' | 'fail'): Promise<BillingCharge | null> {
    const now = this.deps.clock.nowIso();
    const done = await this.change(repos, charge, expected, event, { nextAttemptAt: null, finalizedAt: now, updatedAt: now });
    if (done) {
      // A first attempt's transaction is the charge's only one: nothing to read.
      const ids =
        done.attempts === 1 && done.transactionId
          ? [done.transactionId]
          : ((await repos.billingCharges.transactionIdsOf(done.accountId, [done.id])).get(done.id) ?? []);
      await repos.events.append(done.accountId, event === 'succeed' ? CHARGE_EVENTS.SUCCESS : CHARGE_EVENTS.FAILED, billingChargeWire(done, ids));
    }
    return done;
  }

  /** One charge state change through the transition table from `expected.state`, as a compare-and-set on `expected`. */
  private async change(repos: R, charge: ChargeRef, expected: ChargeExpectation, event: ChargeEvent, changes: ChargeChanges): Promise<BillingCharge | null> {
    const next = nextChargeState(expected.state, event);
    if (!next) return null;
    return repos.billingCharges.updateIf(charge.accountId, charge.id, expected, { ...changes, state: next });
  }

  private async stopUnchargeable(repos: R, agreement: BillingAgreement): Promise<void> {
    const next = nextAgreementState(agreement.state, 'stop');
    if (!next) return;
    const now = this.deps.clock.nowIso();
    const stopped = await repos.billingAgreements.updateIf(
      agreement.accountId,
      agreement.id,
      { state: agreement.state, nextChargeAt: agreement.nextChargeAt },
      {
        state: next,
        nextChargeAt: null,
        stateChangedAt: now,
        updatedAt: now,
      },
    );
    if (stopped) await repos.events.append(agreement.accountId, AGREEMENT_EVENTS.STOPPED, billingAgreementWire(stopped));
  }
}

function finalFields(charge: BillingCharge, transactionId: string | null): BusinessEvents['billing.charge.final'] {
  return { chargeId: charge.id, accountId: charge.accountId, transactionId, state: charge.state, attempts: charge.attempts };
}
