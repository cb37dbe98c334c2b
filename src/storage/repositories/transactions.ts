import { sql, type Kysely, type Selectable } from 'kysely';
import type { Keyset } from '../../shared/pagination.js';
import type {
  Operation,
  OperationState,
  OperationType,
  Transaction,
  TransactionFlow,
  TransactionState,
  TransactionType,
} from '../../modules/transactions/transaction.js';
import type {
  AggregateDelta,
  AmountMode,
  NewTransaction,
  OperationFilter,
  OperationResultPatch,
  TransactionFilter,
  TransactionResultPatch,
  TransactionsRepository,
} from '../../modules/transactions/transactions.repository.js';
import type { Database, OperationsTable, TransactionsTable } from '../schema.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
const text = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

export function toTransaction(row: Selectable<TransactionsTable>): Transaction {
  return {
    ...row,
    type: row.type as TransactionType,
    flow: row.flow as TransactionFlow,
    state: row.state as TransactionState,
    externalStatusCodes: json(row.externalStatusCodes),
    exemptions: json(row.exemptions),
    attributes: json(row.attributes),
    sca: json(row.sca),
  };
}

export function transactionRow(tx: NewTransaction) {
  return {
    ...tx,
    externalStatusCodes: text(tx.externalStatusCodes),
    exemptions: text(tx.exemptions),
    attributes: text(tx.attributes),
    sca: text(tx.sca),
  };
}

export function toOperation(row: Selectable<OperationsTable>): Operation {
  return { ...row, type: row.type as OperationType, state: row.state as OperationState, externalStatusCodes: json(row.externalStatusCodes) };
}

export const operationRow = (op: Operation) => ({ ...op, externalStatusCodes: text(op.externalStatusCodes) });

const COMPARATORS: Record<AmountMode, '=' | '<' | '>'> = { EQUAL: '=', LESS_THAN: '<', GREATER_THAN: '>' };

/** LIKE pattern for a prefix, with the wildcard characters of the prefix escaped. */
const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class KyselyTransactionsRepository implements TransactionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(transactions: NewTransaction[]): Promise<void> {
    for (let i = 0; i < transactions.length; i += 200) {
      await this.db
        .insertInto('transactions')
        .values(transactions.slice(i, i + 200).map(transactionRow))
        .execute();
    }
  }

  async insertOperations(operations: Operation[]): Promise<void> {
    for (let i = 0; i < operations.length; i += 500) {
      await this.db
        .insertInto('operations')
        .values(operations.slice(i, i + 500).map(operationRow))
        .execute();
    }
  }

  async findById(accountId: string, id: string): Promise<Transaction | null> {
    const row = await this.db.selectFrom('transactions').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toTransaction(row) : null;
  }

  async findByIdempotencyKeys(accountId: string, keys: string[]): Promise<Transaction[]> {
    const found: Transaction[] = [];
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await this.db
        .selectFrom('transactions')
        .selectAll()
        .where('accountId', '=', accountId)
        .where('idempotencyKey', 'in', keys.slice(i, i + 500))
        .execute();
      found.push(...rows.map(toTransaction));
    }
    return found;
  }

  async list(accountId: string, f: TransactionFilter, after: Keyset | null, limit: number): Promise<Transaction[]> {
    let q = this.db.selectFrom('transactions').selectAll().where('accountId', '=', accountId);
    const equal = [
      'sessionId',
      'terminalId',
      'pointOfSaleId',
      'subscriptionId',
      'billingAgreementChargeId',
      'customerId',
      'currency',
      'state',
      'type',
      'errorCode',
      'paymentMethodType',
      'paymentMethodSubType',
    ] as const;
    for (const column of equal) {
      const value = f[column];
      if (value !== undefined) q = q.where(column, '=', value);
    }
    if (f.reference !== undefined) {
      q =
        f.referenceMode === 'PREFIX'
          ? q.where(sql<boolean>`${sql.ref('reference')} like ${likePrefix(f.reference)} escape '\\'`)
          : q.where('reference', '=', f.reference);
    }
    if (f.createdAfter !== undefined) q = q.where('createdAt', '>=', f.createdAfter);
    if (f.createdBefore !== undefined) q = q.where('createdAt', '<=', f.createdBefore);
    if (f.amount) q = q.where('amount', COMPARATORS[f.amount.mode], f.amount.value);
    if (f.fee) q = q.where('fee', COMPARATORS[f.fee.mode], f.fee.value);
    if (after) {
      // A row-value comparison bounds the index search on both SQLite and PostgreSQL; the
      // equivalent OR form is only a filter there, so a deep page re-read every newer row (bench/).
      q = q.where((eb) => eb(eb.refTuple('createdAt', 'id'), '<', eb.tuple(after.createdAt, after.id)));
    }
    const rows = await q.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toTransaction);
  }

  async operationsOf(transactionId: string): Promise<Operation[]> {
    const rows = await this.db.selectFrom('operations').selectAll().where('transactionId', '=', transactionId).orderBy('createdAt').orderBy('id').execute();
    return rows.map(toOperation);
  }

  async findOperation(transactionId: string, operationId: string): Promise<Operation | null> {
    const row = await this.db.selectFrom('operations').selectAll().where('id', '=', operationId).where('transactionId', '=', transactionId).executeTakeFirst();
    return row ? toOperation(row) : null;
  }

  async applyResult(id: string, from: TransactionState[], patch: TransactionResultPatch, delta: AggregateDelta = {}): Promise<boolean> {
    const result = await this.resultUpdate(id, from, patch, delta).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async applyResultReturning(id: string, from: TransactionState[], patch: TransactionResultPatch, delta: AggregateDelta = {}): Promise<Transaction | null> {
    const row = await this.resultUpdate(id, from, patch, delta).returningAll().executeTakeFirst();
    return row ? toTransaction(row) : null;
  }

  private resultUpdate(id: string, from: TransactionState[], patch: TransactionResultPatch, delta: AggregateDelta) {
    const { externalStatusCodes, sca, ...plain } = patch;
    const add = (eb: any, column: string, amount: number | undefined) => (amount ? eb(column, '+', amount) : undefined);
    let q = this.db
      .updateTable('transactions')
      .set((eb) => {
        const set: Record<string, unknown> = { ...plain };
        if (externalStatusCodes !== undefined) set.externalStatusCodes = text(externalStatusCodes);
        if (sca !== undefined) set.sca = text(sca);
        const columns = { authorized: 'authorizedAmount', captured: 'capturedAmount', voided: 'voidedAmount', paidOut: 'paidOutAmount' } as const;
        for (const [key, column] of Object.entries(columns)) {
          const expr = add(eb, column, delta[key as keyof AggregateDelta]);
          if (expr) set[column] = expr;
        }
        return set as never;
      })
      .where('id', '=', id)
      .where('state', 'in', from);
    // A capture never takes more than the authorization leaves; a void never more than is uncaptured.
    if (delta.captured || delta.voided) {
      const extra = (delta.captured ?? 0) + (delta.voided ?? 0);
      q = q.where(
        sql<boolean>`${sql.ref('captured_amount')} + ${sql.ref('voided_amount')} + ${extra} <= ${sql.ref('authorized_amount')} + ${delta.authorized ?? 0}`,
      );
    }
    return q;
  }

  async finishOperation(id: string, patch: OperationResultPatch): Promise<boolean> {
    const result = await this.db
      .updateTable('operations')
      .set({ ...patch, externalStatusCodes: text(patch.externalStatusCodes) })
      .where('id', '=', id)
      .where('state', '=', 'PROCESSING')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listFinalOperations(accountId: string, f: OperationFilter, offset: number, limit: number) {
    let q = this.db.selectFrom('operations').where('accountId', '=', accountId).where('state', 'in', ['SUCCESS', 'FAILED']);
    if (f.finalizedAfter !== undefined) q = q.where('finalizedAt', '>=', f.finalizedAfter);
    if (f.finalizedBefore !== undefined) q = q.where('finalizedAt', '<=', f.finalizedBefore);
    if (f.pointOfSaleIds?.length) q = q.where('pointOfSaleId', 'in', f.pointOfSaleIds);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('finalizedAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toOperation), total: Number(count.n) };
  }
}
