/**
 * Capture, refund, void and renew of an existing transaction — synchronous, always in the same
 * fixed steps:
 *   1. validate against the lifecycle table (lifecycle.ts);
 *   2. one DB transaction: reserve the amount with a conditional update of the transaction's
 *      aggregate columns, insert the PROCESSING operation and its resolver job;
 *   3. call the acquirer, outside any DB transaction;
 *   4. one DB transaction: finalize the operation through the operation transition table, move the
 *      reservation into captured/refunded/voided (or release it) and append the event.
 * A timeout (or a `pending` answer) leaves the operation PROCESSING with its reservation held; the
 * resolver job asks the acquirer again (same operation id: idempotent) until it answers.
 */
import type { Acquirer, AcquirerResult, Instrument, OperationRequest } from '../../connectors/acquirer.js';
import type { Clock } from '../../clock.js';
import type { JobQueue } from '../../jobs/job.js';
import { type Effect, effectPart } from '../../shared/effect.js';
import { notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { EventOutbox } from '../events/event-outbox.js';
import {
  aggregatesOf,
  nextOperationState,
  type Operation,
  type OperationEvent,
  type OperationState,
  type OperationType,
  type Transaction,
} from '../transactions/transaction.js';
import type { TransactionsRepository } from '../transactions/transactions.repository.js';
import { operationWire, transactionWire } from '../transactions/transactions.schemas.js';
import { amountExceeds, type LifecycleAction, refusalOf, type Refusal, SUCCESS_EVENTS, uncaptured } from './lifecycle.js';
import type { LifecycleRepository, ReservationAmounts } from './operations.repository.js';

export const RESOLVE_OPERATION_JOB = 'operations.resolve';
/** The resolver's first look: after the synchronous request has had every chance to finish itself. */
export const RESOLVE_FIRST_DELAY_MS = 30_000;
/** Roughly a day of asking (30 s doubling to hourly); then the job is dead and the operator looks. */
export const RESOLVE_MAX_ATTEMPTS = 30;

export interface OperationResult {
  operationId: string | null;
  success: boolean;
  state: OperationState | null;
  errorCode: { code: string; message: string } | null;
}

export interface RefundResult {
  success: boolean;
  operations: OperationResult[];
}

export interface LifecycleRepos {
  transactions: TransactionsRepository;
  lifecycle: LifecycleRepository;
  events: EventOutbox;
  jobs: JobQueue;
}

export interface OperationsDeps extends LifecycleRepos {
  transaction<T>(fn: (repos: LifecycleRepos) => Promise<T>): Promise<T>;
  acquirer: Acquirer;
  /** The acquirer instrument of the transaction's payment method (the card opened from the vault, or the wallet). */
  instrumentOf(tx: Transaction): Promise<Instrument>;
  clock: Clock;
}

const refused = (r: Refusal): OperationResult => ({ operationId: null, success: false, state: 'FAILED', errorCode: { code: r.code, message: r.message } });

/** What the acquirer call is named for each operation type. */
const ACQUIRER_CALL: Partial<Record<OperationType, 'capture' | 'refund' | 'void' | 'renew'>> = {
  CAPTURE: 'capture',
  REFUND: 'refund',
  VOID: 'void',
  RENEW: 'renew',
};

/** The acquirer's answer as an operation event; null when the outcome is still unknown. */
function eventOf(result: AcquirerResult): OperationEvent | null {
  if (result.outcome === 'approved') return 'approve';
  if (result.outcome === 'declined') return 'decline';
  return null;
}

export class OperationsService {
  constructor(private readonly deps: OperationsDeps) {}

  async capture(
    accountId: string,
    transactionId: string,
    input: { amount: number; voidRemaining?: boolean | undefined },
    effect: Effect | null = null,
  ): Promise<OperationResult> {
    const tx = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'CAPTURE');
    if (refusal) return refused(refusal);
    const instrument = await this.deps.instrumentOf(tx);
    const reserved = await this.reserve(
      tx,
      'CAPTURE',
      effect?.key ?? null,
      (repos, now) => repos.lifecycle.reserveUncaptured(tx.id, input.amount, now),
      () => input.amount,
    );
    if ('refusal' in reserved) return refused(reserved.refusal);
    const { result, followUp } = await this.execute(tx, reserved.operation, instrument, 1, { voidRemaining: input.voidRemaining === true });
    // voidRemaining: the uncaptured rest was reserved (VOID operation recorded) in the capture's finalizing commit; void it now.
    if (followUp) await this.execute(tx, followUp, instrument, 1);
    return result;
  }

  async void(accountId: string, transactionId: string, input: { amount: number }, effect: Effect | null = null): Promise<OperationResult> {
    const tx = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'VOID');
    if (refusal) return refused(refusal);
    const instrument = await this.deps.instrumentOf(tx);
    const whole = input.amount === -1;
    let amount = input.amount;
    const reserved = await this.reserve(
      tx,
      'VOID',
      effect?.key ?? null,
      async (repos, now) => {
        if (!whole) return repos.lifecycle.reserveUncaptured(tx.id, amount, now);
        amount = await repos.lifecycle.reserveAllUncaptured(tx.id, now);
        return amount > 0;
      },
      () => amount,
    );
    if ('refusal' in reserved) return refused(reserved.refusal);
    return (await this.execute(tx, reserved.operation, instrument, 1)).result;
  }

  async renew(accountId: string, transactionId: string, effect: Effect | null = null): Promise<OperationResult> {
    const tx = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'RENEW');
    if (refusal) return refused(refusal);
    const instrument = await this.deps.instrumentOf(tx);
    // Renew moves no money: its amount is the uncaptured balance it extends; the guard only
    // checks (in the same commit as the insert) that such a balance still exists.
    let amount = uncaptured(tx);
    const reserved = await this.reserve(
      tx,
      'RENEW',
      effect?.key ?? null,
      async (repos, now) => {
        if (!(await repos.lifecycle.lockIfUncaptured(tx.id, now))) return false;
        const a = await repos.lifecycle.amounts(tx.id);
        amount = a ? a.authorized - a.captured - a.voided : 0;
        return true;
      },
      () => amount,
    );
    if ('refusal' in reserved) return refused(reserved.refusal);
    return (await this.execute(tx, reserved.operation, instrument, 1)).result;
  }

  /**
   * Refunds `amount` across the SUCCESS captures, newest first, each capture in isolation: one
   * REFUND operation (and one acquirer call) per capture touched.
   */
  async refund(accountId: string, transactionId: string, input: { amount: number }, effect: Effect | null = null): Promise<RefundResult> {
    const tx = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return { success: recovered.every((r) => r.success), operations: recovered };
    const refusal = refusalOf(tx, 'REFUND');
    if (refusal) return { success: false, operations: [refused(refusal)] };
    const instrument = await this.deps.instrumentOf(tx);
    const now = this.deps.clock.nowIso();
    const outcome = await this.deps.transaction(async (repos): Promise<{ refusal: Refusal } | { operations: Operation[] }> => {
      if (!(await repos.lifecycle.reserveRefund(tx.id, input.amount, now))) {
        return { refusal: await this.refusalAfterMiss(repos, tx, 'REFUND') };
      }
      // The reservation above holds the transaction row (PostgreSQL row lock; SQLite writes are
      // serial), so the allocation below sees every committed refund and races with none.
      let left = input.amount;
      const operations: Operation[] = [];
      for (const { operation: capture, refundable } of await repos.lifecycle.refundableCaptures(tx.id)) {
        if (left === 0) break;
        const part = Math.min(left, refundable);
        if (part === 0) continue;
        operations.push(this.newOperation(tx, 'REFUND', part, capture.id, now, effectPart(effect, operations.length)?.key));
        left -= part;
      }
      // Captured funds recorded without a capture operation (defensive): refunded without a reference.
      if (left > 0) operations.push(this.newOperation(tx, 'REFUND', left, null, now, effectPart(effect, operations.length)?.key));
      await repos.transactions.insertOperations(operations);
      await this.enqueueResolvers(repos, operations);
      return { operations };
    });
    if ('refusal' in outcome) return { success: false, operations: [refused(outcome.refusal)] };
    const results: OperationResult[] = [];
    for (const op of outcome.operations) results.push((await this.execute(tx, op, instrument, 1)).result);
    return { success: results.every((r) => r.success), operations: results };
  }

  /**
   * The resolver job: asks the acquirer again about a PROCESSING operation. Returns true when the
   * operation is final (now or already), false when the acquirer still has no answer.
   */
  async resolve(operationId: string, attempt: number): Promise<boolean> {
    const op = await this.deps.lifecycle.findOperation(operationId);
    if (!op) return true;
    if (op.state !== 'PROCESSING') return true;
    const tx = await this.deps.transactions.findById(op.accountId, op.transactionId);
    if (!tx) return true;
    const instrument = await this.deps.instrumentOf(tx);
    const { result, followUp } = await this.execute(tx, op, instrument, attempt, { voidRemaining: false });
    if (followUp) await this.execute(tx, followUp, instrument, 1);
    return result.state !== 'PROCESSING';
  }

  /**
   * A retry after a crash: the operations this request recorded before its process died (refunds:
   * one per capture, in order), each finished now if its acquirer call is still open; null when none.
   */
  private async recover(tx: Transaction, effect: Effect | null): Promise<OperationResult[] | null> {
    if (!effect?.resumed) return null;
    const mine = (await this.deps.transactions.operationsOf(tx.id))
      .filter((op) => op.idempotencyKey === effect.key || op.idempotencyKey?.startsWith(`${effect.key}#`))
      .sort((a, b) => partOf(a) - partOf(b));
    if (mine.length === 0) return null;
    const instrument = await this.deps.instrumentOf(tx);
    const results: OperationResult[] = [];
    for (const op of mine) results.push(op.state === 'PROCESSING' ? (await this.execute(tx, op, instrument, 1)).result : resultOf(op));
    return results;
  }

  private async load(accountId: string, transactionId: string): Promise<Transaction> {
    const tx = await this.deps.transactions.findById(accountId, transactionId);
    if (!tx) throw notFound('transaction');
    return tx;
  }

  private newOperation(
    tx: Transaction,
    type: OperationType,
    amount: number,
    referenceOperationId: string | null,
    now: string,
    idempotencyKey: string | null = null,
  ): Operation {
    return {
      idempotencyKey,
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
      createdAt: now,
      finalizedAt: null,
    };
  }

  /** Step 2 for capture, void and renew: reserve, then record the PROCESSING operation and its resolver. */
  private async reserve(
    tx: Transaction,
    action: LifecycleAction,
    idempotencyKey: string | null,
    tryReserve: (repos: LifecycleRepos, now: string) => Promise<boolean>,
    amountOf: () => number,
  ): Promise<{ refusal: Refusal } | { operation: Operation }> {
    const now = this.deps.clock.nowIso();
    return this.deps.transaction(async (repos) => {
      if (!(await tryReserve(repos, now))) return { refusal: await this.refusalAfterMiss(repos, tx, action) };
      const operation = this.newOperation(tx, action, amountOf(), await this.authorizationOf(repos, tx.id), now, idempotencyKey);
      await repos.transactions.insertOperations([operation]);
      await this.enqueueResolvers(repos, [operation]);
      return { operation };
    });
  }

  /** A reservation that missed: the state changed meanwhile, or the amount does not fit. */
  private async refusalAfterMiss(repos: LifecycleRepos, tx: Transaction, action: LifecycleAction): Promise<Refusal> {
    const fresh = await repos.transactions.findById(tx.accountId, tx.id);
    const byState = fresh ? refusalOf(fresh, action) : null;
    if (byState) return byState;
    const a = await repos.lifecycle.amounts(tx.id);
    return amountExceeds(action, a ? available(action, a) : 0);
  }

  /** The operation a capture, void or renew refers to: the transaction's authorization (or sale). */
  private async authorizationOf(repos: LifecycleRepos, transactionId: string): Promise<string | null> {
    const ops = await repos.transactions.operationsOf(transactionId);
    return ops.find((o) => (o.type === 'AUTHORIZATION' || o.type === 'SALE') && o.state === 'SUCCESS')?.id ?? null;
  }

  private async enqueueResolvers(repos: LifecycleRepos, operations: Operation[]): Promise<void> {
    const runAt = this.deps.clock.now() + RESOLVE_FIRST_DELAY_MS;
    await repos.jobs.enqueueMany(
      operations.map((op) => ({
        kind: RESOLVE_OPERATION_JOB,
        payload: { operationId: op.id },
        runAt,
        dedupeKey: `operation-resolve:${op.id}`,
        maxAttempts: RESOLVE_MAX_ATTEMPTS,
      })),
    );
  }

  /** Steps 3 and 4 for one PROCESSING operation. */
  private async execute(
    tx: Transaction,
    op: Operation,
    instrument: Instrument,
    attempt: number,
    options: { voidRemaining?: boolean } = {},
  ): Promise<{ result: OperationResult; followUp: Operation | null }> {
    const result = await this.call(tx, op, instrument, attempt);
    const event = eventOf(result);
    if (!event) {
      // Unknown outcome: the operation stays PROCESSING with its reservation; the resolver finishes it.
      return {
        result:
          result.outcome === 'pending'
            ? { operationId: op.id, success: true, state: 'PROCESSING', errorCode: null }
            : {
                operationId: op.id,
                success: false,
                state: 'PROCESSING',
                errorCode: {
                  code: 'ACQUIRER_TIMEOUT',
                  message: 'The acquirer did not answer in time; the operation stays PROCESSING and is resolved later. Check the transaction before retrying.',
                },
              },
        followUp: null,
      };
    }
    const next = nextOperationState(op.state, event);
    if (!next) throw new Error(`operation ${op.id}: no transition from ${op.state} on ${event}`);
    const now = this.deps.clock.nowIso();
    const declined = result.outcome === 'declined' ? result : null;
    const approved = result.outcome === 'approved' ? result : null;

    const outcome = await this.deps.transaction(async (repos) => {
      const won = await repos.lifecycle.finalizeOperation(op.id, {
        state: next,
        errorCode: declined?.errorCode ?? null,
        externalStatusCodes: result.outcome === 'approved' || result.outcome === 'declined' ? result.externalStatusCodes : null,
        acquirerReference: approved?.acquirerReference ?? null,
        finalizedAt: now,
      });
      // Someone else (the resolver, or the request) finalized it first: report what they recorded.
      if (!won) return { final: await repos.lifecycle.findOperation(op.id), followUp: null };
      await repos.lifecycle.settle(tx.id, op.type, op.amount, next === 'SUCCESS', now);
      let followUp: Operation | null = null;
      if (next === 'SUCCESS') {
        const fresh = await repos.transactions.findById(tx.accountId, tx.id);
        const final: Operation = { ...op, state: next, acquirerReference: approved?.acquirerReference ?? null, finalizedAt: now };
        const eventName = SUCCESS_EVENTS[op.type];
        if (eventName && fresh) {
          await repos.events.append(tx.accountId, eventName, {
            transaction: transactionWire(fresh),
            aggregates: aggregatesOf(fresh),
            operation: operationWire(final),
          });
        }
        if (op.type === 'CAPTURE' && options.voidRemaining) {
          const rest = await repos.lifecycle.reserveAllUncaptured(tx.id, now);
          if (rest > 0) {
            followUp = this.newOperation(tx, 'VOID', rest, op.referenceOperationId, now);
            await repos.transactions.insertOperations([followUp]);
            await this.enqueueResolvers(repos, [followUp]);
          }
        }
      }
      return { final: null, followUp };
    });

    if (outcome.final) return { result: resultOf(outcome.final), followUp: null };
    return {
      result: declined
        ? { operationId: op.id, success: false, state: next, errorCode: { code: declined.errorCode, message: declined.message } }
        : { operationId: op.id, success: true, state: next, errorCode: null },
      followUp: outcome.followUp,
    };
  }

  /** The acquirer call; a thrown error is an unknown outcome (a timeout), never a decline. */
  private async call(tx: Transaction, op: Operation, instrument: Instrument, attempt: number): Promise<AcquirerResult> {
    const kind = ACQUIRER_CALL[op.type];
    if (!kind) throw new Error(`operation ${op.id}: ${op.type} is not a lifecycle operation`);
    const request: OperationRequest = { transactionId: tx.id, operationId: op.id, attempt, amount: op.amount, currency: tx.currency, instrument };
    try {
      return await this.deps.acquirer[kind](request);
    } catch {
      return { outcome: 'timeout' };
    }
  }
}

/** The result of an operation another execution finalized. */
function resultOf(op: Operation): OperationResult {
  return {
    operationId: op.id,
    success: op.state === 'SUCCESS',
    state: op.state,
    errorCode: op.state === 'FAILED' ? { code: op.errorCode ?? 'DECLINED_BY_ISSUER_OR_SCHEME', message: 'Declined by the acquirer.' } : null,
  };
}

/** Position of a refund part (`key#n`) among the operations of one request. */
const partOf = (op: Operation): number => Number(op.idempotencyKey?.split('#').pop() ?? 0) || 0;

/** What an action could still take, for the AMOUNT_EXCEEDS_REMAINING message. */
function available(action: LifecycleAction, a: ReservationAmounts): number {
  if (action === 'REFUND') return Math.max(0, a.captured - a.refunded - a.pendingRefund);
  return Math.max(0, a.authorized - a.captured - a.voided - a.pending);
}
