/**
 * Capture, refund, void and renew of an existing transaction: the lifecycle flow. It decides —
 * the lifecycle table (lifecycle.ts), the amount, how a refund splits across captures — and hands
 * the operations to the payment engine, which moves the money in its fixed steps:
 *   1. engine.record: one commit reserves the amount (a conditional update of the transaction's
 *      aggregates) and records the PROCESSING operations with their drive jobs;
 *   2. engine.drive: the acquirer call outside any DB transaction, then one commit that applies the
 *      answer (the reservation moves into captured/refunded/voided or is released, the event, the
 *      follow-up void of voidRemaining).
 * A timeout (or a `pending` answer) leaves the operation PROCESSING with its reservation held; the
 * engine's drive job asks the acquirer again (same operation id: idempotent) until it answers.
 */
import { type Effect, effectPart } from '../../shared/effect.js';
import { notFound } from '../../shared/errors.js';
import type { DriveResult, PaymentEngine, PipelineRepos } from '../transactions/payment-engine.js';
import type { Operation, OperationState, Transaction } from '../transactions/transaction.js';
import {
  type DriveContext,
  type DriveRecord,
  driveRecord,
  type ReservationAmounts,
  type TransactionsRepository,
} from '../transactions/transactions.repository.js';
import { amountExceeds, IN_DOUBT_ERROR, type LifecycleAction, refusalOf, type Refusal, uncaptured } from './lifecycle.js';
import type { LifecycleRepository } from './operations.repository.js';

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

export interface LifecycleRepos extends PipelineRepos {
  lifecycle: LifecycleRepository;
}

export interface OperationsDeps<R extends LifecycleRepos> {
  transactions: TransactionsRepository;
  payments: PaymentEngine<R>;
}

const refused = (r: Refusal): OperationResult => ({ operationId: null, success: false, state: 'FAILED', errorCode: { code: r.code, message: r.message } });

/** The lifecycle use cases, as routes and other callers see them. */
export interface LifecycleOperations {
  capture(
    accountId: string,
    transactionId: string,
    input: { amount: number; voidRemaining?: boolean | undefined },
    effect?: Effect | null,
  ): Promise<OperationResult>;
  void(accountId: string, transactionId: string, input: { amount: number }, effect?: Effect | null): Promise<OperationResult>;
  renew(accountId: string, transactionId: string, effect?: Effect | null): Promise<OperationResult>;
  refund(accountId: string, transactionId: string, input: { amount: number }, effect?: Effect | null): Promise<RefundResult>;
}

type Decision = { operations: Operation[] } | { refusal: Refusal };

export class OperationsService<R extends LifecycleRepos = LifecycleRepos> implements LifecycleOperations {
  constructor(private readonly deps: OperationsDeps<R>) {}

  async capture(
    accountId: string,
    transactionId: string,
    input: { amount: number; voidRemaining?: boolean | undefined },
    effect: Effect | null = null,
  ): Promise<OperationResult> {
    const { tx, primaryOperationId, drive } = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'CAPTURE');
    if (refusal) return refused(refusal);
    // voidRemaining: the capture's success voids the uncaptured rest (recorded with the capture: it survives a crash).
    return this.single(tx, 'CAPTURE', drive, async (repos, now) => {
      const reserved = await this.deps.payments.reserveFor(repos, tx, 'CAPTURE', input.amount, now);
      const chain = input.voidRemaining === true ? 'VOID_REMAINING' : null;
      return reserved && { operation: this.operation(primaryOperationId, tx, 'CAPTURE', input.amount, now, effect, chain), reserved };
    });
  }

  async void(accountId: string, transactionId: string, input: { amount: number }, effect: Effect | null = null): Promise<OperationResult> {
    const { tx, primaryOperationId, drive } = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'VOID');
    if (refusal) return refused(refusal);
    if (input.amount !== -1 && input.amount < uncaptured(tx) && !(await this.deps.payments.partialVoids(tx))) {
      return refused({
        code: 'NOT_SUPPORTED_FOR_PAYMENT_METHOD',
        message: `This transaction's acquirer voids whole authorizations only: void with amount -1 (or ${uncaptured(tx)}, all that is left uncaptured).`,
      });
    }
    return this.single(tx, 'VOID', drive, async (repos, now) => {
      const operation = (amount: number) => this.operation(primaryOperationId, tx, 'VOID', amount, now, effect);
      if (input.amount !== -1) {
        const reserved = await this.deps.payments.reserveFor(repos, tx, 'VOID', input.amount, now);
        return reserved && { operation: operation(input.amount), reserved };
      }
      // -1: whatever is left uncaptured (the transaction as reserved is not read back: the drive reads it).
      const rest = await this.deps.payments.reserveRest(repos, tx.id, now);
      return rest > 0 ? { operation: operation(rest), reserved: null } : null;
    });
  }

  async renew(accountId: string, transactionId: string, effect: Effect | null = null): Promise<OperationResult> {
    const { tx, primaryOperationId, drive } = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return recovered[0]!;
    const refusal = refusalOf(tx, 'RENEW');
    if (refusal) return refused(refusal);
    // Renew moves no money: its amount is the uncaptured balance it extends; the guard only
    // checks (in the same commit as the insert) that such a balance still exists.
    return this.single(tx, 'RENEW', drive, async (repos, now) => {
      if (!(await repos.lifecycle.lockIfUncaptured(tx.id, now))) return null;
      const a = await repos.transactions.reservationAmounts(tx.id);
      const amount = a ? a.authorized - a.captured - a.voided : uncaptured(tx);
      return { operation: this.operation(primaryOperationId, tx, 'RENEW', amount, now, effect), reserved: null };
    });
  }

  /**
   * Refunds `amount` across the SUCCESS captures, newest first, each capture in isolation: one
   * REFUND operation (and one acquirer call) per capture touched.
   */
  async refund(accountId: string, transactionId: string, input: { amount: number }, effect: Effect | null = null): Promise<RefundResult> {
    const { tx, drive } = await this.load(accountId, transactionId);
    const recovered = await this.recover(tx, effect);
    if (recovered) return { success: recovered.every((r) => r.success), operations: recovered };
    const refusal = refusalOf(tx, 'REFUND');
    if (refusal) return { success: false, operations: [refused(refusal)] };
    const payments = this.deps.payments;
    let reserved: Transaction | null = null;
    const decided = await payments.record(async (repos, now): Promise<Decision> => {
      reserved = await payments.reserve(repos, tx.id, 'REFUND', input.amount, now);
      if (!reserved) return { refusal: await this.refusalAfterMiss(repos, tx, 'REFUND') };
      // The reservation above holds the transaction row (PostgreSQL row lock; SQLite writes are
      // serial), so the allocation below sees every committed refund and races with none.
      let left = input.amount;
      const operations: Operation[] = [];
      const part = (amount: number, referenceOperationId: string | null) =>
        payments.newOperation(tx, 'REFUND', amount, { at: now, referenceOperationId, idempotencyKey: effectPart(effect, operations.length)?.key ?? null });
      for (const { operation: capture, refundable } of await repos.lifecycle.refundableCaptures(tx.id)) {
        if (left === 0) break;
        const amount = Math.min(left, refundable);
        if (amount === 0) continue;
        operations.push(part(amount, capture.id));
        left -= amount;
      }
      // Captured funds recorded without a capture operation (defensive): refunded without a reference.
      if (left > 0) operations.push(part(left, null));
      return { operations };
    });
    if ('refusal' in decided) return { success: false, operations: [refused(decided.refusal)] };
    const results: OperationResult[] = [];
    // The first part is driven with what the record commit left (no read); the next ones read the
    // transaction as the answers before them left it.
    for (const [i, op] of decided.operations.entries()) {
      results.push(resultOf(await payments.drive(op.id, i === 0 ? knownToDrive(drive, reserved, op) : undefined)));
    }
    return { success: results.every((r) => r.success), operations: results };
  }

  /**
   * Capture, void and renew: one operation, recorded with its reservation (`reserve` answers null
   * when it does not fit), then driven — with what the load and the reservation read, when the
   * reservation gave the transaction back (`reserved`), instead of reading them again.
   */
  private async single(
    tx: Transaction,
    action: LifecycleAction,
    drive: DriveContext,
    reserve: (repos: R, now: string) => Promise<{ operation: Operation; reserved: Transaction | null } | null>,
  ): Promise<OperationResult> {
    let reserved: Transaction | null = null;
    const decided = await this.deps.payments.record(async (repos, now): Promise<Decision> => {
      const made = await reserve(repos, now);
      reserved = made?.reserved ?? null;
      return made ? { operations: [made.operation] } : { refusal: await this.refusalAfterMiss(repos, tx, action) };
    });
    if ('refusal' in decided) return refused(decided.refusal);
    const operation = decided.operations[0]!;
    return resultOf(await this.deps.payments.drive(operation.id, knownToDrive(drive, reserved, operation)));
  }

  /** A capture, void or renew of `amount`, referring to the transaction's authorization (or sale). */
  private operation(
    primaryOperationId: string | null,
    tx: Transaction,
    action: 'CAPTURE' | 'VOID' | 'RENEW',
    amount: number,
    now: string,
    effect: Effect | null,
    chain: 'VOID_REMAINING' | null = null,
  ): Operation {
    return this.deps.payments.newOperation(tx, action, amount, {
      at: now,
      referenceOperationId: primaryOperationId,
      idempotencyKey: effect?.key ?? null,
      chain,
    });
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
    const results: OperationResult[] = [];
    for (const op of mine)
      results.push(
        op.state === 'PROCESSING' ? resultOf(await this.deps.payments.drive(op.id)) : resultOf({ outcome: 'answered', operation: op, transaction: null }),
      );
    return results;
  }

  /** The transaction with its SUCCESS authorization (or sale), which capture, void and renew refer to, and what driving them reads: one read. */
  private async load(accountId: string, transactionId: string): Promise<{ tx: Transaction; primaryOperationId: string | null; drive: DriveContext }> {
    const found = await this.deps.transactions.findWithPrimaryOperation(accountId, transactionId);
    if (!found) throw notFound('transaction');
    return { tx: found.transaction, primaryOperationId: found.primaryOperationId, drive: found.drive };
  }

  /** A reservation that missed: the state changed meanwhile, or the amount does not fit. */
  private async refusalAfterMiss(repos: R, tx: Transaction, action: LifecycleAction): Promise<Refusal> {
    const fresh = await repos.transactions.findById(tx.accountId, tx.id);
    const byState = fresh ? refusalOf(fresh, action) : null;
    if (byState) return byState;
    const a = await repos.transactions.reservationAmounts(tx.id);
    return amountExceeds(action, a ? available(action, a) : 0);
  }
}

/** What the drive of `operation` would read, when its reservation gave the transaction back (else it reads). */
function knownToDrive(drive: DriveContext, reserved: Transaction | null, operation: Operation): DriveRecord | undefined {
  return reserved ? driveRecord(reserved, operation, drive) : undefined;
}

/** The answer of the API for where the engine left an operation. */
function resultOf(driven: DriveResult): OperationResult {
  if (driven.outcome === 'missing') throw new Error('the operation vanished');
  const op = driven.operation;
  if (driven.outcome === 'unknown') {
    if (driven.inDoubt) {
      return {
        operationId: op.id,
        success: false,
        state: 'PROCESSING',
        errorCode: { ...IN_DOUBT_ERROR },
      };
    }
    return driven.pending
      ? { operationId: op.id, success: true, state: 'PROCESSING', errorCode: null }
      : {
          operationId: op.id,
          success: false,
          state: 'PROCESSING',
          errorCode: {
            code: 'ACQUIRER_TIMEOUT',
            message: 'The acquirer did not answer in time; the operation stays PROCESSING and is resolved later. Check the transaction before retrying.',
          },
        };
  }
  return {
    operationId: op.id,
    success: op.state === 'SUCCESS',
    state: op.state,
    errorCode: op.state === 'FAILED' ? { code: op.errorCode ?? 'DECLINED_BY_ISSUER_OR_SCHEME', message: driven.message ?? 'Declined by the acquirer.' } : null,
  };
}

/** Position of a refund part (`key#n`) among the operations of one request. */
const partOf = (op: Operation): number => Number(op.idempotencyKey?.split('#').pop() ?? 0) || 0;

/** What an action could still take, for the AMOUNT_EXCEEDS_REMAINING message. */
function available(action: LifecycleAction, a: ReservationAmounts): number {
  if (action === 'REFUND') return Math.max(0, a.captured - a.refunded - a.pendingRefund);
  return Math.max(0, a.authorized - a.captured - a.voided - a.pending);
}
