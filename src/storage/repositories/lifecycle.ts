import { sql, type Kysely } from 'kysely';
import type { LifecycleRepository, RefundableCapture } from '../../modules/operations/operations.repository.js';
import { REFUNDABLE_OPERATION_TYPES } from '../../modules/operations/lifecycle.js';
import type { Database } from '../schema.js';
import { toOperation } from './transactions.js';

const updated = (result: { numUpdatedRows: bigint }): boolean => Number(result.numUpdatedRows) === 1;

export class KyselyLifecycleRepository implements LifecycleRepository {
  constructor(private readonly db: Kysely<Database>) {}

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
}
