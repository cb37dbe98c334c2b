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
import { defineJob, newJob } from '../../jobs/catalogue.js';
import { type JobDefinition, type JobQueue, RetryLater } from '../../jobs/job.js';
import { AppError, EXISTING, FieldErrorCollector, type FieldRule } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { parseInstant } from '../../shared/time.js';
import type { CardInput } from '../payment-methods/card.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository.js';
import type { WalletType } from '../payment-methods/payment-methods.service.js';
import { approvedDomainRule, isOnApprovedDomain, type PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import type { PaymentRequest, PipelineRepos } from '../transactions/payment-engine.js';
import type { InstantCapture, Transaction } from '../transactions/transaction.js';
import { transactionWire } from '../transactions/transactions.schemas.js';
import { MAX_AMOUNT } from '../../shared/money.js';
import { isSessionFinal, nextSessionState, type OrderLine, type Session, type SessionEvent, type SubscriptionRequest } from './session.js';
import type { ThreeDSDecision } from '../three-d-secure/decision.js';
import type { SessionChanges, SessionsRepository } from './sessions.repository.js';
import { sessionWire } from './sessions.schemas.js';

export const SESSION_EXPIRE_JOB = 'session.expire';

/** The event name of a session's EXPIRED report on its last failed attempt (one per transaction, beside its FAILED callback). */
export const SESSION_EXPIRED_EVENT = 'SESSION_EXPIRED';

/**
 * Outbound calls of a session (implemented in services.ts with the callbacks' HTTP sender and
 * delivery): both carry the point of sale's Authorization value.
 */
export interface SessionOutbound {
  /** POSTs `body` as JSON to `url` (5 s timeout, URL policy at connect); the HTTP status, or null on timeout or error. */
  post(session: Session, url: string, body: unknown, deliveryId: string): Promise<number | null>;
  /**
   * In the commit that expired `session` (reportExpired): the NotificationWebhook of its last failed
   * attempt, with session.state EXPIRED, through the callback delivery (event SESSION_EXPIRED).
   */
  scheduleExpiredCallback(repos: SessionRepos, session: Session, transaction: Transaction): Promise<void>;
}

/** Repositories a session change needs in one commit (at runtime: the store's full set). */
export interface SessionRepos extends PipelineRepos {
  sessions: SessionsRepository;
  subscriptions: SubscriptionsRepository;
  paymentMethods: Pick<PaymentMethodsRepository, 'markDeleted' | 'recordSeries' | 'releaseSeries'>;
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
  /** The billing module's part in a session's life (billing agreements started by a CIT; composition, services.ts). */
  billing: BillingAgreementHook;
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
  /** An existing subscription of the merchant (`subscription.id`), or null. */
  findSubscription(accountId: string, id: string): Promise<Subscription | null>;
  outbound: SessionOutbound;
  /** Callback URL rule (approved domain; no private address outside sandbox): 422 on `field`. */
  urlPolicy: { check(field: string, url: string, domain: string): Promise<void> };
  /** The payment engine. */
  payments: { authorize(request: PaymentRequest<SessionRepos>): Promise<Transaction> };
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
  /** Shown in the payment window (sessions started by a multi-link). */
  orderLines?: OrderLine[] | null | undefined;
  allowedPaymentMethods?: string[] | null | undefined;
  dynamicAmount?: boolean | null | undefined;
  preAuthUrl?: string | null | undefined;
  retryUrl?: string | null | undefined;
  returnUrl?: string | null | undefined;
  reportExpired?: boolean | null | undefined;
  ageVerification?: { minimumAge: number; country: string } | null | undefined;
  /** Accepted and ignored (deprecated in production). */
  processor?: unknown;
  subscription?:
    | {
        id?: string | null | undefined;
        amount?: number | null | undefined;
        type?: 'SCHEDULED' | 'UNSCHEDULED' | null | undefined;
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

/**
 * What else the customer gave with a payment: the amount they entered (dynamicAmount), and the
 * sandbox eID step's date of birth (`YYYY-MM-DD`; null: not verified) for a session with ageVerification.
 */
export interface PaymentExtras {
  amount?: number | null | undefined;
  dateOfBirth?: string | null | undefined;
  /** What the window's 3-D Secure step decided (INTERFACE §13): authorize with its result, or refuse. */
  threeDS?: ThreeDSDecision | undefined;
}

export interface PayResult {
  session: Session;
  transaction: Transaction | null;
}

export class SessionsService {
  private readonly billing: BillingAgreementHook;

  constructor(private readonly deps: SessionsDeps) {
    this.billing = deps.billing;
  }

  /**
   * POST /cit. `options.inCommit` runs inside the commit that inserts the session (a payment link
   * is written together with its session). `options.inheritUrls: false` leaves the redirect and
   * notification URLs the input does not give unset instead of taking the point of sale's (a
   * multi-link's sessions, INTERFACE §11.3).
   */
  async create(
    accountId: string,
    input: CreateSessionInput,
    options: { inCommit?: (repos: SessionRepos, session: Session) => Promise<void>; inheritUrls?: boolean } = {},
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

    const inherited = <T>(value: T): T | null => (options.inheritUrls === false ? null : value);
    const urls = {
      notificationUrl: input.notificationUrl ?? inherited(hosted.notificationUrl),
      successUrl: input.successUrl ?? inherited(hosted.successUrl),
      failureUrl: input.failureUrl ?? inherited(hosted.failureUrl),
      retryUrl: input.retryUrl ?? inherited(hosted.retryUrl),
      returnUrl: input.returnUrl ?? null,
      preAuthUrl: input.preAuthUrl ?? null,
    };
    // Redirects only need the approved domain; the URLs the service calls also pass the delivery policy.
    for (const field of ['successUrl', 'failureUrl', 'retryUrl', 'returnUrl'] as const) {
      const url = urls[field];
      if (url && !isOnApprovedDomain(url, pos.domain)) errors.add(field, 'url', approvedDomainRule(pos.domain));
    }
    for (const field of ['notificationUrl', 'preAuthUrl'] as const) {
      const url = urls[field];
      if (!url) continue;
      await this.deps.urlPolicy.check(field, url, pos.domain).catch((err: unknown) => {
        if (!(err instanceof AppError) || !err.errors) throw err;
        for (const [f, messages] of Object.entries(err.errors))
          for (const m of messages) errors.add(f, m.slice(1, m.indexOf(']')) as FieldRule, m.slice(m.indexOf(']') + 3));
      });
    }
    const reportExpired = input.reportExpired ?? hosted.reportExpired ?? false;
    const existing = await this.existingSubscription(accountId, input, errors);
    const customerId = input.customerId ?? existing?.customerId ?? null;
    const subscription = this.subscriptionRequest(input, existing, errors);
    const dynamicAmount = input.dynamicAmount ?? false;
    if (input.amount === 0 && !customerId && !subscription && !dynamicAmount) {
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
      orderLines: input.orderLines ?? null,
      allowedPaymentMethods: input.allowedPaymentMethods?.length ? [...new Set(input.allowedPaymentMethods)] : null,
      dynamicAmount,
      minimumAge: input.ageVerification?.minimumAge ?? null,
      ageVerificationCountry: input.ageVerification ? input.ageVerification.country : null,
      ageVerified: false,
      preAuthUrl: urls.preAuthUrl,
      retryUrl: urls.retryUrl ?? null,
      returnUrl: urls.returnUrl,
      reportExpired,
      transactionId: null,
      // With subscription.id: the subscription the session updates (INTERFACE §11.2).
      subscriptionId: existing?.id ?? null,
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
      await repos.jobs.enqueue(
        newJob(SESSION_EXPIRE_JOB, { sessionId: session.id }, { runAt: Date.parse(session.expiresAt), dedupeKey: `${SESSION_EXPIRE_JOB}:${session.id}` }),
      );
      if (subscription?.billingAgreement) await this.billing.sessionCreated(repos, session);
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
    await this.billing.sessionExpired?.(repos, session);
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

  /** Validates what the customer gave; 422 with `card.*` fields, `paymentMethodType` (not offered) or `amount`. */
  validatePayment(input: PaymentInput, session?: Session, extras: PaymentExtras = {}): number {
    const errors = new FieldErrorCollector();
    if ('card' in input) this.deps.paymentMethods.validateCard(input.card, 'card', errors);
    if (session) {
      const type = 'card' in input ? 'CARD' : input.wallet;
      if (session.allowedPaymentMethods && !session.allowedPaymentMethods.includes(type)) {
        errors.add('paymentMethodType', `in:${session.allowedPaymentMethods.join(',')}`, `${type} is not offered by this session`);
      }
    }
    const amount = session ? this.amountOf(session, extras.amount, errors) : 0;
    errors.throwIfAny();
    return amount;
  }

  /**
   * The amount of an attempt: the session's, or with dynamicAmount the one the customer entered
   * (integer minor units, 1..999999999; the session's amount is the default). A fixed amount cannot be changed.
   */
  private amountOf(session: Session, given: number | null | undefined, errors: FieldErrorCollector): number {
    if (given === undefined || given === null) {
      if (session.dynamicAmount && session.amount < 1) errors.add('amount', 'required', 'enter the amount to pay');
      return session.amount;
    }
    if (!session.dynamicAmount) {
      if (given !== session.amount) errors.add('amount', `in:${session.amount}`, 'the amount of this session is fixed');
      return session.amount;
    }
    if (!Number.isSafeInteger(given)) errors.add('amount', 'int', 'must be a whole number of minor units');
    else if (given < 1) errors.add('amount', 'min:1', 'must be greater than 0');
    else if (given > MAX_AMOUNT) errors.add('amount', `max:${MAX_AMOUNT}`, `must be at most ${MAX_AMOUNT}`);
    return given;
  }

  /** Whether a date of birth (YYYY-MM-DD) makes the customer at least `minimumAge` years old on the service clock's date (UTC). */
  private oldEnough(dateOfBirth: string | null | undefined, minimumAge: number): boolean {
    const m = dateOfBirth ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateOfBirth) : null;
    if (!m) return false;
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const born = new Date(Date.UTC(y, mo - 1, d));
    if (born.getUTCFullYear() !== y || born.getUTCMonth() !== mo - 1 || born.getUTCDate() !== d) return false;
    const today = new Date(this.deps.clock.now());
    if (born.getTime() > today.getTime()) return false;
    let age = today.getUTCFullYear() - y;
    if (today.getUTCMonth() + 1 < mo || (today.getUTCMonth() + 1 === mo && today.getUTCDate() < d)) age -= 1;
    return age >= minimumAge;
  }

  /**
   * The window's age step (sandbox eID: a date of birth; null: the customer did not verify). Of age:
   * the session remembers it (ageVerified) and the window shows the payment form. Otherwise the
   * attempt ends FAILED with AGE_VERIFICATION_NOT_COMPLETED — a transaction without a payment
   * method, refused before the acquirer — and the session may retry while attempts remain.
   */
  async verifyAge(session: Session, dateOfBirth: string | null, clientIp: string | null): Promise<PayResult> {
    const current = await this.expireIfDue(session);
    if (current.state !== 'PENDING') throw this.notPayable(current);
    const minimumAge = current.minimumAge ?? null;
    if (minimumAge === null || current.ageVerified) return { session: current, transaction: null };
    if (this.oldEnough(dateOfBirth, minimumAge)) {
      await this.deps.sessions.updateIfState(current.id, 'PENDING', { ageVerified: true, updatedAt: this.deps.clock.nowIso() });
      return { session: (await this.deps.sessions.findByIdAnyAccount(current.id)) ?? current, transaction: null };
    }
    return this.attempt(current, null, clientIp, current.amount, false);
  }

  /**
   * The customer pays. One attempt: PENDING → PROCESSING (conditional, so two submits cannot
   * both start), store the payment method, authorize synchronously through the pipeline. The
   * outcome is applied to the session by `onPaymentResult` inside the pipeline's commit; an
   * acquirer timeout leaves the session PROCESSING until the pipeline's retry answers.
   * Before the acquirer (the engine's `beforeCall`): the age verification, then the merchant's preAuthUrl.
   */
  async pay(session: Session, input: PaymentInput, clientIp: string | null, extras: PaymentExtras = {}): Promise<PayResult> {
    const amount = this.validatePayment(input, session, extras);
    const current = await this.expireIfDue(session);
    if (current.state !== 'PENDING') throw this.notPayable(current);
    const minimumAge = current.minimumAge ?? null;
    let ageVerified = current.ageVerified ?? false;
    if (minimumAge !== null && !ageVerified && extras.dateOfBirth !== undefined) ageVerified = this.oldEnough(extras.dateOfBirth, minimumAge);
    return this.attempt(current, input, clientIp, amount, ageVerified, extras.threeDS);
  }

  private notPayable(current: Session): AppError {
    return new AppError(
      'CONFLICT',
      current.state === 'PROCESSING' ? 'A payment of this session is in progress.' : `The session is ${current.state}; it takes no more payments.`,
    );
  }

  /** One attempt; `input` null: the customer gave no payment details (an age step that failed). */
  private async attempt(
    current: Session,
    input: PaymentInput | null,
    clientIp: string | null,
    amount: number,
    ageVerified: boolean,
    threeDS?: ThreeDSDecision,
  ): Promise<PayResult> {
    const started = await this.change(current, 'start', { attempts: current.attempts + 1, errorCode: null, amount, ageVerified });
    if (!started) throw new AppError('CONFLICT', 'The session changed meanwhile (paid or expired).');
    const attempt: Session = { ...current, state: 'PROCESSING', attempts: current.attempts + 1, amount, ageVerified };
    const ageRefused = (attempt.minimumAge ?? null) !== null && !attempt.ageVerified;
    const checks = ageRefused || Boolean(attempt.preAuthUrl);

    let created = false;
    try {
      const pointOfSale = await this.pointOfSaleOf(attempt);
      const paymentMethod =
        input === null
          ? null
          : 'card' in input
            ? await this.deps.paymentMethods.storeCard(attempt.accountId, { customerId: attempt.customerId, card: input.card })
            : await this.deps.paymentMethods.storeWallet(attempt.accountId, { customerId: attempt.customerId, type: input.wallet });
      const transaction = await this.deps.payments.authorize({
        accountId: attempt.accountId,
        pointOfSaleId: attempt.pointOfSaleId,
        flow: 'CIT',
        type: 'PAYMENT',
        operation: 'AUTHORIZATION',
        amount: attempt.amount,
        currency: attempt.currency,
        paymentMethod,
        instrument: input !== null && 'card' in input ? this.deps.paymentMethods.cardInstrument(input.card) : undefined,
        storesCard: storedAs(attempt),
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
        // The session (its subscription, its billing agreement, its payment link) follows the payment's final answer in that commit.
        effects: 'SESSION',
        inCommit: async (repos, tx) => {
          created = true;
          await repos.sessions.updateIfState(attempt.id, 'PROCESSING', { transactionId: tx.id, updatedAt: this.deps.clock.nowIso() });
        },
        threeDS: threeDS && {
          authentication: threeDS.action === 'authorize' ? threeDS.authentication : null,
          sca: threeDS.sca,
          scaCode: threeDS.scaCode,
          refusal: threeDS.action === 'refuse' ? { errorCode: threeDS.errorCode, message: threeDS.message } : null,
        },
        // Refused before the acquirer: age not verified, or the merchant's preAuthUrl said no.
        beforeCall: checks
          ? async (tx) => {
              if (ageRefused) return { errorCode: 'AGE_VERIFICATION_NOT_COMPLETED', message: 'The customer did not verify being old enough.' };
              return this.preAuthorize({ ...attempt, transactionId: tx.id }, tx);
            }
          : undefined,
      });
      return { session: (await this.deps.sessions.findById(attempt.accountId, attempt.id))!, transaction };
    } catch (err) {
      // Nothing reached the acquirer: give the attempt back so that the customer can try again.
      if (!created)
        await this.deps.sessions.updateIfState(attempt.id, 'PROCESSING', {
          state: 'PENDING',
          attempts: current.attempts,
          amount: current.amount,
          ageVerified: current.ageVerified ?? false,
          updatedAt: this.deps.clock.nowIso(),
        });
      throw err;
    }
  }

  /**
   * The merchant's preAuthUrl: POST {session, transaction} (transaction PROCESSING) with the point
   * of sale's Authorization value, 5 s. A 2xx lets the payment proceed; anything else refuses it.
   */
  private async preAuthorize(session: Session, transaction: Transaction): Promise<{ errorCode: string; message: string } | null> {
    if (!session.preAuthUrl) return null;
    const body = { session: sessionWire(session), transaction: transactionWire(transaction) };
    let status: number | null = null;
    try {
      status = await this.deps.outbound.post(session, session.preAuthUrl, body, transaction.id);
    } catch {
      status = null;
    }
    if (status !== null && status >= 200 && status < 300) return null;
    return {
      errorCode: 'REJECTED_BY_MERCHANT',
      message: status === null ? 'The merchant did not answer the pre-authorization call in time.' : `The merchant refused the payment (HTTP ${status}).`,
    };
  }

  /**
   * Part of the SESSION effects (declared with the payment engine in services.ts): runs inside the
   * commit that makes a session's payment final, before its events and callback are written.
   * Returns the transaction when it changed it (linked the new subscription), for what the commit writes after.
   */
  async paymentFinal(repos: SessionRepos, transaction: Transaction): Promise<Transaction | void> {
    if (!transaction.sessionId) return;
    const session = await repos.sessions.findById(transaction.accountId, transaction.sessionId);
    if (!session || session.state !== 'PROCESSING') return;
    const now = this.deps.clock.nowIso();

    if (transaction.state === 'SUCCESS') {
      let subscription: Subscription | null = null;
      const request = session.subscriptionRequest;
      const expectedAmount = request?.amount !== undefined && request.amount !== null && request.amount >= 1 ? request.amount : null;
      if (request?.id && transaction.paymentMethodId) {
        // subscription.id: the existing subscription takes the new payment method (nothing else changes).
        const replaced = await repos.sessions.replaceSubscriptionPaymentMethod(session.accountId, request.id, transaction.paymentMethodId, expectedAmount, now);
        if (replaced) {
          await repos.transactions.move(transaction.id, [transaction.state], { subscriptionId: request.id, updatedAt: now });
          await repos.sessions.updateIfState(session.id, 'PROCESSING', {
            state: nextSessionState('PROCESSING', 'approve')!,
            transactionId: transaction.id,
            subscriptionId: request.id,
            paymentMethodId: transaction.paymentMethodId,
            errorCode: null,
            finalizedAt: now,
            updatedAt: now,
          });
          return { ...transaction, subscriptionId: request.id, updatedAt: now };
        }
        // No longer ACTIVE (stopped meanwhile): the payment stands, the subscription is left as it is.
      } else if (request && transaction.paymentMethodId) {
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
        if (expectedAmount !== null)
          await repos.subscriptions.updateIfState(session.accountId, subscription.id, 'ACTIVE', { amount: expectedAmount, updatedAt: now });
        await repos.transactions.move(transaction.id, [transaction.state], { subscriptionId: subscription.id, updatedAt: now });
      }
      await repos.sessions.updateIfState(session.id, 'PROCESSING', {
        state: nextSessionState('PROCESSING', 'approve')!,
        transactionId: transaction.id,
        subscriptionId: subscription?.id ?? (request?.id ? null : session.subscriptionId),
        paymentMethodId: transaction.paymentMethodId,
        errorCode: null,
        finalizedAt: now,
        updatedAt: now,
      });
      if (subscription && request?.billingAgreement) {
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
    if (isSessionFinal(state)) {
      await this.billing.sessionExpired?.(repos, session);
      const expired: Session = { ...session, state, transactionId: transaction.id, errorCode: transaction.errorCode, updatedAt: now, finalizedAt: now };
      if (session.reportExpired && session.notificationUrl) await this.deps.outbound.scheduleExpiredCallback(repos, expired, transaction);
    }
  }

  /**
   * `session.expire`: due at expiresAt on the service clock. A payment in flight is left alone.
   * With reportExpired and no attempt made, this job also sends the EXPIRED report (transaction
   * null) and is retried on its catalogue schedule until the receiver answers 2xx.
   */
  expireJob(): JobDefinition<{ sessionId: string }> {
    return defineJob(SESSION_EXPIRE_JOB, async ({ sessionId }) => {
      const found = await this.deps.sessions.findByIdAnyAccount(sessionId);
      if (!found) return;
      const session = await this.expireIfDue(found);
      if (session.state !== 'EXPIRED' || session.errorCode !== 'EXPIRED' || session.transactionId || !session.reportExpired || !session.notificationUrl) return;
      const status = await this.deps.outbound.post(session, session.notificationUrl, expiredReport(session), session.id).catch(() => null);
      if (status === null || status < 200 || status >= 300) {
        throw new RetryLater(`session ${session.id}: the EXPIRED report was not delivered (${status === null ? 'no answer' : `HTTP ${status}`})`);
      }
    });
  }

  private async expireIfDue(session: Session): Promise<Session> {
    if (session.state !== 'PENDING' || Date.parse(session.expiresAt) > this.deps.clock.now()) return session;
    const now = this.deps.clock.nowIso();
    await this.deps.transaction(async (repos) => {
      const changes = { state: 'EXPIRED' as const, errorCode: session.errorCode ?? 'EXPIRED', finalizedAt: now, updatedAt: now };
      const changed = await repos.sessions.updateIfState(session.id, 'PENDING', changes);
      if (!changed) return;
      await this.billing.sessionExpired?.(repos, session);
      // reportExpired after failed attempts: the last one's NotificationWebhook, session EXPIRED (without attempts: the expire job reports).
      if (session.reportExpired && session.notificationUrl && session.transactionId) {
        const last = await repos.transactions.findById(session.accountId, session.transactionId);
        if (last) await this.deps.outbound.scheduleExpiredCallback(repos, { ...session, ...changes }, last);
      }
    });
    return (await this.deps.sessions.findByIdAnyAccount(session.id)) ?? session;
  }

  private async change(session: Session, event: SessionEvent, changes: Omit<SessionChanges, 'updatedAt'>): Promise<boolean> {
    const next = nextSessionState(session.state, event);
    if (!next) return false;
    return this.deps.sessions.updateIfState(session.id, session.state, { ...changes, state: next, updatedAt: this.deps.clock.nowIso() });
  }

  /** `subscription.id`: an ACTIVE subscription of the merchant in the session's currency, else 422 on that field. */
  private async existingSubscription(accountId: string, input: CreateSessionInput, errors: FieldErrorCollector): Promise<Subscription | null> {
    const id = input.subscription?.id;
    if (!id) return null;
    const found = await this.deps.findSubscription(accountId, id);
    if (!found) errors.add('subscription.id', EXISTING, 'no subscription with this id exists');
    else if (found.state !== 'ACTIVE')
      errors.add('subscription.id', 'in:ACTIVE', `the subscription is ${found.state}; only an ACTIVE subscription can take a new payment method`);
    else if (found.currency !== input.currency) errors.add('currency', `in:${found.currency}`, `must be the subscription's currency ${found.currency}`);
    if (found && input.subscription?.billingAgreement) errors.add('subscription.billingAgreement', 'in:none', 'cannot be combined with subscription.id');
    return found && found.state === 'ACTIVE' ? found : null;
  }

  private subscriptionRequest(input: CreateSessionInput, existing: Subscription | null, errors: FieldErrorCollector): SubscriptionRequest | null {
    const s = input.subscription;
    if (!s) return null;
    const amount = s.amount ?? null;
    if (s.id) {
      if (!existing) return null;
      return {
        id: existing.id,
        amount,
        type: existing.type,
        reference: existing.reference,
        expiryDate: existing.expiryDate,
        interval: existing.interval,
        billingAgreement: null,
      };
    }
    if (!s.type) {
      errors.add('subscription.type', 'required', 'is required (unless subscription.id names an existing subscription)');
      return null;
    }
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
      id: null,
      amount,
      type: s.type,
      reference: s.reference ?? null,
      expiryDate: s.expiryDate ?? null,
      // An interval belongs to SCHEDULED subscriptions only.
      interval: s.type === 'SCHEDULED' ? (s.interval ?? null) : null,
      billingAgreement,
    };
  }
}

/** The EXPIRED report of a session without any attempt: a NotificationWebhook with transaction null. */
export function expiredReport(session: Session) {
  return {
    transaction: null,
    aggregates: null,
    operations: [],
    acquirerAgreement: null,
    session: sessionWire(session),
    subscription: null,
    sca: null,
    card: null,
  };
}

/**
 * How the session's card is kept for later merchant-initiated payments (INTERFACE §12.3): for a
 * scheduled subscription or a billing agreement `recurring`, for any other subscription or a
 * customer's saved card `unscheduled`; null when it is kept for nothing.
 */
function storedAs(session: Pick<Session, 'subscriptionRequest' | 'customerId'>): 'recurring' | 'unscheduled' | null {
  const request = session.subscriptionRequest;
  if (request) return request.type === 'SCHEDULED' || request.billingAgreement ? 'recurring' : 'unscheduled';
  return session.customerId ? 'unscheduled' : null;
}
