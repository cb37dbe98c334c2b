/**
 * THE payment pipeline: every flow that moves money through the acquirer (MOTO, CIT, MIT,
 * physical SALE, payouts) goes through here, in fixed steps:
 *
 *   1. create  — one commit: the transaction (PENDING or PROCESSING) + its AUTHORIZATION, SALE or
 *                PAYOUT operation (PROCESSING) + a `payment.drive` job (run now for async flows,
 *                later as a crash safety net for sync ones) + the caller's own writes (`inCommit`).
 *   2. call    — the acquirer, outside any DB transaction. A timeout (or a thrown connector error)
 *                is an unknown outcome, never a decline: the record stays PROCESSING and the
 *                drive job asks again with attempt + 1 on a backoff schedule until it answers.
 *   3. apply   — one commit: the operation leaves PROCESSING (`where state = 'PROCESSING'`, so an
 *                answer is applied once), the transaction moves through TRANSACTION_TRANSITIONS and
 *                its aggregate columns, result listeners write their own effects (sessions,
 *                charges, events), and the callback job is enqueued once the transaction is final
 *                with nothing left in flight and has a notificationUrl (dedupe: transaction + state).
 *
 * instantCapture VOID / NO_VOID: an approved AUTHORIZATION commits together with a CAPTURE of the
 * full amount in PROCESSING, which is then driven the same way; when that capture is declined
 * and the mode is VOID, a VOID of the authorization follows. The callback waits for the chain.
 *
 * Use:
 *   authorize(request)      synchronous (MOTO, payout-sync, CIT payment window): returns the
 *                           transaction after the answer (still PROCESSING after a timeout).
 *   submit(request)         asynchronous (MIT, payout): returns the PENDING transaction at once.
 *   submitMany(requests)    asynchronous, one commit for all (MIT batch).
 *   charge(tx, {...})       an existing PENDING/PROCESSING transaction whose card arrived later
 *                           (terminal tap): attaches the payment method, adds the operation, drives it.
 *   finalizedInCommit(repos, tx)  for flows that end a transaction themselves (abort, expiry):
 *                           call inside that commit to get the callback and the listeners.
 *   onResult(listener)      composition-time hook run inside every apply commit.
 *   driveJob()              the job definition to register (services.ts).
 */
import type { Clock } from '../../clock.js';
import type { Acquirer, AcquirerResult, Initiator, Instrument } from '../../connectors/acquirer.js';
import { type JobContext, type JobDefinition, type JobQueue, RetryLater, JOB_LEASE_MS } from '../../jobs/job.js';
import type { Effect } from '../../shared/effect.js';
import { newId, newTransactionId } from '../../shared/ids.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import {
  type InstantCapture,
  isFinal,
  nextTransactionState,
  type Operation,
  type OperationType,
  type Transaction,
  type TransactionFlow,
  type TransactionType,
} from './transaction.js';
import type { AggregateDelta, NewTransaction, TransactionsRepository } from './transactions.repository.js';

export const DRIVE_JOB = 'payment.drive';
export const CALLBACK_JOB = 'callback.deliver';
/** Callbacks: 25 attempts (INTERFACE §8). */
export const CALLBACK_MAX_ATTEMPTS = 25;
/** A sync call normally answers long before this; if the process died meanwhile, the job takes over. */
const SYNC_SAFETY_NET_MS = 5_000;
/** Acquirer re-asks after a timeout: 1 s, 2 s, 4 s, ... capped at 10 min, until it answers. */
export const timeoutRetryDelay = (attempt: number): number => Math.min(600_000, 1000 * 2 ** Math.max(0, attempt - 1));

export interface CallbackJobPayload {
  accountId: string;
  transactionId: string;
  /** The final state reported. */
  event: string;
  /** The delivery row, written with its body in the commit that made the transaction final (absent in jobs queued before that). */
  notificationId?: string;
}

export interface DriveJobPayload {
  accountId: string;
  transactionId: string;
  operationId: string;
  /** Acquirer attempt number of the job's first run. */
  attempt: number;
}

/** The repositories the pipeline's commits need; flows may pass more (see `inCommit`, listeners). */
export interface PipelineRepos {
  transactions: TransactionsRepository;
  jobs: JobQueue;
}

/**
 * Writes a final transaction's callback — the delivery row with its complete body and its job —
 * inside the commit that made it final (src/delivery/callbacks.ts implements it).
 */
export interface CallbackScheduler<R> {
  scheduleInCommit(repos: R, transaction: Transaction): Promise<void>;
}

/** The running drive job: its completion joins the commit that applies its operation's answer. */
interface DrivenBy {
  operationId: string;
  ctx: JobContext;
}

export type PrimaryOperation = 'AUTHORIZATION' | 'SALE' | 'PAYOUT';

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
  /** The idempotent request's effect (one per entry of a batch): its key is stored with the transaction in its create commit. */
  effect?: Effect | null | undefined;
  /** Extra writes of the calling flow, in the create commit (e.g. link a session, a charge). */
  inCommit?: ((repos: R, transaction: NewTransaction) => Promise<void>) | undefined;
}

export interface ResultContext<R> {
  repos: R;
  /** The transaction after the change. */
  transaction: Transaction;
  /** The operation the answer was for (null when a flow ended the transaction itself). */
  operation: Operation | null;
  /** True when the transaction reached a final state in this commit. */
  becameFinal: boolean;
}

/** A listener that changes the transaction row returns the changed transaction: later listeners and the callback see it. */
export type ResultListener<R> = (context: ResultContext<R>) => Promise<Transaction | void>;

export interface AuthorizationDeps<R extends PipelineRepos> {
  transactions: TransactionsRepository;
  transaction<T>(fn: (repos: R) => Promise<T>): Promise<T>;
  jobs: JobQueue;
  acquirer: Acquirer;
  /** Writes a final transaction's callback in the commit that made it final. */
  callbacks: CallbackScheduler<R>;
  /** Opens a stored payment method for an acquirer call (payment-methods' instrumentFor). */
  instrumentFor(accountId: string, paymentMethodId: string): Promise<Instrument>;
  clock: Clock;
}

const INITIATOR: Record<TransactionFlow, Initiator> = { MIT: 'MIT', CIT: 'CIT', MOTO: 'MOTO', SALE: 'TERMINAL', PAYOUT: 'MIT' };

/** Aggregate columns an approved operation moves. */
function deltaFor(type: OperationType, amount: number): AggregateDelta {
  switch (type) {
    case 'AUTHORIZATION':
      return { authorized: amount };
    case 'SALE':
      return { authorized: amount, captured: amount };
    case 'PAYOUT':
      return { paidOut: amount };
    case 'CAPTURE':
      return { captured: amount };
    case 'VOID':
      return { voided: amount };
    default:
      return {};
  }
}

class Conflict extends Error {}

export type DriveOutcome = 'applied' | 'timeout' | 'already-final';

export class AuthorizationService<R extends PipelineRepos = PipelineRepos> {
  private readonly listeners: ResultListener<R>[] = [];

  constructor(private readonly deps: AuthorizationDeps<R>) {}

  onResult(listener: ResultListener<R>): void {
    this.listeners.push(listener);
  }

  /** Synchronous flows: create, call, apply (and any instant capture); returns the transaction now. */
  async authorize(request: PaymentRequest<R>): Promise<Transaction> {
    const recovered = await this.recover(request.accountId, request.effect);
    if (recovered) return recovered;
    const { transaction, operation } = await this.create(request, 'PROCESSING', this.deps.clock.now() + SYNC_SAFETY_NET_MS, 2);
    await this.driveChain(transaction.accountId, transaction.id, operation.id, 1, request.instrument);
    return this.reload(transaction.accountId, transaction.id);
  }

  /** Asynchronous flows: the drive job calls the acquirer; the outcome goes to the callback. */
  async submit(request: PaymentRequest<R>): Promise<Transaction> {
    const [created] = await this.submitMany([request]);
    return created!;
  }

  /** One commit for all; requests whose idempotency key already has a transaction (a retry after a crash) get that one. */
  async submitMany(requests: PaymentRequest<R>[]): Promise<Transaction[]> {
    if (requests.length === 0) return [];
    const now = this.deps.clock.now();
    const existing = await this.existingFor(requests);
    const built = requests.map((r) => (existing.has(r.effect?.key ?? '') ? null : this.build(r, 'PENDING')));
    const fresh = built.flatMap((b, i) => (b ? [{ ...b, request: requests[i]! }] : []));
    if (fresh.length > 0) {
      await this.deps.transaction(async (repos) => {
        await repos.transactions.insert(fresh.map((b) => b.transaction));
        await repos.transactions.insertOperations(fresh.map((b) => b.operation));
        await repos.jobs.enqueueMany(fresh.map((b) => driveJob(b.transaction, b.operation, 1, now)));
        for (const b of fresh) await b.request.inCommit?.(repos, b.transaction);
      });
    }
    // What was just committed, as committed: no read back (a batch of 500 would be 500 reads).
    return requests.map((r, i) => existing.get(r.effect?.key ?? '') ?? asCommitted(built[i]!.transaction));
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
    if (open) await this.driveChain(accountId, found.id, open.id, 1);
    return this.reload(accountId, found.id);
  }

  private async existingFor(requests: PaymentRequest<R>[]): Promise<Map<string, Transaction>> {
    const keys = requests.flatMap((r) => (r.effect?.resumed ? [r.effect.key] : []));
    if (keys.length === 0) return new Map();
    const found = await this.deps.transactions.findByIdempotencyKeys(requests[0]!.accountId, keys);
    return new Map(found.map((tx) => [tx.idempotencyKey!, tx]));
  }

  /**
   * An existing transaction (PENDING or PROCESSING, no operation yet) whose instrument arrived
   * later: attach the payment method, add the operation and drive it synchronously.
   */
  async charge(existing: Transaction, input: { paymentMethod: PaymentMethod; instrument?: Instrument; operation: PrimaryOperation }): Promise<Transaction> {
    const now = this.deps.clock.now();
    const at = new Date(now).toISOString();
    const pm = input.paymentMethod;
    const operation = this.newOperation(existing, input.operation, existing.amount, null, at);
    await this.deps.transaction(async (repos) => {
      const attached = await repos.transactions.applyResult(existing.id, ['PENDING', 'PROCESSING'], {
        state: 'PROCESSING',
        paymentMethodId: pm.id,
        paymentMethodType: pm.type,
        paymentMethodSubType: pm.subType,
        paymentMethodExpiry: pm.expiry,
        paymentMethodDisplayText: pm.displayText,
        paymentMethodHolderName: pm.holderName,
        acquirer: this.deps.acquirer.name,
        updatedAt: at,
      });
      if (!attached) throw new Conflict(`transaction ${existing.id} is no longer open`);
      await repos.transactions.insertOperations([operation]);
      await repos.jobs.enqueue(driveJob(existing, operation, 2, now + SYNC_SAFETY_NET_MS));
    });
    await this.driveChain(existing.accountId, existing.id, operation.id, 1, input.instrument);
    return this.reload(existing.accountId, existing.id);
  }

  /**
   * Inside the commit of a flow that made `transaction` final itself (abort, expiry): enqueues
   * its callback and runs the listeners, as the pipeline does for acquirer answers.
   */
  async finalizedInCommit(repos: R, transaction: Transaction): Promise<void> {
    await this.afterChange(repos, transaction, null, true);
  }

  /** Job definition of `payment.drive` (register in services.ts). */
  driveJob(): JobDefinition<DriveJobPayload> {
    return {
      kind: DRIVE_JOB,
      // Until the acquirer answers: ~7 days at the 10-minute cap.
      maxAttempts: 1000,
      leaseMs: JOB_LEASE_MS,
      backoff: (failures) => Math.min(600_000, 1000 * 2 ** Math.max(0, failures - 1)),
      handle: async (payload, ctx) => {
        const attempt = payload.attempt + ctx.attempt - 1;
        const outcome = await this.driveChain(payload.accountId, payload.transactionId, payload.operationId, attempt, undefined, {
          operationId: payload.operationId,
          ctx,
        });
        if (outcome === 'timeout') throw new RetryLater('acquirer timeout: outcome unknown, asking again', timeoutRetryDelay(attempt));
      },
    };
  }

  // ---------------------------------------------------------------------------------------------

  private async create(request: PaymentRequest<R>, state: 'PENDING' | 'PROCESSING', jobRunAt: number, jobAttempt: number) {
    const built = this.build(request, state);
    await this.deps.transaction(async (repos) => {
      await repos.transactions.insert([built.transaction]);
      await repos.transactions.insertOperations([built.operation]);
      await repos.jobs.enqueue(driveJob(built.transaction, built.operation, jobAttempt, jobRunAt));
      await request.inCommit?.(repos, built.transaction);
    });
    return built;
  }

  private build(r: PaymentRequest<R>, state: 'PENDING' | 'PROCESSING'): { transaction: NewTransaction; operation: Operation } {
    const now = this.deps.clock.nowIso();
    const pm = r.paymentMethod;
    const transaction: NewTransaction = {
      id: newTransactionId(),
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
      scaMode: r.scaMode ?? null,
      amount: r.amount,
      fee: 0,
      currency: r.currency,
      instantCapture: r.instantCapture ?? null,
      notificationUrl: r.notificationUrl ?? null,
      reference: r.reference ?? null,
      textOnStatement: r.textOnStatement ?? null,
      descriptor: r.descriptor ?? null,
      exemptions: r.exemptions ?? null,
      attributes: r.attributes ?? null,
      clientIp: r.clientIp ?? null,
      clientCountry: r.clientCountry ?? null,
      acquirer: this.deps.acquirer.name,
      acquirerReference: null,
      sca: null,
      idempotencyKey: r.effect?.key ?? null,
      createdAt: now,
      updatedAt: now,
      finalizedAt: null,
    };
    return { transaction, operation: this.newOperation(transaction, r.operation, r.amount, null, now) };
  }

  private newOperation(
    tx: Pick<Transaction, 'id' | 'accountId' | 'pointOfSaleId'>,
    type: OperationType,
    amount: number,
    referenceOperationId: string | null,
    at: string,
  ): Operation {
    return {
      id: newId(),
      accountId: tx.accountId,
      transactionId: tx.id,
      pointOfSaleId: tx.pointOfSaleId,
      type,
      state: 'PROCESSING',
      amount,
      referenceOperationId,
      errorCode: null,
      externalStatusCodes: null,
      acquirerReference: null,
      createdAt: at,
      finalizedAt: null,
    };
  }

  private async reload(accountId: string, id: string): Promise<Transaction> {
    const tx = await this.deps.transactions.findById(accountId, id);
    if (!tx) throw new Error(`transaction ${id} vanished`);
    return tx;
  }

  /** Drives an operation and then whatever its answer started (instant capture, void), inline. */
  private async driveChain(
    accountId: string,
    transactionId: string,
    operationId: string,
    attempt: number,
    instrument?: Instrument,
    drivenBy?: DrivenBy,
  ): Promise<DriveOutcome> {
    let next: string | null = operationId;
    let currentAttempt = attempt;
    let outcome: DriveOutcome = 'already-final';
    let firstInstrument = instrument;
    while (next) {
      const step = await this.driveOne(accountId, transactionId, next, currentAttempt, firstInstrument, drivenBy);
      outcome = step.outcome;
      if (outcome === 'timeout') return outcome;
      next = step.next;
      currentAttempt = 1;
      firstInstrument = undefined;
    }
    return outcome;
  }

  private async driveOne(
    accountId: string,
    transactionId: string,
    operationId: string,
    attempt: number,
    instrument?: Instrument,
    drivenBy?: DrivenBy,
  ): Promise<{ outcome: DriveOutcome; next: string | null }> {
    let tx = await this.deps.transactions.findById(accountId, transactionId);
    const op = await this.deps.transactions.findOperation(transactionId, operationId);
    if (!tx || !op || op.state !== 'PROCESSING') return { outcome: 'already-final', next: null };
    // PENDING → PROCESSING (dispatch) is not a commit of its own: the answer's commit makes both
    // moves, so a payment costs one write less; until then the transaction reads PENDING.
    if (tx.state === 'PENDING') tx = { ...tx, state: nextTransactionState('PENDING', 'dispatch') ?? 'PROCESSING' };
    const result = await this.call(tx, op, attempt, instrument);
    if (result.outcome === 'timeout' || result.outcome === 'pending') return { outcome: 'timeout', next: null };
    try {
      const next = await this.apply(tx, op, result, drivenBy?.operationId === op.id ? drivenBy.ctx : null);
      return { outcome: 'applied', next };
    } catch (err) {
      if (err instanceof Conflict) return { outcome: 'already-final', next: null };
      throw err;
    }
  }

  private async call(tx: Transaction, op: Operation, attempt: number, given?: Instrument): Promise<AcquirerResult> {
    const acquirer = this.deps.acquirer;
    try {
      const instrument = given ?? (await this.instrumentOf(tx));
      const base = { transactionId: tx.id, attempt, amount: op.amount, currency: tx.currency, instrument };
      switch (op.type) {
        case 'AUTHORIZATION':
        case 'SALE':
          return await acquirer.authorize({ ...base, initiator: INITIATOR[tx.flow], scaMode: tx.scaMode, capture: op.type === 'SALE' });
        case 'PAYOUT':
          return await acquirer.payout({ ...base, operationId: op.id });
        case 'CAPTURE':
          return await acquirer.capture({ ...base, operationId: op.id });
        case 'VOID':
          return await acquirer.void({ ...base, operationId: op.id });
        default:
          throw new Error(`the pipeline does not drive ${op.type} operations`);
      }
    } catch {
      // A connector failure leaves the outcome unknown: retried like a timeout, never a decline.
      return { outcome: 'timeout' };
    }
  }

  private async instrumentOf(tx: Transaction): Promise<Instrument> {
    if (!tx.paymentMethodId) throw new Error(`transaction ${tx.id} has no payment method`);
    return this.deps.instrumentFor(tx.accountId, tx.paymentMethodId);
  }

  /**
   * One commit: the operation's answer, the transaction's state and aggregates, what follows, and
   * the operation's drive job — completed when it is the job running this (`job`), else its
   * queued safety net cancelled. Returns a follow-up operation id.
   */
  private async apply(
    tx: Transaction,
    op: Operation,
    result: Exclude<AcquirerResult, { outcome: 'timeout' | 'pending' }>,
    job: JobContext | null,
  ): Promise<string | null> {
    const nowMs = this.deps.clock.now();
    const now = new Date(nowMs).toISOString();
    const approved = result.outcome === 'approved';
    const errorCode = result.outcome === 'declined' ? result.errorCode : null;
    const acquirerReference = result.outcome === 'approved' ? result.acquirerReference : null;
    return this.deps.transaction(async (repos) => {
      const finished = await repos.transactions.finishOperation(op.id, {
        state: approved ? 'SUCCESS' : 'FAILED',
        errorCode,
        externalStatusCodes: result.externalStatusCodes,
        acquirerReference,
        finalizedAt: now,
      });
      if (!finished) throw new Conflict(`operation ${op.id} was already answered`);
      if (job) await job.settleIn(repos.jobs, { done: true });
      else await repos.jobs.cancelQueued(driveJobKey(op.id), nowMs);
      const finishedOp: Operation = {
        ...op,
        state: approved ? 'SUCCESS' : 'FAILED',
        errorCode,
        externalStatusCodes: result.externalStatusCodes,
        acquirerReference,
        finalizedAt: now,
      };

      let follow: Operation | null = null;
      let becameFinal = false;
      // The row as this commit leaves it, from the update itself (RETURNING), not read again.
      let after: Transaction | null = null;
      if (op.type === 'AUTHORIZATION' || op.type === 'SALE' || op.type === 'PAYOUT') {
        const state = nextTransactionState(tx.state, approved ? 'approve' : 'decline');
        if (!state) throw new Conflict(`transaction ${tx.id} cannot take an answer in state ${tx.state}`);
        after = await repos.transactions.applyResultReturning(
          tx.id,
          ['PENDING', 'PROCESSING'],
          {
            state,
            errorCode,
            externalStatusCodes: result.externalStatusCodes,
            acquirerReference,
            sca: result.sca ?? null,
            finalizedAt: isFinal(state) ? now : null,
            updatedAt: now,
          },
          approved ? deltaFor(op.type, op.amount) : {},
        );
        if (!after) throw new Conflict(`transaction ${tx.id} changed meanwhile`);
        becameFinal = isFinal(state);
        if (approved && op.type === 'AUTHORIZATION' && (tx.instantCapture === 'VOID' || tx.instantCapture === 'NO_VOID')) {
          follow = this.newOperation(tx, 'CAPTURE', op.amount, op.id, now);
        }
      } else {
        // Instant capture or its void: the transaction stays in its final state, only aggregates move.
        after = approved
          ? await repos.transactions.applyResultReturning(tx.id, [tx.state], { updatedAt: now }, deltaFor(op.type, op.amount))
          : await repos.transactions.findById(tx.accountId, tx.id);
        if (!after) throw new Conflict(`transaction ${tx.id}: ${op.type} of ${op.amount} no longer fits its aggregates`);
        if (!approved && op.type === 'CAPTURE' && tx.instantCapture === 'VOID') {
          const remaining = after.authorizedAmount - after.capturedAmount - after.voidedAmount;
          if (remaining > 0) follow = this.newOperation(tx, 'VOID', remaining, op.referenceOperationId, now);
        }
      }

      if (follow) {
        await repos.transactions.insertOperations([follow]);
        await repos.jobs.enqueue(driveJob(tx, follow, 2, nowMs + SYNC_SAFETY_NET_MS));
      }
      await this.afterChange(repos, after, finishedOp, becameFinal, follow !== null);
      return follow?.id ?? null;
    });
  }

  /** Listeners, then the callback once the transaction is final and nothing of its chain is in flight. */
  private async afterChange(repos: R, transaction: Transaction, operation: Operation | null, becameFinal: boolean, chainPending = false): Promise<void> {
    let current = transaction;
    for (const listener of this.listeners) current = (await listener({ repos, transaction: current, operation, becameFinal })) ?? current;
    if (!chainPending && isFinal(current.state) && current.notificationUrl) {
      await this.deps.callbacks.scheduleInCommit(repos, current);
    }
  }
}

/** A freshly inserted transaction as the store returns it: no money has moved yet. */
function asCommitted(tx: NewTransaction): Transaction {
  return { authorizedAmount: 0, capturedAmount: 0, refundedAmount: 0, voidedAmount: 0, paidOutAmount: 0, pendingAmount: 0, ...tx };
}

export function driveJob(tx: Pick<Transaction, 'id' | 'accountId'>, op: Operation, attempt: number, runAt: number) {
  const payload: DriveJobPayload = { accountId: tx.accountId, transactionId: tx.id, operationId: op.id, attempt };
  return { kind: DRIVE_JOB, payload, runAt, dedupeKey: driveJobKey(op.id), maxAttempts: 1000 };
}

const driveJobKey = (operationId: string) => `${DRIVE_JOB}:${operationId}`;

/** The one callback job of a transaction's final state (dedupe: never two for the same state), for its delivery row. */
export function callbackJob(tx: Pick<Transaction, 'id' | 'accountId' | 'state'>, notificationId: string) {
  const payload: CallbackJobPayload = { accountId: tx.accountId, transactionId: tx.id, event: tx.state, notificationId };
  return { kind: CALLBACK_JOB, payload, dedupeKey: `${CALLBACK_JOB}:${tx.id}:${tx.state}`, maxAttempts: CALLBACK_MAX_ATTEMPTS };
}
