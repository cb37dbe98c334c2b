/**
 * CIT sessions: create (POST /cit), read with expiry on the service clock, and pay — the one
 * path shared by the hosted payment window and the sandbox control. Paying stores the payment
 * method, authorizes through the shared pipeline (initiator CIT) and, in the pipeline's apply
 * commit (`onPaymentResult`), completes the session, creates the requested subscription and
 * links it to the transaction, so that the callback that follows sees all of it.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Instrument } from '../../connectors/acquirer.js';
import { JOB_LEASE_MS, type JobDefinition, type JobQueue } from '../../jobs/job.js';
import { AppError, EXISTING, fieldError, FieldErrorCollector, type FieldRule } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { parseInstant } from '../../shared/time.js';
import type { CardInput } from '../payment-methods/card.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository.js';
import type { WalletType } from '../payment-methods/payment-methods.service.js';
import { isOnApprovedDomain, type PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import type { PaymentRequest, PipelineRepos, ResultContext } from '../transactions/authorization.service.js';
import type { InstantCapture, Transaction } from '../transactions/transaction.js';
import { isSessionFinal, nextSessionState, type Session, type SessionEvent, type SubscriptionRequest } from './session.js';
import type { SessionChanges, SessionsRepository } from './sessions.repository.js';

export const SESSION_EXPIRE_JOB = 'session.expire';

/** Repositories a session change needs in one commit (at runtime: the store's full set). */
export interface SessionRepos extends PipelineRepos {
  sessions: SessionsRepository;
  subscriptions: SubscriptionsRepository;
  paymentMethods: Pick<PaymentMethodsRepository, 'markDeleted'>;
  jobs: JobQueue;
}

/**
 * Hook for subscription billing (`subscription.billingAgreement` of POST /cit). Every call runs
 * inside the session's own commit. `sessionCreated` validates the plan (throw a 422 on
 * `subscription.billingAgreement.*`) and may create a PENDING agreement; `sessionCompleted` makes
 * it ACTIVE on the new subscription; `sessionExpired` ends a PENDING one.
 */
export interface BillingAgreementHook {
  sessionCreated(repos: SessionRepos, session: Session): Promise<void>;
  sessionCompleted(repos: SessionRepos, session: Session, subscription: Subscription): Promise<void>;
  sessionExpired?(repos: SessionRepos, session: Session): Promise<void>;
}

export interface SessionsDeps {
  sessions: SessionsRepository;
  transaction<T>(fn: (repos: SessionRepos) => Promise<T>): Promise<T>;
  pointsOfSale: { get(accountId: string, id: string): Promise<PointOfSale> };
  paymentMethods: {
    validateCard(card: CardInput, prefix: string, errors: FieldErrorCollector): void;
    storeCard(accountId: string, input: { customerId: string | null; card: CardInput }, prefix?: string): Promise<PaymentMethod>;
    storeWallet(accountId: string, input: { customerId: string | null; type: WalletType }): Promise<PaymentMethod>;
    cardInstrument(card: CardInput): Instrument;
  };
  subscriptions: Pick<SubscriptionsService, 'createActive'>;
  /** Callback URL rule (approved domain; no private address outside sandbox): 422 on `field`. */
  urlPolicy: { check(field: string, url: string, domain: string): Promise<void> };
  authorization: { authorize(request: PaymentRequest<SessionRepos>): Promise<Transaction> };
  clock: Clock;
}

export interface CreateSessionInput {
  pointOfSaleId: string;
  amount: number;
  currency: string;
  reference?: string | null | undefined;
  scaMode?: string | null | undefined;
  timeout?: number | null | undefined;
  instantCapture?: string | null | undefined;
  exemptions?: string[] | null | undefined;
  textOnStatement?: string | null | undefined;
  attributes?: Record<string, string> | null | undefined;
  customerId?: string | null | undefined;
  maxAttempts?: number | null | undefined;
  notificationUrl?: string | null | undefined;
  successUrl?: string | null | undefined;
  failureUrl?: string | null | undefined;
  reportFailure?: boolean | null | undefined;
  subscription?:
    | {
        type: 'SCHEDULED' | 'UNSCHEDULED';
        reference?: string | null | undefined;
        expiryDate?: string | null | undefined;
        interval?: { period: 'DAY' | 'WEEK' | 'MONTH' | 'YEAR'; frequency: number } | null | undefined;
        billingAgreement?: { billingPlanId: string; reference?: string | null | undefined; nextChargeAt?: string | null | undefined } | null | undefined;
      }
    | null
    | undefined;
}

/** What the customer pays with: a card just typed in, or a wallet. */
export type PaymentInput = { card: CardInput } | { wallet: WalletType };

export interface PayResult {
  session: Session;
  transaction: Transaction | null;
}

export class SessionsService {
  private billing: BillingAgreementHook | null = null;

  constructor(private readonly deps: SessionsDeps) {}

  /** The billing module plugs in here (composition, services.ts). */
  useBillingAgreements(hook: BillingAgreementHook): void {
    this.billing = hook;
  }

  /**
   * POST /cit. `options.inCommit` runs inside the commit that inserts the session (a payment link
   * is written together with its session).
   */
  async create(
    accountId: string,
    input: CreateSessionInput,
    options: { inCommit?: (repos: SessionRepos, session: Session) => Promise<void> } = {},
  ): Promise<Session> {
    const errors = new FieldErrorCollector();
    const pointOfSale = await this.deps.pointsOfSale.get(accountId, input.pointOfSaleId).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    if (!pointOfSale) errors.add('pointOfSaleId', EXISTING, 'no point of sale with this id exists');
    else if (pointOfSale.type !== 'ONLINE') errors.add('pointOfSaleId', 'in:ONLINE', 'must be an ONLINE point of sale');
    errors.throwIfAny();
    const pos = pointOfSale!;
    const hosted = pos.hostedConfiguration;

    const urls = {
      notificationUrl: input.notificationUrl ?? hosted.notificationUrl,
      successUrl: input.successUrl ?? hosted.successUrl,
      failureUrl: input.failureUrl ?? hosted.failureUrl,
    };
    // Redirects only need the approved domain; the callback URL also passes the delivery policy.
    for (const field of ['successUrl', 'failureUrl'] as const) {
      const url = urls[field];
      if (url && !isOnApprovedDomain(url, pos.domain)) errors.add(field, 'url', `must be on the approved domain ${pos.domain} (or a sub-domain of it)`);
    }
    if (urls.notificationUrl) {
      await this.deps.urlPolicy.check('notificationUrl', urls.notificationUrl, pos.domain).catch((err: unknown) => {
        if (!(err instanceof AppError) || !err.errors) throw err;
        for (const [field, messages] of Object.entries(err.errors))
          for (const m of messages) errors.add(field, m.slice(1, m.indexOf(']')) as FieldRule, m.slice(m.indexOf(']') + 3));
      });
    }
    const customerId = input.customerId ?? null;
    const subscription = this.subscriptionRequest(input, errors);
    if (input.amount === 0 && !customerId && !subscription) {
      errors.add('customerId', 'required', 'is required when amount is 0 (the session only stores the card for a customer or a subscription)');
    }
    errors.throwIfAny();

    const now = this.deps.clock.now();
    const timeoutMinutes = input.timeout ?? hosted.timeout ?? 30;
    const session: Session = {
      id: newId(),
      accountId,
      pointOfSaleId: pos.id,
      clientKey: `pk_${randomBytes(24).toString('base64url')}`,
      state: 'PENDING',
      amount: input.amount,
      currency: input.currency,
      reference: input.reference ?? null,
      scaMode: input.scaMode ?? hosted.scaMode,
      timeoutMinutes,
      instantCapture: input.instantCapture ?? hosted.instantCapture,
      exemptions: input.exemptions ?? hosted.exemptions,
      textOnStatement: input.textOnStatement ?? null,
      attributes: input.attributes ?? null,
      customerId,
      maxAttempts: input.maxAttempts ?? hosted.maxAttempts,
      attempts: 0,
      notificationUrl: urls.notificationUrl ?? null,
      successUrl: urls.successUrl ?? null,
      failureUrl: urls.failureUrl ?? null,
      reportFailure: input.reportFailure ?? hosted.reportFailure,
      subscriptionRequest: subscription,
      transactionId: null,
      subscriptionId: null,
      paymentMethodId: null,
      errorCode: null,
      expiresAt: new Date(now + timeoutMinutes * 60_000).toISOString(),
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
      finalizedAt: null,
    };
    await this.deps.transaction(async (repos) => {
      await repos.sessions.insert(session);
      // Expiry follows the service clock: the job becomes due when the (sandbox) clock passes expiresAt.
      await repos.jobs.enqueue({
        kind: SESSION_EXPIRE_JOB,
        payload: { sessionId: session.id },
        runAt: Date.parse(session.expiresAt),
        dedupeKey: `${SESSION_EXPIRE_JOB}:${session.id}`,
      });
      if (subscription?.billingAgreement) {
        if (!this.billing) throw fieldError('subscription.billingAgreement', 'in:none', 'subscription billing is not available on this service');
        await this.billing.sessionCreated(repos, session);
      }
      await options.inCommit?.(repos, session);
    });
    return session;
  }

  /**
   * Ends a PENDING session for the merchant inside the caller's commit (a cancelled payment link):
   * PENDING → EXPIRED with errorCode MANUAL_ABORTED, so the payment window takes no payment.
   * 409 while a payment is in flight or once the session has ended.
   */
  async cancelInCommit(repos: SessionRepos, accountId: string, sessionId: string): Promise<Session> {
    const session = await repos.sessions.findById(accountId, sessionId);
    if (!session) throw new AppError('NOT_FOUND', 'The session does not exist.');
    const next = nextSessionState(session.state, 'cancel');
    if (!next) {
      throw new AppError(
        'CONFLICT',
        session.state === 'PROCESSING'
          ? 'A payment of this session is in progress; it cannot be cancelled now.'
          : `The session is ${session.state}; it cannot be cancelled.`,
      );
    }
    const now = this.deps.clock.nowIso();
    const changes = { state: next, errorCode: 'MANUAL_ABORTED', finalizedAt: now, updatedAt: now };
    if (!(await repos.sessions.updateIfState(session.id, session.state, changes))) {
      throw new AppError('CONFLICT', 'The session changed meanwhile (a payment started); retry the request.');
    }
    await this.billing?.sessionExpired?.(repos, session);
    return { ...session, ...changes };
  }

  /** GET /sessions/{id}: 404 for another merchant's; expired on read when its time has passed. */
  async get(accountId: string, id: string): Promise<Session> {
    const session = await this.deps.sessions.findById(accountId, id);
    if (!session) throw new AppError('NOT_FOUND', 'The session does not exist.');
    return this.expireIfDue(session);
  }

  /** The payment window's view of a session (by its public client key), expired on read. */
  async byClientKey(clientKey: string): Promise<Session | null> {
    const session = await this.deps.sessions.findByClientKey(clientKey);
    return session ? this.expireIfDue(session) : null;
  }

  /** Sandbox control: any account's session. */
  async byIdAnyAccount(id: string): Promise<Session | null> {
    const session = await this.deps.sessions.findByIdAnyAccount(id);
    return session ? this.expireIfDue(session) : null;
  }

  pointOfSaleOf(session: Session): Promise<PointOfSale> {
    return this.deps.pointsOfSale.get(session.accountId, session.pointOfSaleId);
  }

  /** Validates what the customer gave; 422 with `card.*` fields. */
  validatePayment(input: PaymentInput): void {
    if ('card' in input) {
      const errors = new FieldErrorCollector();
      this.deps.paymentMethods.validateCard(input.card, 'card', errors);
      errors.throwIfAny();
    }
  }

  /**
   * The customer pays. One attempt: PENDING → PROCESSING (conditional, so two submits cannot
   * both start), store the payment method, authorize synchronously through the pipeline. The
   * outcome is applied to the session by `onPaymentResult` inside the pipeline's commit; an
   * acquirer timeout leaves the session PROCESSING until the pipeline's retry answers.
   */
  async pay(session: Session, input: PaymentInput, clientIp: string | null): Promise<PayResult> {
    this.validatePayment(input);
    const current = await this.expireIfDue(session);
    if (current.state !== 'PENDING') {
      throw new AppError(
        'CONFLICT',
        current.state === 'PROCESSING' ? 'A payment of this session is in progress.' : `The session is ${current.state}; it takes no more payments.`,
      );
    }
    const started = await this.change(current, 'start', { attempts: current.attempts + 1, errorCode: null });
    if (!started) throw new AppError('CONFLICT', 'The session changed meanwhile (paid or expired).');
    const attempt: Session = { ...current, state: 'PROCESSING', attempts: current.attempts + 1 };

    let created = false;
    try {
      const pointOfSale = await this.pointOfSaleOf(attempt);
      const paymentMethod =
        'card' in input
          ? await this.deps.paymentMethods.storeCard(attempt.accountId, { customerId: attempt.customerId, card: input.card })
          : await this.deps.paymentMethods.storeWallet(attempt.accountId, { customerId: attempt.customerId, type: input.wallet });
      const transaction = await this.deps.authorization.authorize({
        accountId: attempt.accountId,
        pointOfSaleId: attempt.pointOfSaleId,
        flow: 'CIT',
        type: 'PAYMENT',
        operation: 'AUTHORIZATION',
        amount: attempt.amount,
        currency: attempt.currency,
        paymentMethod,
        instrument: 'card' in input ? this.deps.paymentMethods.cardInstrument(input.card) : undefined,
        reference: attempt.reference,
        textOnStatement: attempt.textOnStatement,
        notificationUrl: attempt.notificationUrl,
        customerId: attempt.customerId,
        attributes: attempt.attributes,
        clientIp,
        instantCapture: attempt.instantCapture as InstantCapture,
        scaMode: attempt.scaMode,
        exemptions: attempt.exemptions,
        descriptor: pointOfSale.descriptor,
        sessionId: attempt.id,
        inCommit: async (repos, tx) => {
          created = true;
          await repos.sessions.updateIfState(attempt.id, 'PROCESSING', { transactionId: tx.id, updatedAt: this.deps.clock.nowIso() });
        },
      });
      return { session: (await this.deps.sessions.findById(attempt.accountId, attempt.id))!, transaction };
    } catch (err) {
      // Nothing reached the acquirer: give the attempt back so that the customer can try again.
      if (!created)
        await this.deps.sessions.updateIfState(attempt.id, 'PROCESSING', { state: 'PENDING', attempts: current.attempts, updatedAt: this.deps.clock.nowIso() });
      throw err;
    }
  }

  /**
   * Pipeline result listener (registered with `authorization.onResult`): runs inside the commit
   * that makes a CIT transaction final, before its callback is enqueued.
   */
  /** Returns the transaction when it changed it (linked the new subscription), for what the commit writes after. */
  async onPaymentResult({ repos, transaction, becameFinal }: ResultContext<SessionRepos>): Promise<Transaction | void> {
    if (!becameFinal || transaction.flow !== 'CIT' || !transaction.sessionId) return;
    const session = await repos.sessions.findById(transaction.accountId, transaction.sessionId);
    if (!session || session.state !== 'PROCESSING') return;
    const now = this.deps.clock.nowIso();

    if (transaction.state === 'SUCCESS') {
      let subscription: Subscription | null = null;
      const request = session.subscriptionRequest;
      if (request && transaction.paymentMethodId) {
        subscription = await this.deps.subscriptions.createActive(
          repos,
          {
            accountId: session.accountId,
            pointOfSaleId: session.pointOfSaleId,
            paymentMethodId: transaction.paymentMethodId,
            sessionId: session.id,
            customerId: session.customerId,
            currency: session.currency,
            reference: request.reference,
            type: request.type,
            expiryDate: request.expiryDate,
            interval: request.interval,
          },
          newId(),
        );
        await repos.transactions.applyResult(transaction.id, [transaction.state], { subscriptionId: subscription.id, updatedAt: now });
      }
      await repos.sessions.updateIfState(session.id, 'PROCESSING', {
        state: nextSessionState('PROCESSING', 'approve')!,
        transactionId: transaction.id,
        subscriptionId: subscription?.id ?? null,
        paymentMethodId: transaction.paymentMethodId,
        errorCode: null,
        finalizedAt: now,
        updatedAt: now,
      });
      if (subscription && request?.billingAgreement && this.billing) {
        await this.billing.sessionCompleted(repos, { ...session, state: 'COMPLETED', subscriptionId: subscription.id }, subscription);
      }
      return subscription ? { ...transaction, subscriptionId: subscription.id, updatedAt: now } : undefined;
    }

    // Declined: the card is not kept for the customer; the customer may try again while attempts and time are left.
    if (transaction.paymentMethodId) await repos.paymentMethods.markDeleted(transaction.accountId, transaction.paymentMethodId, now);
    const outOfTime = Date.parse(session.expiresAt) <= this.deps.clock.now();
    const event: SessionEvent = session.attempts >= session.maxAttempts || outOfTime ? 'exhaust' : 'decline';
    const state = nextSessionState('PROCESSING', event)!;
    await repos.sessions.updateIfState(session.id, 'PROCESSING', {
      state,
      transactionId: transaction.id,
      errorCode: transaction.errorCode ?? 'DECLINED_BY_ISSUER_OR_SCHEME',
      ...(isSessionFinal(state) ? { finalizedAt: now } : {}),
      updatedAt: now,
    });
    if (isSessionFinal(state)) await this.billing?.sessionExpired?.(repos, session);
  }

  /** `session.expire`: due at expiresAt on the service clock. A payment in flight is left alone. */
  expireJob(): JobDefinition<{ sessionId: string }> {
    return {
      kind: SESSION_EXPIRE_JOB,
      maxAttempts: 10,
      leaseMs: JOB_LEASE_MS,
      backoff: (failures) => Math.min(60_000, 1000 * 2 ** failures),
      handle: async ({ sessionId }) => {
        const session = await this.deps.sessions.findByIdAnyAccount(sessionId);
        if (session) await this.expireIfDue(session);
      },
    };
  }

  private async expireIfDue(session: Session): Promise<Session> {
    if (session.state !== 'PENDING' || Date.parse(session.expiresAt) > this.deps.clock.now()) return session;
    const now = this.deps.clock.nowIso();
    await this.deps.transaction(async (repos) => {
      const changed = await repos.sessions.updateIfState(session.id, 'PENDING', {
        state: 'EXPIRED',
        errorCode: session.errorCode ?? 'EXPIRED',
        finalizedAt: now,
        updatedAt: now,
      });
      if (changed) await this.billing?.sessionExpired?.(repos, session);
    });
    return (await this.deps.sessions.findByIdAnyAccount(session.id)) ?? session;
  }

  private async change(session: Session, event: SessionEvent, changes: Omit<SessionChanges, 'updatedAt'>): Promise<boolean> {
    const next = nextSessionState(session.state, event);
    if (!next) return false;
    return this.deps.sessions.updateIfState(session.id, session.state, { ...changes, state: next, updatedAt: this.deps.clock.nowIso() });
  }

  private subscriptionRequest(input: CreateSessionInput, errors: FieldErrorCollector): SubscriptionRequest | null {
    const s = input.subscription;
    if (!s) return null;
    if (s.type === 'SCHEDULED' && !s.interval) errors.add('subscription.interval', 'required', 'is required for a SCHEDULED subscription');
    let billingAgreement: SubscriptionRequest['billingAgreement'] = null;
    if (s.billingAgreement) {
      let nextChargeAt: string | null = null;
      if (s.billingAgreement.nextChargeAt) {
        try {
          nextChargeAt = new Date(parseInstant(s.billingAgreement.nextChargeAt)).toISOString();
        } catch {
          errors.add('subscription.billingAgreement.nextChargeAt', 'date', 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time');
        }
      }
      billingAgreement = { billingPlanId: s.billingAgreement.billingPlanId, reference: s.billingAgreement.reference ?? null, nextChargeAt };
    }
    return {
      type: s.type,
      reference: s.reference ?? null,
      expiryDate: s.expiryDate ?? null,
      // An interval belongs to SCHEDULED subscriptions only.
      interval: s.type === 'SCHEDULED' ? (s.interval ?? null) : null,
      billingAgreement,
    };
  }
}
