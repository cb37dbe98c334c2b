/**
 * In-person sales: create a sale on a terminal, dispatch it to the device, take the tapped card,
 * abort it, expire it. The only place that decides about sales; routes and jobs call in here.
 *
 * Steps of a paid sale: POST /sale writes the PENDING transaction (claiming the terminal through
 * a unique index) and the dispatch job in one commit → the job moves it to PROCESSING and schedules
 * the expiry → a tap claims WAITING_FOR_CARD → CARD_PRESENTED, stores the card and hands the
 * transaction to the payment pipeline, which calls the acquirer outside any DB transaction and
 * makes it final with its callback. Abort and expiry end it FAILED in one commit with the callback.
 */
import type { Clock } from '../../clock.js';
import type { Instrument } from '../../connectors/acquirer.js';
import { newJob } from '../../jobs/catalogue.js';
import type { JobQueue } from '../../jobs/job.js';
import type { Effect } from '../../shared/effect.js';
import { AppError, EXISTING, FieldErrorCollector, notFound, withNewIdsOnCollision } from '../../shared/errors.js';
import { newTransactionId } from '../../shared/ids.js';
import { iso } from '../../shared/time.js';
import type { CardInput } from '../payment-methods/card.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import { approvedDomainRule, isOnApprovedDomain, type PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Terminal } from '../terminals/terminal.js';
import type { TerminalsRepository } from '../terminals/terminals.repository.js';
import { nextTransactionState, type Transaction, type TransactionEvent, type TransactionType } from '../transactions/transaction.js';
import type { NewTransaction, TransactionsRepository } from '../transactions/transactions.repository.js';
import {
  ABORT_REFUSALS,
  DEFAULT_TERMINAL_TIMEOUT_MS,
  ENDING_ERROR_CODES,
  type SaleEvent,
  type SaleStage,
  saleTransition,
  type TerminalRequest,
  type TerminalSale,
} from './sale.js';
import type { SalesRepository } from './sales.repository.js';

export const SALE_DISPATCH_JOB = 'sales.dispatch';
export const SALE_EXPIRE_JOB = 'sales.expire';

export interface SaleInput {
  terminal?:
    | {
        id?: string | null | undefined;
        suppressAppNotifications?: boolean | undefined;
        switchBackTimeout?: number | null | undefined;
        activityToResume?: string | null | undefined;
        surcharge?: boolean | null | undefined;
        dcc?: boolean | null | undefined;
      }
    | null
    | undefined;
  transaction: {
    pointOfSaleId: string;
    amount: number;
    currency: string;
    type?: 'PAYMENT' | 'PAYOUT' | undefined;
    notificationUrl?: string | null | undefined;
    reference?: string | null | undefined;
    attributes?: Record<string, string> | null | undefined;
    customerId?: string | null | undefined;
  };
}

/** The repositories a sale's commits use. */
export interface SaleRepos {
  sales: SalesRepository;
  transactions: TransactionsRepository;
  jobs: JobQueue;
}

/** The payment engine (PaymentEngine), as terminal sales need it. */
export interface TerminalPayments<R> {
  /**
   * An existing open transaction whose card just arrived: attaches the payment method, persists
   * the operation, calls the acquirer outside any DB transaction, applies the answer and
   * enqueues the callback when final. Returns the transaction afterwards (still PROCESSING when
   * the acquirer's answer is unknown; the pipeline's job keeps asking).
   */
  charge(existing: Transaction, input: { paymentMethod: PaymentMethod; instrument?: Instrument; operation: 'SALE' | 'PAYOUT' }): Promise<Transaction>;
  /** A sale's move without an acquirer (dispatch, abort, expiry, lost tap): the engine is the one writer of a transaction's state. */
  moveInCommit(repos: R, tx: Pick<Transaction, 'id' | 'state'>, event: TransactionEvent, errorCode: string | null, now: string): Promise<Transaction | null>;
}

/** PAYMENT: authorization and capture in one SALE operation; PAYOUT: funds to the presented card. */
export const OPERATION_OF_SALE_TYPE: Record<'PAYMENT' | 'PAYOUT', 'SALE' | 'PAYOUT'> = { PAYMENT: 'SALE', PAYOUT: 'PAYOUT' };

export interface SalesDeps<R extends SaleRepos> {
  transaction<T>(fn: (repos: R) => Promise<T>): Promise<T>;
  sales: SalesRepository;
  transactions: TransactionsRepository;
  terminals: TerminalsRepository;
  pointsOfSale: { get(accountId: string, id: string): Promise<PointOfSale> };
  paymentMethods: {
    validateCard(card: CardInput, prefix: string, errors: FieldErrorCollector): void;
    storeCard(accountId: string, input: { customerId: string | null; card: CardInput }, prefix?: string): Promise<PaymentMethod>;
    /** The card as just presented (with its CVC) for this one acquirer call. */
    cardInstrument(card: CardInput): Instrument;
  };
  payments: TerminalPayments<R>;
  /** The callback URL policy (approved domain; no internal addresses outside the sandbox): throws a 422 on `field`. */
  urlPolicy?: { check(field: string, url: string, domain: string): Promise<void> };
  clock: Clock;
  /** How long a terminal waits for a card (service clock). Default 2 minutes. */
  terminalTimeoutMs?: number;
  /**
   * Abort and tap arriving while the dispatch job is still on its way wait this long (real time)
   * for the sale to reach the terminal before refusing. Default 2 s.
   */
  dispatchGraceMs?: number;
  /** A tap that presented a card but never reached the pipeline (crash) is ended after this long. Default 5 minutes. */
  lostTapAfterMs?: number;
}

/** What the virtual terminal shows. */
export interface TerminalDisplay {
  terminal: Terminal;
  sale: { transaction: Transaction; stage: SaleStage; request: TerminalRequest } | null;
}

/** The terminal request of a sale: the options of `terminal` in POST /sale, defaults filled in (INTERFACE §11.6). */
export function terminalRequest(input: SaleInput): TerminalRequest {
  const t = input.terminal;
  return {
    suppressAppNotifications: t?.suppressAppNotifications ?? false,
    switchBackTimeout: t?.switchBackTimeout ?? null,
    activityToResume: t?.activityToResume ?? null,
    surcharge: t?.surcharge ?? null,
    dcc: t?.dcc ?? null,
  };
}

const POLL_MS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class SalesService<R extends SaleRepos = SaleRepos> {
  private readonly timeoutMs: number;
  private readonly graceMs: number;
  private readonly lostTapMs: number;

  constructor(private readonly deps: SalesDeps<R>) {
    this.timeoutMs = deps.terminalTimeoutMs ?? DEFAULT_TERMINAL_TIMEOUT_MS;
    this.graceMs = deps.dispatchGraceMs ?? 2_000;
    this.lostTapMs = deps.lostTapAfterMs ?? 5 * 60_000;
  }

  /** POST /sale: 422 for a bad request; otherwise the new transaction (FAILED at once on early rejection, with no callback). */
  async create(accountId: string, input: SaleInput, effect: Effect | null = null): Promise<Transaction> {
    const { pointOfSale, terminal } = await this.validate(accountId, input);
    // A retry after a crash: the sale was created already (and may be waiting on its terminal).
    const [existing] = effect?.resumed ? await this.deps.transactions.findByIdempotencyKeys(accountId, [effect.key]) : [];
    if (existing) return existing;
    const now = this.deps.clock.nowIso();
    const id = await withNewIdsOnCollision('transactions', () => this.record(accountId, input, pointOfSale, terminal, now, effect));
    return this.read(accountId, id);
  }

  /** The sale's transaction with a new id, in one commit: queued for its terminal, or rejected at once. Returns its id. */
  private async record(
    accountId: string,
    input: SaleInput,
    pointOfSale: PointOfSale,
    terminal: Terminal | null,
    now: string,
    effect: Effect | null,
  ): Promise<string> {
    const tx = { ...this.newTransaction(accountId, input, pointOfSale, terminal, now), idempotencyKey: effect?.key ?? null };
    if (!terminal) {
      await this.deps.transaction((repos) => repos.sales.insertRejected(this.rejected(tx, 'TERMINAL_NOT_CONFIGURED', now)));
      return tx.id;
    }
    const sale: TerminalSale = {
      transactionId: tx.id,
      accountId,
      terminalId: terminal.id,
      stage: 'QUEUED',
      request: terminalRequest(input),
      dispatchedAt: null,
      expiresAt: null,
      cardPresentedAt: null,
      endedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.transaction(async (repos) => {
      if (await repos.sales.insertIfTerminalFree(tx, sale)) {
        await repos.jobs.enqueue(newJob(SALE_DISPATCH_JOB, { transactionId: tx.id }, { dedupeKey: `${SALE_DISPATCH_JOB}:${tx.id}` }));
      } else {
        await repos.sales.insertRejected(this.rejected(tx, 'TERMINAL_BUSY', now));
      }
    });
    return tx.id;
  }

  /** The dispatch job: the sale reaches its terminal, which now waits for a card until the timeout. */
  async dispatch(transactionId: string): Promise<void> {
    const nowMs = this.deps.clock.now();
    await this.deps.transaction(async (repos) => {
      const sale = await repos.sales.find(transactionId);
      const transition = sale && saleTransition(sale.stage, 'dispatch');
      if (!sale || !transition) return; // already dispatched (job replay)
      const now = iso(nowMs);
      const expiresAtMs = nowMs + this.timeoutMs;
      if (!(await repos.sales.moveStage(transactionId, sale.stage, transition.next, { dispatchedAt: now, expiresAt: iso(expiresAtMs), updatedAt: now })))
        return;
      // A sale not yet dispatched has a PENDING transaction (its stage claim above says so).
      await this.deps.payments.moveInCommit(repos, { id: transactionId, state: 'PENDING' }, transition.transaction!, null, now);
      await repos.jobs.enqueue(newJob(SALE_EXPIRE_JOB, { transactionId }, { runAt: expiresAtMs, dedupeKey: `${SALE_EXPIRE_JOB}:${transactionId}` }));
    });
  }

  /**
   * The expiry job: an untapped sale ends FAILED with EXPIRED. A card presented but never handed
   * to the pipeline (the process died in between) is ended with SYSTEM_ERROR once clearly lost,
   * so that the terminal is not held for ever. Returns when to look again (ms), or null when done.
   */
  async expire(transactionId: string): Promise<number | null> {
    const sale = await this.deps.sales.find(transactionId);
    if (!sale) return null;
    const nowMs = this.deps.clock.now();
    if (sale.stage === 'WAITING_FOR_CARD') {
      const dueMs = sale.expiresAt ? Date.parse(sale.expiresAt) : nowMs;
      if (dueMs > nowMs) return dueMs - nowMs;
      const outcome = await this.end(transactionId, 'expire');
      // Lost the race to a tap: look again in case that tap never reaches the pipeline.
      return outcome === 'CARD_PRESENTED' ? this.lostTapMs : null;
    }
    if (sale.stage === 'CARD_PRESENTED' && sale.cardPresentedAt) {
      if ((await this.deps.transactions.operationsOf(transactionId)).length > 0) return null; // the pipeline owns it (and recovers it)
      const lostAtMs = Date.parse(sale.cardPresentedAt) + this.lostTapMs;
      if (lostAtMs > nowMs) return lostAtMs - nowMs;
      await this.endLostTap(transactionId);
    }
    return null;
  }

  /** POST /transactions/{id}/abort: stops a sale that waits for its card; the sale ends FAILED MANUAL_ABORTED with its callback. */
  async abort(accountId: string, transactionId: string): Promise<void> {
    const tx = await this.deps.transactions.findById(accountId, transactionId);
    if (!tx) throw notFound('transaction');
    if (tx.flow !== 'SALE') throw new AppError('BAD_REQUEST', 'Only a card terminal transaction (a physical sale) can be aborted.');
    let sale = await this.deps.sales.find(transactionId);
    if (!sale) throw new AppError('CONFLICT', `The sale was rejected before it reached a terminal (${tx.errorCode ?? tx.state}); it is final.`);
    if (sale.stage === 'QUEUED') sale = await this.awaitDispatch(sale);
    const refusal = ABORT_REFUSALS[sale.stage];
    if (refusal) throw new AppError('CONFLICT', refusal);
    const outcome = await this.end(transactionId, 'abort');
    if (outcome !== 'ended') throw new AppError('CONFLICT', ABORT_REFUSALS[outcome] ?? 'The sale can no longer be aborted.');
  }

  /**
   * The sandbox device: a customer presents `card` on the terminal. Validates the card (422),
   * claims the waiting sale (409 when none waits), stores the card and pays through the pipeline.
   */
  async tap(terminalId: string, card: CardInput): Promise<Transaction> {
    const terminal = await this.deps.sales.findTerminal(terminalId);
    if (!terminal) throw notFound('terminal');
    const errors = new FieldErrorCollector();
    this.deps.paymentMethods.validateCard(card, 'card', errors);
    errors.throwIfAny();

    let sale = await this.deps.sales.activeOnTerminal(terminalId);
    if (!sale) throw new AppError('CONFLICT', 'No sale is waiting for a card on this terminal.');
    if (sale.stage === 'QUEUED') sale = await this.awaitDispatch(sale);
    if (sale.stage !== 'WAITING_FOR_CARD') {
      throw new AppError('CONFLICT', sale.stage === 'QUEUED' ? 'The sale has not reached the terminal yet.' : 'The terminal is not waiting for a card.');
    }
    const now = this.deps.clock.nowIso();
    const transition = saleTransition(sale.stage, 'tap')!;
    // The claim also requires the sale not to have run out its time, whatever the expiry job's progress.
    const claimed = await this.deps.transaction((repos) =>
      repos.sales.moveStage(sale.transactionId, sale.stage, transition.next, { cardPresentedAt: now, updatedAt: now }, now),
    );
    if (!claimed) throw new AppError('CONFLICT', 'The terminal is no longer waiting for a card (the sale was aborted, expired or already paid).');

    const transaction = await this.read(sale.accountId, sale.transactionId);
    const paymentMethod = await this.deps.paymentMethods.storeCard(sale.accountId, { customerId: transaction.customerId, card }, 'card');
    return this.deps.payments.charge(transaction, {
      paymentMethod,
      instrument: this.deps.paymentMethods.cardInstrument(card),
      operation: OPERATION_OF_SALE_TYPE[transaction.type === 'PAYOUT' ? 'PAYOUT' : 'PAYMENT'],
    });
  }

  /**
   * The TERMINAL_SALE effects (declared with the payment engine), in the commit that makes a
   * sale final: the terminal side is done too — whether the tap's own call or the engine's drive
   * job got the acquirer's answer.
   */
  async saleFinal(repos: R, transaction: Transaction): Promise<void> {
    const transition = saleTransition('CARD_PRESENTED', 'complete')!;
    const now = this.deps.clock.nowIso();
    await repos.sales.moveStage(transaction.id, 'CARD_PRESENTED', transition.next, { endedAt: now, updatedAt: now });
  }

  /** The virtual terminal's view: the terminal and the sale that holds it, if any. */
  async display(terminalId: string): Promise<TerminalDisplay> {
    const terminal = await this.deps.sales.findTerminal(terminalId);
    if (!terminal) throw notFound('terminal');
    const sale = await this.deps.sales.activeOnTerminal(terminalId);
    if (!sale) return { terminal, sale: null };
    const transaction = await this.read(sale.accountId, sale.transactionId);
    return { terminal, sale: { transaction, stage: sale.stage, request: sale.request } };
  }

  private async validate(accountId: string, input: SaleInput): Promise<{ pointOfSale: PointOfSale; terminal: Terminal | null }> {
    const errors = new FieldErrorCollector();
    const pointOfSale = await this.deps.pointsOfSale.get(accountId, input.transaction.pointOfSaleId).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    if (!pointOfSale) {
      errors.add('transaction.pointOfSaleId', EXISTING, 'must be a point of sale of this account');
      errors.throwIfAny();
    }
    const pos = pointOfSale!;
    if (pos.type !== 'PHYSICAL') errors.add('transaction.pointOfSaleId', 'in:PHYSICAL', 'must be a PHYSICAL point of sale');
    const url = input.transaction.notificationUrl;
    if (url != null && !isOnApprovedDomain(url, pos.domain)) {
      errors.add('transaction.notificationUrl', 'url', approvedDomainRule(pos.domain));
    }
    let terminal: Terminal | null = null;
    const terminalId = input.terminal?.id;
    if (terminalId != null) {
      terminal = await this.deps.terminals.findById(accountId, terminalId);
      if (!terminal || terminal.pointOfSaleId !== pos.id) {
        errors.add('terminal.id', EXISTING, 'must be a terminal of the point of sale transaction.pointOfSaleId');
      }
    }
    errors.throwIfAny();
    if (url != null) await this.deps.urlPolicy?.check('transaction.notificationUrl', url, pos.domain);
    // Without terminal.id the fallback terminal takes it; none configured is an early rejection, not a 422.
    terminal ??= await this.deps.terminals.findFallback(pos.id);
    return { pointOfSale: pos, terminal };
  }

  private newTransaction(accountId: string, input: SaleInput, pos: PointOfSale, terminal: Terminal | null, now: string): NewTransaction {
    const t = input.transaction;
    const type: TransactionType = t.type ?? 'PAYMENT';
    return {
      id: newTransactionId(),
      accountId,
      pointOfSaleId: pos.id,
      terminalId: terminal?.id ?? null,
      sessionId: null,
      subscriptionId: null,
      billingAgreementChargeId: null,
      paymentMethodId: null,
      paymentMethodType: null,
      paymentMethodSubType: null,
      paymentMethodExpiry: null,
      paymentMethodDisplayText: null,
      paymentMethodHolderName: null,
      customerId: t.customerId ?? null,
      type,
      flow: 'SALE',
      state: 'PENDING',
      errorCode: null,
      externalStatusCodes: null,
      // Card present: no 3-D Secure, and a SALE captures at once by definition, nothing left
      // authorized when it fails (INTERFACE §11.1).
      scaMode: 'SKIP',
      amount: t.amount,
      fee: 0,
      currency: t.currency,
      instantCapture: 'VOID',
      notificationUrl: t.notificationUrl ?? null,
      reference: t.reference ?? null,
      textOnStatement: null,
      descriptor: pos.descriptor,
      exemptions: null,
      attributes: t.attributes ?? null,
      clientIp: null,
      clientCountry: null,
      acquirer: null,
      acquirerReference: null,
      // The terminal's side of the sale ends in the commit that makes it final (saleFinal).
      effects: 'TERMINAL_SALE',
      createdAt: now,
      updatedAt: now,
      finalizedAt: null,
    };
  }

  private rejected(tx: NewTransaction, errorCode: 'TERMINAL_BUSY' | 'TERMINAL_NOT_CONFIGURED', now: string): NewTransaction {
    return { ...tx, state: nextTransactionState('PENDING', 'reject')!, errorCode, finalizedAt: now };
  }

  private async read(accountId: string, id: string): Promise<Transaction> {
    const tx = await this.deps.transactions.findById(accountId, id);
    if (!tx) throw notFound('transaction');
    return tx;
  }

  /** Waits (bounded) while the dispatch job is on its way; returns the sale as it then is. */
  private async awaitDispatch(sale: TerminalSale): Promise<TerminalSale> {
    let current = sale;
    for (let waited = 0; current.stage === 'QUEUED' && waited < this.graceMs; waited += POLL_MS) {
      await sleep(POLL_MS);
      current = (await this.deps.sales.find(sale.transactionId)) ?? current;
    }
    return current;
  }

  /**
   * Ends a waiting sale from the terminal side (abort, expire) in one commit: the stage claim, the
   * FAILED transaction and its callback. Returns 'ended', or the stage that refused the event.
   */
  private end(transactionId: string, event: Extract<SaleEvent, 'abort' | 'expire'>): Promise<'ended' | SaleStage> {
    return this.deps.transaction(async (repos) => {
      const sale = await repos.sales.find(transactionId);
      if (!sale) throw new Error(`sale ${transactionId} vanished`);
      const transition = saleTransition(sale.stage, event);
      if (!transition) return sale.stage;
      const now = this.deps.clock.nowIso();
      if (!(await repos.sales.moveStage(transactionId, sale.stage, transition.next, { endedAt: now, updatedAt: now }))) {
        return (await repos.sales.find(transactionId))?.stage ?? sale.stage;
      }
      return this.failTransaction(repos, sale, transition.transaction!, ENDING_ERROR_CODES[event]!, now);
    });
  }

  private endLostTap(transactionId: string): Promise<boolean> {
    return this.deps.transaction(async (repos) => {
      const sale = await repos.sales.find(transactionId);
      if (!sale || sale.stage !== 'CARD_PRESENTED') return false;
      if ((await repos.transactions.operationsOf(transactionId)).length > 0) return false;
      const now = this.deps.clock.nowIso();
      if (!(await repos.sales.moveStage(transactionId, 'CARD_PRESENTED', 'COMPLETED', { endedAt: now, updatedAt: now }))) return false;
      return (await this.failTransaction(repos, sale, 'decline', 'SYSTEM_ERROR', now)) === 'ended';
    });
  }

  /** Ends the sale's transaction through the engine (state, effects, final event and callback in this commit). */
  private async failTransaction(repos: R, sale: TerminalSale, event: TransactionEvent, errorCode: string, now: string): Promise<'ended'> {
    const tx = await repos.transactions.findById(sale.accountId, sale.transactionId);
    if (!tx) throw new Error(`sale ${sale.transactionId}: its transaction vanished`);
    if (!(await this.deps.payments.moveInCommit(repos, tx, event, errorCode, now)))
      throw new Error(`sale ${sale.transactionId}: its transaction moved meanwhile`);
    return 'ended';
  }
}
