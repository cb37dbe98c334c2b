import { sql, type Kysely, type Selectable } from 'kysely';
import type { Keyset } from '../../shared/pagination.js';
import { joinedColumns, pickJoined } from './joined-columns.js';
import { PAYMENT_METHOD_COLUMNS, toPaymentMethod } from './payment-methods.js';
import { SUBSCRIPTION_COLUMNS, toSubscription } from './subscriptions.js';
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
  DriveContext,
  DriveRecord,
  PrimaryOperationRead,
  NewTransaction,
  OperationFilter,
  OperationResultPatch,
  ReservationAmounts,
  TransactionFilter,
  TransactionResultPatch,
  TransactionsRepository,
} from '../../modules/transactions/transactions.repository.js';
import { driveRecord } from '../../modules/transactions/transactions.repository.js';
import type { Dialect } from '../connect.js';
import type { Database, OperationsTable, TransactionsTable } from '../schema.js';
import { keyedTemplates, queryTemplate, type Params } from '../query-template.js';
import { finishOperation, TransactionUpdates, type TransactionUpdate } from './transaction-updates.js';
import { STALE_WRITE } from '../stale-write.js';
import { StaleWrite } from '../../shared/errors.js';
import { afterChange } from '../../modules/transactions/engine-rules.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
const text = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * The transaction of a row that holds its columns, and maybe others (a read's joined columns, which
 * are left out). Each field is named, not spread: the payment path reads wide joined rows, and a
 * rest/spread copy of one cost more than the statement that read it (a capture's read: ~130 µs of
 * JavaScript beside ~40 µs in SQLite). pending_refund_amount is a storage column for reservations
 * (reservationAmounts), not part of the transaction.
 */
export function toTransaction(row: Selectable<TransactionsTable>): Transaction {
  return {
    id: row.id,
    accountId: row.accountId,
    pointOfSaleId: row.pointOfSaleId,
    terminalId: row.terminalId,
    sessionId: row.sessionId,
    subscriptionId: row.subscriptionId,
    billingAgreementChargeId: row.billingAgreementChargeId,
    paymentMethodId: row.paymentMethodId,
    paymentMethodType: row.paymentMethodType,
    paymentMethodSubType: row.paymentMethodSubType,
    paymentMethodExpiry: row.paymentMethodExpiry,
    paymentMethodDisplayText: row.paymentMethodDisplayText,
    paymentMethodHolderName: row.paymentMethodHolderName,
    customerId: row.customerId,
    type: row.type as TransactionType,
    flow: row.flow as TransactionFlow,
    state: row.state as TransactionState,
    errorCode: row.errorCode,
    externalStatusCodes: json(row.externalStatusCodes),
    scaMode: row.scaMode,
    amount: row.amount,
    fee: row.fee,
    currency: row.currency,
    instantCapture: row.instantCapture,
    notificationUrl: row.notificationUrl,
    reference: row.reference,
    textOnStatement: row.textOnStatement,
    descriptor: row.descriptor,
    exemptions: json(row.exemptions),
    attributes: json(row.attributes),
    clientIp: row.clientIp,
    clientCountry: row.clientCountry,
    acquirer: row.acquirer,
    acquirerReference: row.acquirerReference,
    authorizedAmount: row.authorizedAmount,
    capturedAmount: row.capturedAmount,
    refundedAmount: row.refundedAmount,
    voidedAmount: row.voidedAmount,
    paidOutAmount: row.paidOutAmount,
    pendingAmount: row.pendingAmount,
    sca: json(row.sca),
    idempotencyKey: row.idempotencyKey,
    effects: row.effects as Transaction['effects'],
    acquirerAgreementId: row.acquirerAgreementId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finalizedAt: row.finalizedAt,
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
  return {
    ...row,
    type: row.type as OperationType,
    state: row.state as OperationState,
    chain: row.chain as Operation['chain'],
    externalStatusCodes: json(row.externalStatusCodes),
  };
}

export const operationRow = (op: Operation) => ({ ...op, externalStatusCodes: text(op.externalStatusCodes) });

/** One transaction row (compiled once per set of columns given: query-template.ts). */
export const insertTransactionRow = keyedTemplates((db: Kysely<Database>, row: Params<ReturnType<typeof transactionRow>>) =>
  db.insertInto('transactions').values(row),
);

/** One operation row (compiled once per set of columns given). */
export const insertOperationRow = keyedTemplates((db: Kysely<Database>, row: Params<ReturnType<typeof operationRow>>) =>
  db.insertInto('operations').values(row),
);

/** The update's statements by what they answer (transaction-updates.ts). */
const moveReturningRow = new TransactionUpdates('row');
const updateChecked = new TransactionUpdates('checked');
const updatePredicted = new TransactionUpdates('predicted');
const finishAndUpdatePredicted = new TransactionUpdates('finishedAndPredicted');

const COMPARATORS: Record<AmountMode, '=' | '<' | '>'> = { EQUAL: '=', LESS_THAN: '<', GREATER_THAN: '>' };

/** LIKE pattern for a prefix, with the wildcard characters of the prefix escaped. */
const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A transaction with its SUCCESS authorization or sale (capture, void, renew refer to it) and what
 * driving its operations reads besides them (DriveContext): compiled once.
 */
const selectWithPrimaryOperation = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db
    .selectFrom('transactions as t')
    .leftJoin('paymentMethods as pm', 'pm.id', 't.paymentMethodId')
    .leftJoin('pointsOfSale as pos', 'pos.id', 't.pointOfSaleId')
    .leftJoin('subscriptions as s', 's.id', 't.subscriptionId')
    .selectAll('t')
    .select(joinedColumns('pm', 'pm', PAYMENT_METHOD_COLUMNS))
    .select(joinedColumns('s', 'sub', SUBSCRIPTION_COLUMNS))
    .select(['pm.panSealed as pmPanSealed', 'pos.webhookAuthenticationSealed as posWebhookAuthenticationSealed'])
    .select((eb) =>
      eb
        .selectFrom('operations as o')
        .select('o.id')
        .whereRef('o.transactionId', '=', 't.id')
        .where('o.type', 'in', ['AUTHORIZATION', 'SALE'])
        // A literal, not bound: a bound value compared with the equality in a partial index's
        // condition (operations_settleable: state = 'SUCCESS') makes SQLite prepare the statement
        // again at every run, to check the new value against it — for this wide statement ~200 µs
        // of a capture's ~2 ms (bench capture). IN lists are compared without the bound values.
        .where('o.state', '=', sql.lit('SUCCESS'))
        .limit(1)
        .as('primaryOperationId'),
    )
    .where('t.id', '=', p.id)
    .where('t.accountId', '=', p.accountId),
);

/** The drive's one read (findForDrive): compiled once (query-template.ts). */
const selectForDrive = queryTemplate((db: Kysely<Database>, p: Params<{ operationId: string }>) =>
  db
    .selectFrom('operations as o')
    .innerJoin('transactions as t', 't.id', 'o.transactionId')
    .leftJoin('paymentMethods as pm', 'pm.id', 't.paymentMethodId')
    .leftJoin('pointsOfSale as pos', 'pos.id', 't.pointOfSaleId')
    .leftJoin('subscriptions as s', 's.id', 't.subscriptionId')
    .selectAll('t')
    .select(joinedColumns('pm', 'pm', PAYMENT_METHOD_COLUMNS))
    .select(joinedColumns('s', 'sub', SUBSCRIPTION_COLUMNS))
    .select(['pm.panSealed as pmPanSealed', 'pos.webhookAuthenticationSealed as posWebhookAuthenticationSealed'])
    .select([
      'o.id as opId',
      'o.pointOfSaleId as opPointOfSaleId',
      'o.type as opType',
      'o.state as opState',
      'o.amount as opAmount',
      'o.referenceOperationId as opReferenceOperationId',
      'o.errorCode as opErrorCode',
      'o.externalStatusCodes as opExternalStatusCodes',
      'o.acquirerReference as opAcquirerReference',
      'o.idempotencyKey as opIdempotencyKey',
      'o.chain as opChain',
      'o.createdAt as opCreatedAt',
      'o.finalizedAt as opFinalizedAt',
    ])
    .where('o.id', '=', p.operationId),
);

/**
 * The payment method's and the subscription's columns (the callback body's `subscription`) and the
 * sealed values, picked from a transaction row read with them (selectForDrive,
 * selectWithPrimaryOperation); the row is left as it is.
 */
function driveContextOf(row: Record<string, unknown> & { pmPanSealed: string | null; posWebhookAuthenticationSealed: string | null }): DriveContext {
  const pm = pickJoined(row, 'pm', PAYMENT_METHOD_COLUMNS);
  const subscription = pickJoined(row, 'sub', SUBSCRIPTION_COLUMNS);
  return {
    paymentMethod: pm && { paymentMethod: toPaymentMethod(pm as Parameters<typeof toPaymentMethod>[0]), panSealed: row.pmPanSealed ?? null },
    webhookAuthenticationSealed: row.posWebhookAuthenticationSealed ?? null,
    subscription: subscription && toSubscription(subscription as Parameters<typeof toSubscription>[0]),
  };
}

export class KyselyTransactionsRepository implements TransactionsRepository {
  /**
   * `predicting`: in a commit's first run, reserve and applyAnswer predict the row from the one
   * the caller read and check the prediction in the update itself (no read back; held on PostgreSQL,
   * so the commit waits once). A prediction that does not hold fails the commit with StaleWrite,
   * and the store runs the commit again with `predicting` off, reading the rows back (store.ts).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly predicting = false,
  ) {}

  async move(id: string, from: TransactionState[], patch: TransactionResultPatch): Promise<Transaction | null> {
    return this.updateReturning({ id, from, patch, delta: {} });
  }

  async reserve(id: string, from: TransactionState[], patch: TransactionResultPatch, delta: AggregateDelta, asRead?: Transaction): Promise<Transaction | null> {
    const update = { id, from, patch, delta };
    if (!this.predicting || !asRead) return this.updateReturning(update);
    const expected = afterChange(asRead, patch, delta);
    await this.updateExpecting(update, expected);
    return expected;
  }

  async applyAnswer(
    operation: { id: string; patch: OperationResultPatch },
    change: { id: string; from: TransactionState[]; patch: TransactionResultPatch; delta?: AggregateDelta },
    asRead: Transaction,
  ): Promise<{ finished: boolean; transaction: Transaction | null }> {
    const update = { ...change, delta: change.delta ?? {} };
    if (!this.predicting) {
      const finished = await finishOperation(this.db, operation);
      return { finished, transaction: await this.updateReturning(update) };
    }
    const expected = afterChange(asRead, update.patch, update.delta);
    if (this.dialect === 'postgres') {
      // One held statement: the operation finished and the transaction updated, or the commit refused.
      await finishAndUpdatePredicted.execute(this.db, update, expected, operation);
    } else {
      // In-process statements cost no round trip: applied, and checked as they go.
      if (!(await finishOperation(this.db, operation))) throw new StaleWrite(STALE_WRITE);
      await this.updateExpecting(update, expected);
    }
    return { finished: true, transaction: expected };
  }

  private async updateReturning(update: TransactionUpdate): Promise<Transaction | null> {
    const [row] = await moveReturningRow.execute(this.db, update);
    return row ? toTransaction(row as Selectable<TransactionsTable>) : null;
  }

  /** `update`, refused with StaleWrite unless it leaves the row `expected` (held on PostgreSQL). */
  private async updateExpecting(update: TransactionUpdate, expected: Transaction): Promise<void> {
    if (this.dialect === 'postgres') {
      await updatePredicted.execute(this.db, update, expected);
      return;
    }
    const [row] = await updateChecked.execute(this.db, update, expected);
    if (Number((row as { matches?: number } | undefined)?.matches) !== 1) throw new StaleWrite(STALE_WRITE);
  }

  async insert(transactions: NewTransaction[]): Promise<void> {
    if (transactions.length === 1) {
      await insertTransactionRow.execute(this.db, transactionRow(transactions[0]!));
      return;
    }
    for (let i = 0; i < transactions.length; i += 200) {
      await this.db
        .insertInto('transactions')
        .values(transactions.slice(i, i + 200).map(transactionRow))
        .execute();
    }
  }

  async insertOperations(operations: Operation[]): Promise<void> {
    if (operations.length === 1) {
      await insertOperationRow.execute(this.db, operationRow(operations[0]!));
      return;
    }
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

  async findWithPrimaryOperation(accountId: string, id: string): Promise<PrimaryOperationRead | null> {
    const row = await selectWithPrimaryOperation.executeTakeFirst(this.db, { id, accountId });
    if (!row) return null;
    // The row is read in place, never copied (toTransaction, driveContextOf).
    const drive = driveContextOf(row);
    return { transaction: toTransaction(row), primaryOperationId: row.primaryOperationId ?? null, drive };
  }

  async findForDrive(operationId: string): Promise<DriveRecord | null> {
    // One statement for what driving an operation needs: the operation, its transaction, the
    // payment method with its sealed number (for the acquirer call and the callback's card) and
    // the point of sale's callback authorization (for the callback row), the subscription (for the
    // callback's body).
    const row = await selectForDrive.executeTakeFirst(this.db, { operationId });
    if (!row) return null;
    // The row is read in place, never copied (toTransaction, driveContextOf).
    const drive = driveContextOf(row);
    const transaction = toTransaction(row);
    const operation = toOperation({
      id: row.opId,
      accountId: transaction.accountId,
      transactionId: transaction.id,
      pointOfSaleId: row.opPointOfSaleId,
      type: row.opType,
      state: row.opState,
      amount: row.opAmount,
      referenceOperationId: row.opReferenceOperationId,
      errorCode: row.opErrorCode,
      externalStatusCodes: row.opExternalStatusCodes,
      acquirerReference: row.opAcquirerReference,
      idempotencyKey: row.opIdempotencyKey,
      chain: row.opChain,
      createdAt: row.opCreatedAt,
      finalizedAt: row.opFinalizedAt,
    });
    return driveRecord(transaction, operation, drive);
  }

  async reservationAmounts(id: string): Promise<ReservationAmounts | null> {
    const row = await this.db
      .selectFrom('transactions')
      .select(['authorizedAmount', 'capturedAmount', 'refundedAmount', 'voidedAmount', 'pendingAmount', 'pendingRefundAmount'])
      .where('id', '=', id)
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
