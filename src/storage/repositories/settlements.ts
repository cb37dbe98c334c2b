import { sql, type Kysely, type Selectable } from 'kysely';
import type { Keyset } from '../../shared/pagination.js';
import type { SettledOperationType, TransferAdjustmentType } from '../../modules/settlements/fees.js';
import {
  moneyNumber,
  type SettleableOperation,
  type SettlementTransaction,
  type SettlementTransfer,
  type StoredAdjustment,
  type TransferDelta,
  type TransferState,
} from '../../modules/settlements/settlement.js';
import type { NewTransfer, ScanPosition, SettlementsRepository } from '../../modules/settlements/settlements.repository.js';
import type { Transaction } from '../../modules/transactions/transaction.js';
import type { Database, SettlementTransactionsTable, SettlementTransfersTable } from '../schema.js';
import { toTransaction } from './transactions.js';

const INSERT_CHUNK = 200;

function toTransfer(row: Selectable<SettlementTransfersTable>): SettlementTransfer {
  return {
    ...row,
    state: row.state as TransferState,
    settlementIds: JSON.parse(row.settlementIds) as string[],
    adjustments: JSON.parse(row.adjustments) as Array<StoredAdjustment<TransferAdjustmentType>>,
  };
}

const toSettlementTransaction = (row: Selectable<SettlementTransactionsTable>): SettlementTransaction => ({
  ...row,
  operationType: row.operationType as SettledOperationType,
});

// Keysets as row values, (a, b) < (x, y): both planners start the index scan at the position, where
// the equivalent `a < x OR (a = x AND b < y)` made PostgreSQL read every entry before it again at
// each page (a filter, not an index condition).
const newestFirstAfter = (after: Keyset) => (eb: any) => eb(eb.refTuple('createdAt', 'id'), '<', eb.tuple(after.createdAt, after.id));

export class KyselySettlementsRepository implements SettlementsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async accountIdsAfter(after: string | null, limit: number): Promise<string[]> {
    let q = this.db.selectFrom('accounts').select('id');
    if (after !== null) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map((r) => r.id);
  }

  async settleable(accountId: string, window: { from: string | null; to: string }, after: ScanPosition | null, limit: number): Promise<SettleableOperation[]> {
    let q = this.db
      .selectFrom('operations as o')
      .innerJoin('transactions as t', 't.id', 'o.transactionId')
      .select([
        'o.id as operationId',
        'o.accountId',
        'o.transactionId',
        'o.type',
        'o.amount',
        't.currency',
        'o.finalizedAt',
        'o.acquirerReference as operationAcquirerReference',
        't.acquirerReference as transactionAcquirerReference',
        't.reference as merchantReference',
      ])
      .where('o.accountId', '=', accountId)
      // Literals, not parameters: both planners match them against the partial index operations_settleable.
      .where(sql<boolean>`o.state = 'SUCCESS' and o.type in ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT')`)
      .where('o.finalizedAt', '<=', window.to);
    if (window.from !== null) q = q.where('o.finalizedAt', '>=', window.from);
    if (after) {
      q = q.where((eb) => eb(eb.refTuple('o.finalizedAt', 'o.id'), '>', eb.tuple(after.finalizedAt, after.id)));
    }
    const rows = await q.orderBy('o.finalizedAt').orderBy('o.id').limit(limit).execute();
    return rows.map((r) => ({
      operationId: r.operationId,
      accountId: r.accountId,
      transactionId: r.transactionId,
      type: r.type as SettledOperationType,
      amount: r.amount,
      currency: r.currency,
      finalizedAt: r.finalizedAt!,
      acquirerReference: r.operationAcquirerReference ?? r.transactionAcquirerReference,
      merchantReference: r.merchantReference,
    }));
  }

  async settledAmong(operationIds: string[]): Promise<Set<string>> {
    if (operationIds.length === 0) return new Set();
    const rows = await this.db.selectFrom('settlementTransactions').select('operationId').where('operationId', 'in', operationIds).execute();
    return new Set(rows.map((r) => r.operationId));
  }

  async openTransferIds(accountId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('settlementTransfers')
      .select('id')
      .where('accountId', '=', accountId)
      .where('state', '=', sql.lit('OPEN'))
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async lockOpenTransfer(accountId: string, currency: string, now: string, create: () => NewTransfer): Promise<SettlementTransfer> {
    // The UPDATE finds and row-locks the one OPEN transfer (PostgreSQL waits for a concurrent
    // completion and then sees it READY); when there is none, insert one — a concurrent insert of
    // the same (account, currency) makes ours a no-op — and look again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await this.db
        .updateTable('settlementTransfers')
        .set({ updatedAt: now })
        .where('accountId', '=', accountId)
        .where('currency', '=', currency)
        .where('state', '=', sql.lit('OPEN'))
        .returningAll()
        .executeTakeFirst();
      if (row) return toTransfer(row);
      const t = create();
      await this.db
        .insertInto('settlementTransfers')
        .values({ ...t, state: 'OPEN', settlementIds: JSON.stringify(t.settlementIds), createdAt: null })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    throw new Error(`no OPEN settlement transfer for ${accountId} ${currency} after 3 attempts`);
  }

  async lockTransfer(id: string, now: string): Promise<SettlementTransfer | null> {
    const row = await this.db
      .updateTable('settlementTransfers')
      .set({ updatedAt: now })
      .where('id', '=', id)
      .where('state', '=', sql.lit('OPEN'))
      .returningAll()
      .executeTakeFirst();
    return row ? toTransfer(row) : null;
  }

  async insertTransactions(rows: SettlementTransaction[]): Promise<SettlementTransaction[]> {
    const inserted: SettlementTransaction[] = [];
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = await this.db
        .insertInto('settlementTransactions')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .onConflict((oc) => oc.column('operationId').doNothing())
        .returningAll()
        .execute();
      inserted.push(...chunk.map(toSettlementTransaction));
    }
    return inserted;
  }

  async addToTransfer(id: string, delta: TransferDelta, now: string): Promise<void> {
    await this.db
      .updateTable('settlementTransfers')
      .set((eb) => ({
        transactionsCount: eb('transactionsCount', '+', delta.count),
        grossAmount: eb('grossAmount', '+', moneyNumber(delta.gross)),
        acquirerFeeAmount: eb('acquirerFeeAmount', '+', moneyNumber(delta.acquirerFee)),
        interchangeFeeAmount: eb('interchangeFeeAmount', '+', moneyNumber(delta.interchangeFee)),
        schemeFeeAmount: eb('schemeFeeAmount', '+', moneyNumber(delta.schemeFee)),
        transactionsNetAmount: eb('transactionsNetAmount', '+', moneyNumber(delta.net)),
        updatedAt: now,
      }))
      .where('id', '=', id)
      .where('state', '=', sql.lit('OPEN'))
      .execute();
  }

  async sumTransactions(transferId: string): Promise<TransferDelta> {
    // PostgreSQL returns sum(bigint) as a numeric string: read through BigInt, never a float.
    const row = await this.db
      .selectFrom('settlementTransactions')
      .where('settlementTransferId', '=', transferId)
      .select((eb) => [
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.coalesce(eb.fn.sum<number | string>('grossAmount'), sql<number>`0`).as('gross'),
        eb.fn.coalesce(eb.fn.sum<number | string>('acquirerFee'), sql<number>`0`).as('acquirerFee'),
        eb.fn.coalesce(eb.fn.sum<number | string>('interchangeFee'), sql<number>`0`).as('interchangeFee'),
        eb.fn.coalesce(eb.fn.sum<number | string>('schemeFee'), sql<number>`0`).as('schemeFee'),
        eb.fn.coalesce(eb.fn.sum<number | string>('netAmount'), sql<number>`0`).as('net'),
      ])
      .executeTakeFirstOrThrow();
    return {
      count: Number(row.count),
      gross: BigInt(row.gross),
      acquirerFee: BigInt(row.acquirerFee),
      interchangeFee: BigInt(row.interchangeFee),
      schemeFee: BigInt(row.schemeFee),
      net: BigInt(row.net),
    };
  }

  async completeTransfer(id: string, patch: { adjustments: StoredAdjustment[]; netAmount: number; createdAt: string }): Promise<SettlementTransfer> {
    const row = await this.db
      .updateTable('settlementTransfers')
      .set({
        state: 'READY',
        adjustments: JSON.stringify(patch.adjustments),
        netAmount: patch.netAmount,
        createdAt: patch.createdAt,
        updatedAt: patch.createdAt,
      })
      .where('id', '=', id)
      .where('state', '=', sql.lit('OPEN'))
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new Error(`settlement transfer ${id} is not OPEN`);
    return toTransfer(row);
  }

  async deleteEmptyTransfer(id: string): Promise<void> {
    await this.db.deleteFrom('settlementTransfers').where('id', '=', id).where('state', '=', sql.lit('OPEN')).where('transactionsCount', '=', 0).execute();
  }

  async findTransfer(accountId: string, id: string): Promise<SettlementTransfer | null> {
    const row = await this.db
      .selectFrom('settlementTransfers')
      .selectAll()
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('state', '=', sql.lit('READY'))
      .executeTakeFirst();
    return row ? toTransfer(row) : null;
  }

  async listTransfers(accountId: string, after: Keyset | null, limit: number): Promise<SettlementTransfer[]> {
    let q = this.db
      .selectFrom('settlementTransfers')
      .selectAll()
      .where('accountId', '=', accountId)
      .where(sql<boolean>`state = 'READY'`);
    if (after) q = q.where(newestFirstAfter(after));
    const rows = await q.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toTransfer);
  }

  async listTransactions(transferId: string, after: Keyset | null, limit: number) {
    let q = this.db.selectFrom('settlementTransactions').selectAll().where('settlementTransferId', '=', transferId);
    if (after) q = q.where(newestFirstAfter(after));
    const rows = (await q.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).execute()).map(toSettlementTransaction);
    const ids = [...new Set(rows.map((r) => r.transactionId))];
    const transactions = new Map<string, Transaction>();
    if (ids.length) {
      for (const row of await this.db.selectFrom('transactions').selectAll().where('id', 'in', ids).execute()) transactions.set(row.id, toTransaction(row));
    }
    return rows.map((settlementTransaction) => {
      const transaction = transactions.get(settlementTransaction.transactionId);
      if (!transaction) throw new Error(`settlement transaction ${settlementTransaction.id}: transaction ${settlementTransaction.transactionId} missing`);
      return { settlementTransaction, transaction };
    });
  }
}
