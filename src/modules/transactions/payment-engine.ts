/**
 * THE payment engine: every operation that moves money — AUTHORIZATION, SALE, PAYOUT, CAPTURE,
 * REFUND, VOID, RENEW and the instant-capture chain — goes through here, in fixed steps:
 *
 *   1. record — one commit: the operation (PROCESSING) with its reservation (captures and voids
 *               hold `pending`, refunds `pendingRefund`), its `payment.drive` job (due now for
 *               asynchronous flows; a crash safety net for synchronous ones) and the flow's own writes.
 *               A payment's first operation is recorded with its new transaction (PENDING/PROCESSING).
 *   2. call   — the acquirer, outside any DB transaction. A timeout (or a thrown connector error)
 *               is an unknown outcome, never a decline: the operation stays PROCESSING with its
 *               reservation, and the drive job asks again (same operation id) until it answers.
 *   3. apply  — one commit: the operation leaves PROCESSING through OPERATION_TRANSITIONS (once:
 *               `where state = 'PROCESSING'`), the transaction through TRANSACTION_TRANSITIONS with
 *               its aggregates in one conditional update (engine-rules.ts: the reservation ends, the
 *               money moves in), the follow-up operation with its reservation, the effects the flow
 *               declared, the outbox events, the callback row with its body, and the drive job's end.
 *
 * Use:
 *   authorize(request)       synchronous payment (MOTO, payout-sync, CIT window): the transaction after the answer.
 *   submit / submitMany      asynchronous payments (MIT, batch, payouts): PENDING transactions at once, one commit.
 *   charge(tx, {...})        a PENDING/PROCESSING transaction whose card arrived later (terminal tap).
 *   record(decide)           lifecycle operations (capture, refund, void, renew): `decide` reserves and
 *                            names them inside the commit; drive(operationId) then runs each.
 *   finalizedInCommit        for flows that end a transaction themselves (abort, expiry).
 *   declareEffects(kind, fn) what a flow's payments do in the commit of their final answer (one per kind).
 */
import type { Clock } from '../../clock.js';
import {
  type Acquirer,
  type AcquirerCall,
  type AcquirerResult,
  type ScaResult,
  type ThreeDSAuthentication,
  type Initiator,
  type Instrument,
  noExternalCodes,
  type Series,
} from '../../connectors/acquirer.js';
import type { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository.js';
import { seriesAfterApproval, seriesFor, type SeriesType } from './series.js';
import { defineJob, JOB_CATALOGUE, type KnownOf, newJob, type PayloadOf } from '../../jobs/catalogue.js';
import { Deferred, type JobContext, type JobDefinition, type JobQueue, type NewJob, RetryLater } from '../../jobs/job.js';
import { acquirerRetryDelay } from '../../jobs/retry-schedules.js';
import type { Effect } from '../../shared/effect.js';
import type { EventsLog } from '../../shared/events-log.js';
import { newId, newTransactionId } from '../../shared/ids.js';
import { withNewIdsOnCollision } from '../../shared/errors.js';
import type { UnitKind } from '../../shared/unit-of-work.js';
import type { EventOutbox } from '../events/event-outbox.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import {
  callbackDue,
  combined,
  eventsOf,
  finalEvent,
  followUpOf,
  isPrimary,
  type PrimaryOperation,
  reservationDelta,
  settlementDelta,
} from './engine-rules.js';
import {
  type InstantCapture,
  isFinal,
  nextOperationState,
  nextTransactionState,
  type Operation,
  type OperationChain,
  type OperationType,
  PAYMENT_EFFECTS,
  type PaymentEffects,
  type Transaction,
  type TransactionEvent,
  type TransactionFlow,
  type TransactionState,
  type TransactionType,
} from './transaction.js';
import type { KnownSections } from './notification.js';
import type { AggregateDelta, DriveRecord, NewTransaction, PaymentRecords, TransactionResultPatch, TransactionsRepository } from './transactions.repository.js';
import { answeredEvent } from './answer-log.js';
import { type AcquirerRoute, type AcquirerRouting, NO_ACQUIRER } from './acquirer-routing.js';
import type { AcquirerRequestsRepository, InDoubtResolution } from './acquirer-requests.repository.js';
import { type Answer, AtMostOnce, type Sent } from './at-most-once.js';

export type { PrimaryOperation } from './engine-rules.js';

export { CALLBACK_MAX_ATTEMPTS } from '../../jobs/catalogue.js';
export const DRIVE_JOB = 'payment.drive';
export const CALLBACK_JOB = 'callback.deliver';
/** The void of an authorization in doubt whose id the acquirer named (INTERFACE §12.4). */
export const RELEASE_JOB = 'payment.release-in-doubt';
/** A synchronous call normally answers long before this; if its process died meanwhile, the drive job takes over. */
export const SYNC_SAFETY_NET_MS = 5_000;
/** Until the acquirer answers (the catalogue's attempts of `payment.drive`). */
export const DRIVE_MAX_ATTEMPTS = JOB_CATALOGUE[DRIVE_JOB].maxAttempts;

/** `notificationId`: the delivery row, written with its body in the commit that made the transaction final (absent in jobs queued before that). */
export type CallbackJobPayload = PayloadOf<typeof CALLBACK_JOB>;

/** `attempt`: the acquirer attempt number of the job's first run (default 2: a synchronous request made attempt 1). */
export type DriveJobPayload = PayloadOf<typeof DRIVE_JOB>;

/** The repositories the engine's commits need; flows may pass more (see `inCommit`, effects). */
export interface PipelineRepos {
  transactions: TransactionsRepository;
  paymentRecords: PaymentRecords;
  jobs: JobQueue;
  events: EventOutbox;
  acquirerRequests: AcquirerRequestsRepository;
  paymentMethods: Pick<PaymentMethodsRepository, 'recordSeries' | 'releaseSeries'>;
}

/**
 * Writes a final transaction's callback — the delivery row with its complete body and its job —
 * inside the commit that made it final (src/delivery/callbacks.ts implements it).
 */
export interface CallbackScheduler<R> {
  /** `known`: what the engine already read or decided (the body and the row need no read of it). */
  /** `queuedAt`: the answered operation's creation (service ms), the callback job's place in the queue. */
  /** `entered`: this commit moved the transaction into its state, so no delivery row of that state exists before it. */
  scheduleInCommit(repos: R, transaction: Transaction, known?: KnownToCallback, queuedAt?: number, entered?: boolean): Promise<void>;
  /** scheduleInCommit that returns the callback's job instead of enqueueing it (null: no callback). */
  writeInCommit(repos: R, transaction: Transaction, known?: KnownToCallback, queuedAt?: number, entered?: boolean): Promise<NewJob | null>;
}

/** What the engine knows when it writes a callback: sections of the body and the row it need not read. */
export interface KnownToCallback extends KnownSections {
  /** The point of sale's sealed webhookAuthentication (null: none). */
  webhookAuthenticationSealed?: string | null;
}

/** What a flow's payments do in the commit that makes them final; returns the transaction when it changed it. */
export type FinalEffect<R> = (repos: R, transaction: Transaction) => Promise<Transaction | void>;

export interface PaymentRequest<R extends PipelineRepos = PipelineRepos> {
  accountId: string;
  pointOfSaleId: string;
  flow: TransactionFlow;
  type: TransactionType;
  operation: PrimaryOperation;
  amount: number;
  currency: string;
  /** The stored instrument (card or wallet); null only when the card comes later (terminal). */
  paymentMethod: PaymentMethod | null;
  /** The card as just given (with its CVC) for the first acquirer call; never stored. */
  instrument?: Instrument | undefined;
  /**
   * `authorize()` only: the payment stores the card for later merchant-initiated payments (a
   * subscription, a customer's saved card): the first of its series at the acquirer, `recurring`
   * for scheduled ones, `unscheduled` otherwise.
   */
  storesCard?: SeriesType | null | undefined;
  reference?: string | null | undefined;
  textOnStatement?: string | null | undefined;
  notificationUrl?: string | null | undefined;
  customerId?: string | null | undefined;
  attributes?: Record<string, string> | null | undefined;
  clientIp?: string | null | undefined;
  clientCountry?: string | null | undefined;
  instantCapture?: InstantCapture | null | undefined;
  scaMode?: string | null | undefined;
  exemptions?: string[] | null | undefined;
  descriptor?: string | null | undefined;
  sessionId?: string | null | undefined;
  subscriptionId?: string | null | undefined;
  billingAgreementChargeId?: string | null | undefined;
  terminalId?: string | null | undefined;
  /** The effects of the final answer this flow declared (declareEffects); none beyond events and the callback when absent. */
  effects?: PaymentEffects | null | undefined;
  /** The idempotent request's effect (one per entry of a batch): its key is stored with the transaction in its create commit. */
  effect?: Effect | null | undefined;
  /** Extra writes of the calling flow, in the create commit (e.g. link a session, a charge). */
  inCommit?: ((repos: R, transaction: NewTransaction) => Promise<void>) | undefined;
  /**
   * `authorize()` only: the flow's last word after the record commit and before the acquirer call
   * (CIT sessions: the merchant's preAuthUrl, age verification). A refusal is applied exactly like
   * a decline (apply: the FAILED answer, declared effects, events, callback) and the acquirer is
   * never called. It must not throw. The drive job's safety net waits BEFORE_CALL_BUDGET_MS longer.
   */
  beforeCall?: ((transaction: Transaction) => Promise<{ errorCode: string; message: string } | null>) | undefined;
  /** `authorize()` only: the payment window's 3-D Secure result (sent to the acquirer, or a refusal before it). */
  threeDS?: (ThreeDSGiven & { refusal: { errorCode: string; message: string } | null }) | undefined;
  /**
   * `submit()` only: what the drive reads besides the new transaction and operation, as the flow
   * read it already (MIT: the subscription with its payment method and point of sale). A drive job
   * handed to this process's runner in the create commit starts from it and reads nothing.
   */
  driveRead?: Pick<DriveRecord, 'webhookAuthenticationSealed' | 'subscription'> & { panSealed: string | null };
}

/** What `beforeCall` may take (a 5 s merchant call) before the drive job's safety net would call the acquirer. */
export const BEFORE_CALL_BUDGET_MS = 30_000;

export interface EngineDeps<R extends PipelineRepos> {
  transactions: TransactionsRepository;
  transaction<T>(fn: (repos: R) => Promise<T>, kind?: UnitKind): Promise<T>;
  /** Which connector and agreement a payment goes to (acquirer-routing.ts). */
  routing: AcquirerRouting;
  /** The store's acquirer requests, read outside a commit (the at-most-once record, requests in doubt). */
  acquirerRequests: AcquirerRequestsRepository;
  /** Writes a final transaction's callback in the commit that made it final. */
  callbacks: CallbackScheduler<R>;
  /** Opens a stored payment method, read with its sealed number, for an acquirer call. */
  openInstrument(stored: { paymentMethod: PaymentMethod; panSealed: string | null }): Instrument;
  clock: Clock;
  /** One `payment.answered` line per applied answer, after its commit. */
  events?: EventsLog;
  /**
   * In the commit of a decline CARD_BLOCKED (the cardholder blocked the merchant, Clearhaus 40420):
   * what keeps the merchant from charging the card again (its subscriptions made INVALID).
   */
  cardBlocked?: (repos: R, transaction: Transaction) => Promise<void>;
  /** Makes the id of a new transaction (tests: a chosen one); by default newTransactionId (time-ordered). */
  newTransactionId?: () => string;
}

/** Where driving an operation left it. */
export type DriveResult =
  /** Final: answered now (`message`: the acquirer's decline text) or by another process before. */
  | { outcome: 'answered'; operation: Operation; message?: string; transaction: Transaction | null }
  /**
   * Still PROCESSING with its reservation: a `pending` answer or an unknown outcome the drive job asks
   * about again (`retryInMs`: not before then), or — `inDoubt` — one that is never asked again: an
   * operator resolves it (INTERFACE §12.4).
   */
  | { outcome: 'unknown'; pending: boolean; operation: Operation; inDoubt?: boolean; retryInMs?: number }
  | { outcome: 'missing' };

const INITIATOR: Record<TransactionFlow, Initiator> = { MIT: 'MIT', CIT: 'CIT', MOTO: 'MOTO', SALE: 'TERMINAL', PAYOUT: 'MIT' };

/** The acquirer call for each operation type. */
const ACQUIRER_CALL = {
  AUTHORIZATION: 'authorize',
  SALE: 'authorize',
  CAPTURE: 'capture',
  REFUND: 'refund',
  VOID: 'void',
  RENEW: 'renew',
  PAYOUT: 'payout',
} as const satisfies Record<OperationType, AcquirerCall>;

/** How soon a job deferred by a saturated connector comes back. */
const BUSY_DEFER_MS = 200;

/** What a synchronous flow gives its first acquirer call beyond the records: the card as typed, whether it is stored now. */
type GivenNow = { instrument?: Instrument | undefined; storesCard?: SeriesType | null; threeDS?: ThreeDSGiven | undefined };

/**
 * The payment window's 3-D Secure result (INTERFACE §13), for the authorization of a customer
 * payment: the message the acquirer gets (null: none) and what the transaction's `sca` and
 * `externalStatusCodes.sca` say, whatever the acquirer answers.
 */
export interface ThreeDSGiven {
  authentication: ThreeDSAuthentication | null;
  sca: ScaResult;
  scaCode: string | null;
}

/** An answer with the window's 3-D Secure result on it (a connector that reports its own SCA keeps it). */
function withThreeDS<A extends Answer>(answer: A, threeDS: ThreeDSGiven | undefined): A {
  if (!threeDS || (answer.outcome !== 'approved' && answer.outcome !== 'declined')) return answer;
  return {
    ...answer,
    sca: answer.sca ?? threeDS.sca,
    externalStatusCodes: { ...answer.externalStatusCodes, sca: answer.externalStatusCodes.sca ?? threeDS.scaCode },
  };
}

/** A merchant-initiated payment with a card that has no series at the acquirer (INTERFACE §12.3): failed without a request. */
const NO_SERIES: Answer = {
  outcome: 'declined',
  errorCode: 'INVALID_AGREEMENT',
  message:
    'The card was stored before it had a series at this acquirer: a merchant-initiated payment cannot reference it. Ask the customer to pay once to store it again.',
  externalStatusCodes: noExternalCodes(),
};

/** A payment of an account no acquirer takes (INTERFACE §12.1): failed without a request. */
const NO_AGREEMENT: Answer = {
  outcome: 'declined',
  errorCode: 'MISSING_ACQUIRER_AGREEMENT',
  message: 'The merchant has no acquirer agreement; nothing was sent to any acquirer.',
  externalStatusCodes: noExternalCodes(),
};

/**
 * The uncaptured rest of a partly captured authorization at an acquirer that voids none once captured
 * (Acquirer.voidsAfterCapture): released in the books, where nothing can capture it any more,
 * without a request; the issuer lets the hold lapse (Clearhaus: after about 7 days).
 */
const RELEASED_IN_BOOKS: Answer = { outcome: 'approved', acquirerReference: '', externalStatusCodes: noExternalCodes() };

class Conflict extends Error {}

/** Tries of reserveRest when concurrent reservations keep changing the remaining amount. */
const RESERVE_REST_TRIES = 10;

export class PaymentEngine<R extends PipelineRepos = PipelineRepos> {
  private readonly effects = new Map<PaymentEffects, FinalEffect<R>>();
  private readonly observers: Array<(transaction: Transaction) => void> = [];
  private readonly atMostOnce: AtMostOnce<R>;
  /** Jobs' calls under way per connector with a capacity (admit). */
  private readonly jobCalls = new Map<Acquirer, number>();

  constructor(private readonly deps: EngineDeps<R>) {
    this.atMostOnce = new AtMostOnce<R>({ transaction: deps.transaction, requests: deps.acquirerRequests, clock: deps.clock });
  }

  /** Declares what the payments of one kind of flow do in their final commit; each kind once. */
  declareEffects(kind: PaymentEffects, effect: FinalEffect<R>): void {
    if (this.effects.has(kind)) throw new Error(`effects ${kind} are declared twice`);
    this.effects.set(kind, effect);
  }

  /** Fails at start when a flow's effects were never declared: its payments would end without them. */
  checkEffectsDeclared(): void {
    const missing = PAYMENT_EFFECTS.filter((kind) => !this.effects.has(kind));
    if (missing.length > 0) throw new Error(`payment engine: no effects declared for ${missing.join(', ')}`);
  }

  /**
   * Observes transactions that an acquirer answer made final, after the commit (metrics, benchmarks).
   * Observers write nothing: what a payment changes is declared as effects.
   */
  observeFinal(observer: (transaction: Transaction) => void): void {
    this.observers.push(observer);
  }

  // --- payments ---------------------------------------------------------------------------------

  /** Synchronous flows: record, call, apply (and any instant capture); returns the transaction now. */
  async authorize(request: PaymentRequest<R>): Promise<Transaction> {
    const recovered = await this.recover(request.accountId, request.effect);
    if (recovered) return recovered;
    const safetyNet = SYNC_SAFETY_NET_MS + (request.beforeCall ? BEFORE_CALL_BUDGET_MS : 0);
    const route = await this.deps.routing.routeNew(request.accountId, request.flow);
    const built = await withNewIdsOnCollision('transactions', async () => {
      const made = this.build(request, 'PROCESSING', route);
      await this.deps.transaction(async (repos) => {
        await this.insertOperations(repos, [made.operation], this.deps.clock.now() + safetyNet, 2, [made.transaction]);
        await request.inCommit?.(repos, made.transaction);
      });
      return made;
    });
    const refusal = request.threeDS?.refusal ?? (request.beforeCall ? await request.beforeCall(built.committed) : null);
    if (refusal) {
      // Applied as the acquirer's decline would be, without calling it.
      const declined = withThreeDS(
        { outcome: 'declined' as const, ...refusal, externalStatusCodes: { terminal: null, acquirer: null, network: null, sca: null } },
        request.threeDS,
      );
      try {
        return (await this.apply(built.committed, built.operation, declined, null, {})).transaction;
      } catch (err) {
        if (!(err instanceof Conflict)) throw err;
        return this.reload(request.accountId, built.transaction.id);
      }
    }
    const { latest } = await this.driveChain(built.operation.id, 1, {
      instrument: request.instrument,
      storesCard: request.storesCard ?? null,
      threeDS: request.threeDS,
    });
    return latest ?? built.committed;
  }

  /** Asynchronous flows: the drive job calls the acquirer; the outcome goes to the callback. */
  async submit(request: PaymentRequest<R>): Promise<Transaction> {
    const [created] = await this.submitMany([request]);
    return created!;
  }

  /** One commit for all; requests whose idempotency key already has a transaction (a retry after a crash) get that one. */
  async submitMany(requests: PaymentRequest<R>[]): Promise<Transaction[]> {
    if (requests.length === 0) return [];
    const existing = await this.existingFor(requests);
    const routes = await this.routesFor(requests);
    const built = await withNewIdsOnCollision('transactions', async () => {
      // One time for the commit's rows: they are created together.
      const now = this.deps.clock.nowIso();
      const made = requests.map((r) => (existing.has(r.effect?.key ?? '') ? null : this.build(r, 'PENDING', routes.get(r.accountId) ?? null, now)));
      const fresh = made.filter((b) => b !== null);
      if (fresh.length === 0) return made;
      await this.deps.transaction(async (repos) => {
        await this.insertOperations(
          repos,
          fresh.map((b) => b.operation),
          this.deps.clock.now(),
          1,
          fresh.map((b) => b.transaction),
          fresh.map((b) => driveRecordOf(b.request, b.committed, b.operation)),
        );
        for (const b of fresh) await b.request.inCommit?.(repos, b.transaction);
      }, 'rerunnable');
      return made;
    });
    // What was just committed, as committed: no read back (a batch of 500 would be 500 reads).
    return requests.map((r, i) => existing.get(r.effect?.key ?? '') ?? built[i]!.committed);
  }

  /**
   * The transaction an idempotent request created before its process died, driven on if its
   * acquirer call is still open (the drive job would do the same later); null when there is none.
   */
  async recover(accountId: string, effect: Effect | null | undefined): Promise<Transaction | null> {
    if (!effect?.resumed) return null;
    const [found] = await this.deps.transactions.findByIdempotencyKeys(accountId, [effect.key]);
    if (!found) return null;
    const open = (await this.deps.transactions.operationsOf(found.id)).find((op) => op.state === 'PROCESSING');
    if (open) await this.driveChain(open.id, 1);
    return this.reload(accountId, found.id);
  }

  /** The route of each account among `requests` (a batch is one account's: one look-up). */
  private async routesFor(requests: PaymentRequest<R>[]): Promise<Map<string, AcquirerRoute | null>> {
    const routes = new Map<string, AcquirerRoute | null>();
    for (const r of requests) if (!routes.has(r.accountId)) routes.set(r.accountId, await this.deps.routing.routeNew(r.accountId, r.flow));
    return routes;
  }

  private async existingFor(requests: PaymentRequest<R>[]): Promise<Map<string, Transaction>> {
    const keys = requests.flatMap((r) => (r.effect?.resumed ? [r.effect.key] : []));
    if (keys.length === 0) return new Map();
    const found = await this.deps.transactions.findByIdempotencyKeys(requests[0]!.accountId, keys);
    return new Map(found.map((tx) => [tx.idempotencyKey!, tx]));
  }

  /**
   * An existing transaction (PENDING or PROCESSING, no operation yet) whose instrument arrived
   * later: attach the payment method, record the operation and drive it synchronously.
   */
  async charge(existing: Transaction, input: { paymentMethod: PaymentMethod; instrument?: Instrument; operation: PrimaryOperation }): Promise<Transaction> {
    const at = this.deps.clock.nowIso();
    const pm = input.paymentMethod;
    const operation = this.newOperation(existing, input.operation, existing.amount, { at });
    const route = await this.deps.routing.routeNew(existing.accountId, existing.flow);
    await this.deps.transaction(async (repos) => {
      const attached = await repos.transactions.move(existing.id, ['PENDING', 'PROCESSING'], {
        state: 'PROCESSING',
        paymentMethodId: pm.id,
        paymentMethodType: pm.type,
        paymentMethodSubType: pm.subType,
        paymentMethodExpiry: pm.expiry,
        paymentMethodDisplayText: pm.displayText,
        paymentMethodHolderName: pm.holderName,
        acquirer: route?.acquirer.name ?? NO_ACQUIRER,
        updatedAt: at,
      });
      if (!attached) throw new Conflict(`transaction ${existing.id} is no longer open`);
      await this.insertOperations(repos, [operation], this.deps.clock.now() + SYNC_SAFETY_NET_MS, 2);
    });
    const { latest } = await this.driveChain(operation.id, 1, { instrument: input.instrument });
    return latest ?? this.reload(existing.accountId, existing.id);
  }

  /**
   * A transaction's state moved by `event` without an acquirer's answer, inside the caller's commit:
   * a terminal sale reaching its terminal (PENDING → PROCESSING), or ending from the terminal side
   * (abort, expiry, a lost tap). Conditional on the state it was read in; when it ends the
   * transaction, its declared effects, final event and callback follow in the same commit, as for
   * an answer. `tx`: its id and the state it was read (or is known to be) in. Returns the
   * transaction as moved, or null when it was no longer in that state.
   */
  async moveInCommit(
    repos: R,
    tx: Pick<Transaction, 'id' | 'state'>,
    event: TransactionEvent,
    errorCode: string | null,
    now: string,
  ): Promise<Transaction | null> {
    const next = nextTransactionState(tx.state, event);
    if (!next) throw new Conflict(`transaction ${tx.id}: no transition ${event} from ${tx.state}`);
    const moved = await repos.transactions.move(tx.id, [tx.state], {
      state: next,
      errorCode,
      updatedAt: now,
      finalizedAt: isFinal(next) ? now : null,
    });
    if (moved && isFinal(next)) await this.finalizedInCommit(repos, moved);
    return moved;
  }

  /**
   * Inside the commit of a flow that made `transaction` final itself (abort, expiry): its declared
   * effects, its final event and its callback, as for an acquirer's answer.
   */
  async finalizedInCommit(repos: R, transaction: Transaction): Promise<void> {
    const after = await this.applyEffects(repos, transaction);
    const event = finalEvent(after);
    if (event) await repos.events.append(after.accountId, event.name, event.payload);
    if (after.notificationUrl && isFinal(after.state)) await this.deps.callbacks.scheduleInCommit(repos, after);
  }

  // --- lifecycle operations -------------------------------------------------------------------

  /**
   * Step 1 for operations on an existing transaction: in one commit, `decide` reserves (reserve,
   * reserveRest) and names the operations, which are recorded with their drive jobs (the safety
   * net of the synchronous drive that follows); or it answers a refusal and nothing is recorded.
   */
  async record<T>(
    decide: (repos: R, now: string) => Promise<{ operations: Operation[] } | { refusal: T }>,
  ): Promise<{ operations: Operation[] } | { refusal: T }> {
    const now = this.deps.clock.nowIso();
    return this.deps.transaction(async (repos) => {
      const decided = await decide(repos, now);
      if ('operations' in decided) await this.insertOperations(repos, decided.operations, this.deps.clock.now() + SYNC_SAFETY_NET_MS, 2);
      return decided;
    });
  }

  /** Reserves `amount` for an operation of `type` on a SUCCESS transaction: the transaction as reserved, or null when it does not fit (nothing changed). */
  reserve(repos: R, transactionId: string, type: OperationType, amount: number, now: string): Promise<Transaction | null> {
    return repos.transactions.reserve(transactionId, ['SUCCESS'], { updatedAt: now }, reservationDelta(type, amount));
  }

  /**
   * reserve, in record's `decide`, on `tx` as last read: the transaction as reserved, or null when
   * it does not fit (nothing changed).
   */
  reserveFor(repos: R, tx: Transaction, type: OperationType, amount: number, now: string): Promise<Transaction | null> {
    return repos.transactions.reserve(tx.id, ['SUCCESS'], { updatedAt: now }, reservationDelta(type, amount), tx);
  }

  /** Reserves for a void everything of the authorization not captured, voided or reserved; returns the amount (0: nothing left). */
  async reserveRest(repos: R, transactionId: string, now: string): Promise<number> {
    // Read, then reserve exactly that much conditionally; a concurrent reservation in between makes
    // the update miss, and the next read sees it (PostgreSQL READ COMMITTED reads the latest commit).
    for (let i = 0; i < RESERVE_REST_TRIES; i++) {
      const a = await repos.transactions.reservationAmounts(transactionId);
      if (!a) return 0;
      const rest = a.authorized - a.captured - a.voided - a.pending;
      if (rest <= 0) return 0;
      if (await this.reserve(repos, transactionId, 'VOID', rest, now)) return rest;
    }
    return 0;
  }

  /** A PROCESSING operation of `tx` (not yet recorded: pass it to record's answer). */
  newOperation(
    tx: Pick<Transaction, 'id' | 'accountId' | 'pointOfSaleId'>,
    type: OperationType,
    amount: number,
    options: { at: string; referenceOperationId?: string | null; idempotencyKey?: string | null; chain?: OperationChain | null },
  ): Operation {
    return {
      id: newId(),
      accountId: tx.accountId,
      transactionId: tx.id,
      pointOfSaleId: tx.pointOfSaleId,
      type,
      state: 'PROCESSING',
      amount,
      referenceOperationId: options.referenceOperationId ?? null,
      errorCode: null,
      externalStatusCodes: null,
      acquirerReference: null,
      idempotencyKey: options.idempotencyKey ?? null,
      chain: options.chain ?? null,
      createdAt: options.at,
      finalizedAt: null,
    };
  }

  /**
   * Steps 2 and 3 for a recorded operation, then whatever its answer started; answers for the
   * operation itself. `known`: what findForDrive would read now, when the flow has it all (not read).
   */
  async drive(operationId: string, known?: DriveRecord): Promise<DriveResult> {
    return (await this.driveChain(operationId, 1, undefined, undefined, known)).first;
  }

  /** Job definition of `payment.drive`, the one job of acquirer calls (register in services.ts). */
  driveJob(): JobDefinition<DriveJobPayload> {
    return defineJob(DRIVE_JOB, async (payload, ctx) => {
      const attempt = (payload.attempt ?? 2) + ctx.attempt - 1;
      // Handed over in the commit that created the operation: what that commit wrote (NewJob.known).
      const { first } = await this.driveChain(payload.operationId, attempt, undefined, ctx, ctx.job.known);
      // In doubt: settled in the commit that said so; an operator resolves it, nobody asks again.
      if (first.outcome === 'unknown' && !first.inDoubt) {
        throw new RetryLater(
          `operation ${payload.operationId}: the acquirer has no final answer yet; asking again`,
          first.retryInMs ?? acquirerRetryDelay(attempt),
        );
      }
    });
  }

  // ---------------------------------------------------------------------------------------------

  /** Operations (with their new transactions) and their drive jobs, one write (`attempt`: the acquirer attempt of the job's first run). */
  /** `known`: per operation, what its drive would read first (NewJob.known), when the flow has it all. */
  private async insertOperations(
    repos: R,
    operations: Operation[],
    runAt: number,
    attempt: number,
    transactions: NewTransaction[] = [],
    known: Array<DriveRecord | null> = [],
  ): Promise<void> {
    await repos.paymentRecords.record(
      transactions,
      operations,
      operations.map((op, i) => driveJob(op, attempt, runAt, known[i])),
    );
  }

  /**
   * The rows of a new payment; `committed`: its transaction as the store will hold it once committed
   * — the row itself, its amounts written as the zeros the columns default to (no copy per payment).
   */
  private build(
    r: PaymentRequest<R>,
    state: 'PENDING' | 'PROCESSING',
    route: AcquirerRoute | null,
    now = this.deps.clock.nowIso(),
  ): { transaction: NewTransaction; committed: Transaction; operation: Operation; request: PaymentRequest<R> } {
    const pm = r.paymentMethod;
    const transaction: Transaction = {
      id: (this.deps.newTransactionId ?? newTransactionId)(),
      accountId: r.accountId,
      pointOfSaleId: r.pointOfSaleId,
      terminalId: r.terminalId ?? null,
      sessionId: r.sessionId ?? null,
      subscriptionId: r.subscriptionId ?? null,
      billingAgreementChargeId: r.billingAgreementChargeId ?? null,
      paymentMethodId: pm?.id ?? null,
      paymentMethodType: pm?.type ?? null,
      paymentMethodSubType: pm?.subType ?? null,
      paymentMethodExpiry: pm?.expiry ?? null,
      paymentMethodDisplayText: pm?.displayText ?? null,
      paymentMethodHolderName: pm?.holderName ?? null,
      customerId: r.customerId ?? null,
      type: r.type,
      flow: r.flow,
      state,
      errorCode: null,
      externalStatusCodes: null,
      // Never null (INTERFACE §11.1): SKIP where no SCA is tried, OFF where nothing is captured at once.
      scaMode: r.scaMode ?? 'SKIP',
      amount: r.amount,
      fee: 0,
      currency: r.currency,
      instantCapture: r.instantCapture ?? 'OFF',
      notificationUrl: r.notificationUrl ?? null,
      reference: r.reference ?? null,
      textOnStatement: r.textOnStatement ?? null,
      descriptor: r.descriptor ?? null,
      exemptions: r.exemptions ?? null,
      attributes: r.attributes ?? null,
      clientIp: r.clientIp ?? null,
      clientCountry: r.clientCountry ?? null,
      acquirer: route?.acquirer.name ?? NO_ACQUIRER,
      acquirerReference: null,
      sca: null,
      idempotencyKey: r.effect?.key ?? null,
      effects: r.effects ?? null,
      acquirerAgreementId: route?.agreementId ?? null,
      createdAt: now,
      updatedAt: now,
      finalizedAt: null,
      authorizedAmount: 0,
      capturedAmount: 0,
      refundedAmount: 0,
      voidedAmount: 0,
      paidOutAmount: 0,
      pendingAmount: 0,
    };
    if (transaction.effects && !this.effects.has(transaction.effects)) throw new Error(`effects ${transaction.effects} are not declared`);
    return { transaction, committed: transaction, operation: this.newOperation(transaction, r.operation, r.amount, { at: now }), request: r };
  }

  private async reload(accountId: string, id: string): Promise<Transaction> {
    const tx = await this.deps.transactions.findById(accountId, id);
    if (!tx) throw new Error(`transaction ${id} vanished`);
    return tx;
  }

  /**
   * Drives an operation and then whatever its answer started (instant capture, void), inline;
   * `first` is the operation's own result, `latest` the transaction as the last answer left it.
   */
  private async driveChain(
    operationId: string,
    attempt: number,
    given?: GivenNow,
    job?: JobContext,
    known?: DriveRecord,
  ): Promise<{ first: DriveResult; latest: Transaction | null }> {
    let step = await this.driveOne(operationId, attempt, given, job, known);
    const first = step.result;
    let latest = first.outcome === 'answered' ? first.transaction : null;
    while (step.next) {
      step = await this.driveOne(step.next, 1);
      if (step.result.outcome === 'answered') latest = step.result.transaction ?? latest;
    }
    return { first, latest };
  }

  private async driveOne(
    operationId: string,
    attempt: number,
    givenNow?: GivenNow,
    job?: JobContext,
    known?: DriveRecord,
  ): Promise<{ result: DriveResult; next: string | null }> {
    const found = known ?? (await this.deps.transactions.findForDrive(operationId));
    if (!found) return { result: { outcome: 'missing' }, next: null };
    let { transaction: tx } = found;
    const { operation: op } = found;
    if (op.state !== 'PROCESSING') return { result: { outcome: 'answered', operation: op, transaction: null }, next: null };
    // PENDING → PROCESSING (dispatch) is not a commit of its own: the answer's commit makes both
    // moves, so a payment costs one write less; until then the transaction reads PENDING.
    if (tx.state === 'PENDING') tx = { ...tx, state: nextTransactionState('PENDING', 'dispatch') ?? 'PROCESSING' };
    const route = await this.deps.routing.routeOf(tx);
    // A job does not wait in a saturated connector's line: it gives its runner slot back (nothing happened yet).
    const leave = job && route ? this.admit(route.acquirer, op.id) : null;
    const call = ACQUIRER_CALL[op.type];
    const given = givenNow?.instrument ?? found.paymentMethod;
    const method = found.paymentMethod?.paymentMethod ?? null;
    const sameAccount = route && method?.series ? await this.deps.routing.sameAccount(method.series.agreementId, route) : false;
    const series = route ? seriesFor(route, tx, op, method, givenNow?.storesCard ?? null, sameAccount) : null;
    // One request per series on the wire: it names the latest authorization, read when claimed.
    const claimed = method && series !== 'missing' && series?.role === 'subsequent' ? { paymentMethodId: method.id } : undefined;
    let sent: Sent;
    try {
      sent = !route
        ? NO_AGREEMENT
        : series === 'missing'
          ? NO_SERIES
          : op.type === 'VOID' && tx.capturedAmount > 0 && !route.acquirer.voidsAfterCapture
            ? RELEASED_IN_BOOKS
            : await this.atMostOnce.send(
                route,
                call,
                tx,
                op,
                (reference) =>
                  this.call(
                    route,
                    tx,
                    op,
                    attempt,
                    given,
                    series?.role === 'subsequent' && reference ? { ...series, previousId: reference } : series,
                    givenNow?.threeDS?.authentication ?? null,
                  ),
                claimed,
              );
    } finally {
      leave?.();
    }
    if (sent.outcome === 'pending' || sent.outcome === 'not_sent') {
      return { result: { outcome: 'unknown', pending: sent.outcome === 'pending', operation: op }, next: null };
    }
    // A job whose card's series is on the wire comes back without spending an attempt: a card's MITs go one by one.
    if (sent.outcome === 'wait' && sent.seriesHeld && job) {
      throw new Deferred(`another payment of the card of operation ${op.id} is on the wire; it comes back`, sent.untilMs - this.deps.clock.now());
    }
    if (sent.outcome === 'wait') {
      return { result: { outcome: 'unknown', pending: false, operation: op, retryInMs: Math.max(0, sent.untilMs - this.deps.clock.now()) }, next: null };
    }
    // A repeatable call in doubt is asked again (the simulator's timeout card); any other is never sent again.
    if (sent.outcome === 'in_doubt' && route?.acquirer.isRepeatable(call)) {
      return { result: { outcome: 'unknown', pending: false, operation: op }, next: null };
    }
    const read = knownOf(found, tx);
    if (sent.outcome === 'in_doubt' && !(op.type === 'AUTHORIZATION' || op.type === 'SALE')) {
      return { result: await this.holdInDoubt(tx, op, sent, job ?? null), next: null };
    }
    const answer: Answer = sent.outcome === 'in_doubt' ? authorizationInDoubt(sent) : withThreeDS(sent, givenNow?.threeDS);
    const inDoubt = sent.outcome === 'in_doubt' ? sent : null;
    const nextSeries =
      answer.outcome === 'approved' && route && series !== 'missing' ? seriesAfterApproval(series, method, route, answer.acquirerReference) : null;
    const blocked = answer.outcome === 'declined' && answer.errorCode === 'CARD_BLOCKED' && tx.paymentMethodId !== null;
    const alsoInCommit = async (repos: R) => {
      if (inDoubt) await this.failedInDoubt(repos, tx, op, inDoubt);
      if (nextSeries && method) await repos.paymentMethods.recordSeries(tx.accountId, method.id, nextSeries, claimed ? op.id : undefined);
      else if (claimed) await repos.paymentMethods.releaseSeries(tx.accountId, claimed.paymentMethodId, op.id);
      if (blocked) await this.deps.cardBlocked?.(repos, tx);
    };
    try {
      const applied = await this.apply(tx, op, answer, job ?? null, read, inDoubt || nextSeries || blocked || claimed ? alsoInCommit : undefined);
      const message = answer.outcome === 'declined' ? answer.message : undefined;
      return {
        result: { outcome: 'answered', operation: applied.operation, transaction: applied.transaction, ...(message ? { message } : {}) },
        next: applied.follow?.id ?? null,
      };
    } catch (err) {
      if (!(err instanceof Conflict)) throw err;
      // Another process applied an answer first: report what it recorded.
      const again = await this.deps.transactions.findForDrive(operationId);
      return { result: again ? { outcome: 'answered', operation: again.operation, transaction: again.transaction } : { outcome: 'missing' }, next: null };
    }
  }

  /**
   * A place for a job's call in `acquirer`'s capacity, taken in this turn (so a burst of jobs cannot
   * all pass the check before any of them is in the connector's line); its release. Deferred when
   * the connector is saturated or its capacity is taken by this process's jobs: the job comes back
   * later and its runner slot serves other merchants meanwhile.
   */
  private admit(acquirer: Acquirer, operationId: string): (() => void) | null {
    if (acquirer.capacity === undefined && !acquirer.busy) return null;
    const taken = this.jobCalls.get(acquirer) ?? 0;
    if (acquirer.busy?.() || (acquirer.capacity !== undefined && taken >= acquirer.capacity)) {
      throw new Deferred(`the ${acquirer.name} connector is saturated; operation ${operationId} comes back`, BUSY_DEFER_MS);
    }
    this.jobCalls.set(acquirer, taken + 1);
    return () => this.jobCalls.set(acquirer, (this.jobCalls.get(acquirer) ?? 1) - 1);
  }

  /**
   * A capture, refund or payout (any operation but an authorization) whose outcome is in doubt: it
   * stays PROCESSING with its reservation, marked in doubt, and its drive ends in the same commit —
   * nobody sends it again; an operator resolves it (resolveInDoubt).
   */
  private async holdInDoubt(
    tx: Transaction,
    op: Operation,
    doubt: Extract<AcquirerResult, { outcome: 'in_doubt' }>,
    job: JobContext | null,
  ): Promise<DriveResult> {
    const nowMs = this.deps.clock.now();
    const now = new Date(nowMs).toISOString();
    await this.deps.transaction(async (repos) => {
      await repos.acquirerRequests.markInDoubt(op.id, doubt.reason, doubt.acquirerReference, now);
      // A payout's first answer would have moved it PENDING → PROCESSING (dispatch): it was sent.
      if (isPrimary(op.type)) await repos.transactions.move(tx.id, ['PENDING'], { state: 'PROCESSING', updatedAt: now });
      if (job) await job.settleIn(repos.jobs, { done: true });
      else await repos.jobs.cancelQueued(driveJobKey(op.id), nowMs);
    });
    this.deps.events?.logEvent('payment.in_doubt', { operationId: op.id, transactionId: op.transactionId, type: op.type, reason: doubt.reason });
    return { outcome: 'unknown', pending: false, operation: op, inDoubt: true };
  }

  /**
   * In the commit that fails an authorization in doubt: its request recorded in doubt and settled
   * as failed by rule (§12.4), and, when the acquirer named an id, the job that voids it.
   */
  private async failedInDoubt(repos: R, tx: Transaction, op: Operation, doubt: Extract<AcquirerResult, { outcome: 'in_doubt' }>): Promise<void> {
    const now = this.deps.clock.nowIso();
    await repos.acquirerRequests.markInDoubt(op.id, doubt.reason, doubt.acquirerReference, now);
    await repos.acquirerRequests.markResolved(op.id, 'FAILED', now);
    if (doubt.acquirerReference) {
      await repos.jobs.enqueue(
        newJob(RELEASE_JOB, { operationId: op.id, authorizationReference: doubt.acquirerReference }, { dedupeKey: `${RELEASE_JOB}:${op.id}` }),
      );
    }
  }

  /**
   * The operator's word on an operation in doubt (INTERFACE §12.4), after checking with the
   * acquirer: applied as the acquirer's answer would have been — the final state, its effects,
   * events and callback in one commit.
   */
  async resolveInDoubt(operationId: string, resolution: InDoubtResolution): Promise<DriveResult> {
    const request = await this.deps.acquirerRequests.find(operationId);
    const found = await this.deps.transactions.findForDrive(operationId);
    if (!found || !request?.inDoubtAt || request.resolvedAt || found.operation.state !== 'PROCESSING') return { outcome: 'missing' };
    const { transaction: tx, operation: op } = found;
    const answer: Answer =
      resolution === 'SUCCEEDED'
        ? { outcome: 'approved', acquirerReference: request.acquirerReference ?? '', externalStatusCodes: noExternalCodes() }
        : {
            outcome: 'declined',
            errorCode: 'ACQUIRER_TIMEOUT',
            message: 'The acquirer never answered; an operator found that it did not happen.',
            externalStatusCodes: noExternalCodes(),
          };
    const known = knownOf(found, tx);
    try {
      const applied = await this.apply(tx, op, answer, null, known, async (repos) => {
        if (!(await repos.acquirerRequests.markResolved(operationId, resolution, this.deps.clock.nowIso())))
          throw new Conflict(`operation ${operationId} was resolved meanwhile`);
      });
      return { outcome: 'answered', operation: applied.operation, transaction: applied.transaction };
    } catch (err) {
      if (!(err instanceof Conflict)) throw err;
      return { outcome: 'missing' };
    }
  }

  /** Whether the acquirer of `tx` can void part of its authorization (else a void releases all that is left). */
  async partialVoids(tx: Transaction): Promise<boolean> {
    return (await this.deps.routing.routeOf(tx))?.acquirer.partialVoids ?? true;
  }

  /** Requests in doubt awaiting an operator (oldest first), of one account when given. */
  listInDoubt(limit: number, accountId?: string) {
    return this.deps.acquirerRequests.listInDoubt(limit, accountId);
  }

  /** Job definition of the void of an authorization in doubt that the acquirer named (register in services.ts). */
  releaseJob(): JobDefinition<PayloadOf<typeof RELEASE_JOB>> {
    return defineJob(RELEASE_JOB, async (payload, ctx) => {
      const found = await this.deps.transactions.findForDrive(payload.operationId);
      if (!found) return;
      const { transaction: tx, operation: op } = found;
      const route = await this.deps.routing.routeOf(tx);
      if (!route) return;
      let result: AcquirerResult;
      try {
        result = await route.acquirer.void({
          transactionId: tx.id,
          operationId: op.id,
          attempt: ctx.attempt,
          amount: op.amount,
          currency: tx.currency,
          instrument: walletOf(tx),
          authorizationReference: payload.authorizationReference,
          agreement: route.agreement,
          textOnStatement: null,
        });
      } catch {
        result = { outcome: 'in_doubt', reason: 'the connector failed', acquirerReference: null };
      }
      if (result.outcome === 'not_sent' || result.outcome === 'in_doubt' || result.outcome === 'pending') {
        throw new RetryLater(
          `authorization ${payload.authorizationReference} of operation ${op.id}: its void has no answer yet`,
          acquirerRetryDelay(ctx.attempt),
        );
      }
      this.deps.events?.logEvent('payment.in_doubt_released', {
        operationId: op.id,
        transactionId: tx.id,
        outcome: result.outcome,
        acquirerCode: result.externalStatusCodes.acquirer,
      });
    });
  }

  /**
   * The connector's call for `op`. `given`: the instrument a synchronous flow opened already, or the
   * stored payment method the drive read. A connector that throws leaves the outcome in doubt.
   */
  private async call(
    route: AcquirerRoute,
    tx: Transaction,
    op: Operation,
    attempt: number,
    given: Instrument | StoredMethod | null,
    series: Series | null,
    threeDSecure: ThreeDSAuthentication | null = null,
  ): Promise<AcquirerResult> {
    const acquirer = route.acquirer;
    try {
      const instrument = given === null ? walletOf(tx) : 'kind' in given ? given : this.deps.openInstrument(given);
      // Whole literals, not a shared base spread and added to (docs/object-shapes.md).
      if (op.type === 'AUTHORIZATION' || op.type === 'SALE') {
        return await acquirer.authorize({
          transactionId: tx.id,
          attempt,
          amount: op.amount,
          currency: tx.currency,
          instrument,
          initiator: INITIATOR[tx.flow],
          scaMode: tx.scaMode,
          capture: op.type === 'SALE',
          agreement: route.agreement,
          textOnStatement: tx.textOnStatement,
          clientIp: tx.clientIp,
          series,
          threeDSecure,
        });
      }
      return await acquirer[ACQUIRER_CALL[op.type]]({
        transactionId: tx.id,
        attempt,
        amount: op.amount,
        currency: tx.currency,
        instrument,
        operationId: op.id,
        authorizationReference: op.type === 'PAYOUT' ? null : tx.acquirerReference,
        agreement: route.agreement,
        textOnStatement: tx.textOnStatement,
      });
    } catch {
      // The request may have gone out: in doubt, never a decline (asked again only where repeatable).
      return { outcome: 'in_doubt', reason: 'the connector failed before it had an answer', acquirerReference: null };
    }
  }

  /**
   * Step 3, one commit: the operation's answer, the transaction's state and aggregates, the
   * follow-up operation with its reservation, the declared effects, events and callback, and the
   * operation's drive job — completed when it is the job running this (`job`), else its queued
   * safety net cancelled.
   */
  private async apply(
    tx: Transaction,
    op: Operation,
    result: Answer,
    job: JobContext | null,
    read: KnownToCallback,
    alsoInCommit?: (repos: R) => Promise<void>,
  ): Promise<{ operation: Operation; transaction: Transaction; follow: Operation | null; becameFinal: boolean }> {
    const nowMs = this.deps.clock.now();
    const now = new Date(nowMs).toISOString();
    const approved = result.outcome === 'approved';
    const state = nextOperationState(op.state, approved ? 'approve' : 'decline');
    if (!state) throw new Conflict(`operation ${op.id}: no transition from ${op.state}`);
    const answered: Operation = {
      ...op,
      state,
      errorCode: result.outcome === 'declined' ? result.errorCode : null,
      externalStatusCodes: result.externalStatusCodes,
      acquirerReference: result.outcome === 'approved' ? result.acquirerReference : null,
      finalizedAt: now,
    };
    const follow = followUpOf(tx, op, approved);
    const answerIn = async (repos: R) => {
      let next: Operation | null = null;
      let txState: TransactionState | null = null;
      let change: { from: TransactionState[]; patch: TransactionResultPatch; delta: AggregateDelta };
      if (isPrimary(op.type)) {
        txState = nextTransactionState(tx.state, approved ? 'approve' : 'decline');
        if (!txState) throw new Conflict(`transaction ${tx.id} cannot take an answer in state ${tx.state}`);
        // An instant capture is recorded with this answer and reserves its amount in the same update.
        if (follow?.type === 'CAPTURE') next = this.newOperation(tx, 'CAPTURE', follow.amount, { at: now, referenceOperationId: op.id, chain: follow.chain });
        const patch = {
          state: txState,
          errorCode: answered.errorCode,
          externalStatusCodes: result.externalStatusCodes,
          acquirerReference: answered.acquirerReference,
          sca: result.sca ?? null,
          finalizedAt: isFinal(txState) ? now : null,
          updatedAt: now,
        };
        change = {
          from: ['PENDING', 'PROCESSING'],
          patch,
          delta: combined(settlementDelta(op.type, op.amount, approved), next ? reservationDelta('CAPTURE', next.amount) : {}),
        };
      } else {
        change = { from: ['SUCCESS'], patch: { updatedAt: now }, delta: settlementDelta(op.type, op.amount, approved) };
      }
      const operationAnswer = {
        id: op.id,
        patch: {
          state,
          errorCode: answered.errorCode,
          externalStatusCodes: answered.externalStatusCodes,
          acquirerReference: answered.acquirerReference,
          finalizedAt: now,
        },
      };
      // The operation's answer and the transaction's, both conditional (either one missing rolls the
      // commit back), applied to `tx` as read: the row comes from the update, not read again.
      const applied = await repos.transactions.applyAnswer(operationAnswer, { id: tx.id, ...change }, tx);
      if (!applied.finished) throw new Conflict(`operation ${op.id} was already answered`);
      if (!applied.transaction) throw new Error(`transaction ${tx.id}: the answer to ${op.type} ${op.id} does not fit its aggregates`);
      const updated = applied.transaction;
      let after = updated;
      const becameFinal = txState !== null && isFinal(txState);
      if (txState === null && follow?.type === 'VOID') {
        const rest = await this.reserveRest(repos, tx.id, now);
        if (rest > 0) {
          next = this.newOperation(tx, 'VOID', rest, { at: now, referenceOperationId: op.referenceOperationId, chain: follow.chain });
          after = { ...after, pendingAmount: after.pendingAmount + rest };
        }
      }
      if (next) await this.insertOperations(repos, [next], nowMs + SYNC_SAFETY_NET_MS, 2);

      if (becameFinal) after = await this.applyEffects(repos, after);
      await alsoInCommit?.(repos);
      for (const event of eventsOf(after, answered, becameFinal)) await repos.events.append(after.accountId, event.name, event.payload);
      // A transaction's first answer knows all its operations: the primary one, nothing else yet.
      const operations = isPrimary(op.type) && !next ? [answered] : undefined;
      const callback = callbackDue(after, answered, becameFinal, next !== null)
        ? await this.deps.callbacks.writeInCommit(
            repos,
            after,
            {
              paymentMethod: read.paymentMethod,
              webhookAuthenticationSealed: read.webhookAuthenticationSealed,
              subscription: read.subscription,
              operations: operations ?? read.operations,
            },
            Date.parse(op.createdAt),
            becameFinal,
          )
        : null;
      // The drive job's row becomes the callback's job (one write, one row fewer) when the callback
      // is of the state this answer entered: no other job of it can exist, and the answer is applied once.
      const continued = job && callback && becameFinal ? callback : null;
      if (job) await job.settleIn(repos.jobs, continued ? { done: true, continueAs: continued } : { done: true });
      else await repos.jobs.cancelQueued(driveJobKey(op.id), nowMs);
      if (callback && !continued) await repos.jobs.enqueue(callback);
      return { operation: answered, transaction: after, follow: next, becameFinal };
    };
    // Applied by its job, nobody waits for this commit but the callback: it may share the next one.
    const applied = await this.deps.transaction(answerIn, job ? 'background-answer' : 'rerunnable');
    this.deps.events?.logEvent('payment.answered', answeredEvent(applied.transaction, applied.operation, applied.follow));
    if (applied.becameFinal) for (const observe of this.observers) observe(applied.transaction);
    return applied;
  }

  /** The effects the transaction's flow declared, in the commit that made it final. */
  private async applyEffects(repos: R, transaction: Transaction): Promise<Transaction> {
    if (!transaction.effects) return transaction;
    const effect = this.effects.get(transaction.effects);
    if (!effect) throw new Error(`payment engine: no effects declared for ${transaction.effects}`);
    return (await effect(repos, transaction)) ?? transaction;
  }
}

/** A freshly inserted transaction as the store returns it: no money has moved yet. */
export function driveJob(op: Pick<Operation, 'id'>, attempt: number, runAt: number, known?: DriveRecord | null) {
  return newJob(DRIVE_JOB, { operationId: op.id, attempt }, { runAt, dedupeKey: driveJobKey(op.id), ...(known ? { known } : {}) });
}

/** What findForDrive would read for a transaction (as committed) and operation just created by `request` (null: the flow did not give it all). */
function driveRecordOf<R extends PipelineRepos>(request: PaymentRequest<R>, transaction: Transaction, operation: Operation): DriveRecord | null {
  const read = request.driveRead;
  if (!read) return null;
  return {
    transaction,
    operation,
    paymentMethod: request.paymentMethod ? { paymentMethod: request.paymentMethod, panSealed: read.panSealed } : null,
    webhookAuthenticationSealed: read.webhookAuthenticationSealed,
    subscription: read.subscription,
  };
}

const driveJobKey = (operationId: string) => `${DRIVE_JOB}:${operationId}`;

/**
 * The one callback job of a transaction's final state (dedupe: never two for the same state), for its delivery row.
 * `queuedAt` (service ms): where in the queue it goes — the place of the operation whose answer made it due, so
 * that under a backlog a payment's callback goes ahead of the payments accepted after it (finish what is started).
 */
export function callbackJob(
  tx: Pick<Transaction, 'id' | 'accountId' | 'state'>,
  notificationId: string,
  queuedAt?: number,
  known?: KnownOf<typeof CALLBACK_JOB>,
) {
  const payload: CallbackJobPayload = { accountId: tx.accountId, transactionId: tx.id, event: tx.state, notificationId };
  return newJob(CALLBACK_JOB, payload, {
    dedupeKey: `${CALLBACK_JOB}:${tx.id}:${tx.state}`,
    ...(queuedAt === undefined ? {} : { runAt: queuedAt }),
    ...(known ? { known } : {}),
  });
}

declare module '../../jobs/catalogue.js' {
  interface KnownByKind {
    /** What findForDrive would read: the commit that created the operation wrote it. */
    'payment.drive': DriveRecord;
  }
}

/** An authorization in doubt is never repeated: it fails (INTERFACE §12.4), ACQUIRER_TIMEOUT unless the connector named another code. */
function authorizationInDoubt(doubt: Extract<AcquirerResult, { outcome: 'in_doubt' }>): Answer {
  return {
    outcome: 'declined',
    errorCode: doubt.errorCode ?? 'ACQUIRER_TIMEOUT',
    message: 'The acquirer did not answer; the payment was not made and will not be retried.',
    externalStatusCodes: doubt.externalStatusCodes ?? noExternalCodes(),
  };
}

/** What the drive read that the answer's callback need not read again. */
function knownOf(found: DriveRecord, tx: Transaction): KnownToCallback {
  return {
    paymentMethod: found.paymentMethod?.paymentMethod ?? null,
    webhookAuthenticationSealed: found.webhookAuthenticationSealed,
    // Unless the flow's effects run in the answer's commit (a session may create the
    // subscription there), nothing in that commit writes the subscription: the one read is it.
    subscription: tx.effects ? undefined : found.subscription,
    operations: undefined,
  };
}

/** A stored payment method as the drive read it, with its sealed number. */
type StoredMethod = { paymentMethod: PaymentMethod; panSealed: string | null };

/** The transaction has no stored payment method: the wallet it names. */
function walletOf(tx: Transaction): Instrument {
  return { kind: 'wallet', paymentMethodType: tx.paymentMethodType ?? 'CARD' };
}
