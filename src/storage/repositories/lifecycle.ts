import { sql, type Kysely } from 'kysely';
import type { LifecycleRepository, OperationOutcome, RefundableCapture, ReservationAmounts } from '../../modules/operations/operations.repository.js';
import { REFUNDABLE_OPERATION_TYPES } from '../../modules/operations/lifecycle.js';
import type { Operation, OperationType } from '../../modules/transactions/transaction.js';
import type { Database } from '../schema.js';
import { toOperation } from './transactions.js';

const updated = (result: { numUpdatedRows: bigint }): boolean => Number(result.numUpdatedRows) === 1;

/** Captures and voids in flight on the transaction row being updated, whoever recorded them. */
const IN_FLIGHT = sql`select coalesce(sum(o.amount), 0) from operations o where o.transaction_id = transactions.id and o.state = 'PROCESSING' and o.type in ('CAPTURE', 'VOID')`;

/** Tries of reserveAllUncaptured when concurrent reservations keep changing the remaining amount. */
const RESERVE_ALL_TRIES = 10;

export class KyselyLifecycleRepository implements LifecycleRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async reserveUncaptured(transactionId: string, amount: number, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('transactions')
      .set({ pendingAmount: sql`pending_amount + ${amount}`, updatedAt: now })
      .where('id', '=', transactionId)
      .where('state', '=', 'SUCCESS')
      .where(sql<boolean>`captured_amount + voided_amount + pending_amount + ${amount} <= authorized_amount`)
      // The authorization pipeline's own captures and voids (instant capture) hold no reservation:
      // while one is in flight it counts here too, so the two can never over-commit together.
      .where(sql<boolean>`captured_amount + voided_amount + ${amount} + (${IN_FLIGHT}) <= authorized_amount`)
      .executeTakeFirst();
    return updated(result);
  }

  async reserveAllUncaptured(transactionId: string, now: string): Promise<number> {
    // Read, then reserve exactly that much conditionally; a concurrent reservation in between makes
    // the update miss, and the next read sees it (PostgreSQL READ COMMITTED reads the latest commit).
    for (let i = 0; i < RESERVE_ALL_TRIES; i++) {
      const a = await this.amounts(transactionId);
      if (!a) return 0;
      const inFlight = await this.inFlightCapturesAndVoids(transactionId);
      const available = a.authorized - a.captured - a.voided - Math.max(a.pending, inFlight);
      if (available <= 0) return 0;
      if (await this.reserveUncaptured(transactionId, available, now)) return available;
    }
    return 0;
  }

  async reserveRefund(transactionId: string, amount: number, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('transactions')
      .set({ pendingRefundAmount: sql`pending_refund_amount + ${amount}`, updatedAt: now })
      .where('id', '=', transactionId)
      .where('state', '=', 'SUCCESS')
      .where(sql<boolean>`refunded_amount + pending_refund_amount + ${amount} <= captured_amount`)
      .executeTakeFirst();
    return updated(result);
  }

  async lockIfUncaptured(transactionId: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('transactions')
      .set({ updatedAt: now })
      .where('id', '=', transactionId)
      .where('state', '=', 'SUCCESS')
      .where(sql<boolean>`captured_amount + voided_amount < authorized_amount`)
      .executeTakeFirst();
    return updated(result);
  }

  private async inFlightCapturesAndVoids(transactionId: string): Promise<number> {
    const row = await this.db
      .selectFrom('operations')
      .select(sql<number>`coalesce(sum(amount), 0)`.as('total'))
      .where('transactionId', '=', transactionId)
      .where('state', '=', 'PROCESSING')
      .where('type', 'in', ['CAPTURE', 'VOID'])
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async amounts(transactionId: string): Promise<ReservationAmounts | null> {
    const row = await this.db
      .selectFrom('transactions')
      .select(['authorizedAmount', 'capturedAmount', 'refundedAmount', 'voidedAmount', 'pendingAmount', 'pendingRefundAmount'])
      .where('id', '=', transactionId)
      .executeTakeFirst();
    if (!row) return null;
    return {
      authorized: Number(row.authorizedAmount),
      captured: Number(row.capturedAmount),
      refunded: Number(row.refundedAmount),
      voided: Number(row.voidedAmount),
      pending: Number(row.pendingAmount),
      pendingRefund: Number(row.pendingRefundAmount),
    };
  }

  async refundableCaptures(transactionId: string): Promise<RefundableCapture[]> {
    const rows = await this.db
      .selectFrom('operations')
      .selectAll()
      .where('transactionId', '=', transactionId)
      .where((eb) =>
        eb.or([
          eb.and([eb('type', 'in', [...REFUNDABLE_OPERATION_TYPES]), eb('state', '=', 'SUCCESS')]),
          eb.and([eb('type', '=', 'REFUND'), eb('state', 'in', ['SUCCESS', 'PROCESSING'])]),
        ]),
      )
      .execute();
    const ops = rows.map(toOperation);
    const refunded = new Map<string, number>();
    for (const op of ops) {
      if (op.type === 'REFUND' && op.referenceOperationId) {
        refunded.set(op.referenceOperationId, (refunded.get(op.referenceOperationId) ?? 0) + op.amount);
      }
    }
    return ops
      .filter((op) => op.type !== 'REFUND')
      .sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1))
      .map((operation) => ({ operation, refundable: Math.max(0, operation.amount - (refunded.get(operation.id) ?? 0)) }));
  }

  async findOperation(id: string): Promise<Operation | null> {
    const row = await this.db.selectFrom('operations').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toOperation(row) : null;
  }

  async finalizeOperation(id: string, outcome: OperationOutcome): Promise<boolean> {
    const result = await this.db
      .updateTable('operations')
      .set({
        state: outcome.state,
        errorCode: outcome.errorCode,
        externalStatusCodes: outcome.externalStatusCodes === null ? null : JSON.stringify(outcome.externalStatusCodes),
        acquirerReference: outcome.acquirerReference,
        finalizedAt: outcome.finalizedAt,
      })
      .where('id', '=', id)
      .where('state', '=', 'PROCESSING')
      .executeTakeFirst();
    return updated(result);
  }

  async settle(transactionId: string, type: OperationType, amount: number, approved: boolean, now: string): Promise<void> {
    // Only the SUCCESS of an operation adds to its aggregate; either way its reservation ends.
    const gain = approved ? amount : 0;
    const q = this.db.updateTable('transactions').where('id', '=', transactionId);
    if (type === 'CAPTURE') {
      await q.set({ pendingAmount: sql`pending_amount - ${amount}`, capturedAmount: sql`captured_amount + ${gain}`, updatedAt: now }).execute();
    } else if (type === 'VOID') {
      await q.set({ pendingAmount: sql`pending_amount - ${amount}`, voidedAmount: sql`voided_amount + ${gain}`, updatedAt: now }).execute();
    } else if (type === 'REFUND') {
      await q.set({ pendingRefundAmount: sql`pending_refund_amount - ${amount}`, refundedAmount: sql`refunded_amount + ${gain}`, updatedAt: now }).execute();
    }
  }
}
