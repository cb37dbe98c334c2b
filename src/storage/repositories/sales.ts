import { sql, type Kysely, type Selectable } from 'kysely';
import { type SaleStage, type TerminalSale } from '../../modules/sales/sale.js';
import type { SalesRepository } from '../../modules/sales/sales.repository.js';
import type { Terminal } from '../../modules/terminals/terminal.js';
import type { NewTransaction } from '../../modules/transactions/transactions.repository.js';
import type { Database, TerminalSalesTable } from '../schema.js';
import { transactionRow } from './transactions.js';

const bool = (value: number | null): boolean | null => (value === null ? null : value === 1);
const bit = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);

const toSale = ({ suppressAppNotifications, switchBackTimeout, activityToResume, surcharge, dcc, ...row }: Selectable<TerminalSalesTable>): TerminalSale => ({
  ...row,
  stage: row.stage as SaleStage,
  request: {
    suppressAppNotifications: suppressAppNotifications === 1,
    // int4 on PostgreSQL, integer on SQLite: a number on both.
    switchBackTimeout: switchBackTimeout === null ? null : Number(switchBackTimeout),
    activityToResume,
    surcharge: bool(surcharge),
    dcc: bool(dcc),
  },
});

const saleRow = ({ request, ...sale }: TerminalSale) => ({
  ...sale,
  suppressAppNotifications: request.suppressAppNotifications ? 1 : 0,
  switchBackTimeout: request.switchBackTimeout,
  activityToResume: request.activityToResume,
  surcharge: bit(request.surcharge),
  dcc: bit(request.dcc),
});

/**
 * The predicate of the partial unique index transactions_terminal_busy (006_sales.sql), spelled
 * with literals: both databases infer the ON CONFLICT target only when it implies the index predicate.
 */
const BUSY_PREDICATE = sql<boolean>`flow = 'SALE' and state in ('PENDING', 'PROCESSING')`;

export class KyselySalesRepository implements SalesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertIfTerminalFree(transaction: NewTransaction, sale: TerminalSale): Promise<boolean> {
    const result = await this.db
      .insertInto('transactions')
      .values(transactionRow(transaction))
      .onConflict((oc) => oc.column('terminalId').where(BUSY_PREDICATE).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
    await this.db.insertInto('terminalSales').values(saleRow(sale)).execute();
    return true;
  }

  async insertRejected(transaction: NewTransaction): Promise<void> {
    await this.db.insertInto('transactions').values(transactionRow(transaction)).execute();
  }

  async find(transactionId: string): Promise<TerminalSale | null> {
    const row = await this.db.selectFrom('terminalSales').selectAll().where('transactionId', '=', transactionId).executeTakeFirst();
    return row ? toSale(row) : null;
  }

  async activeOnTerminal(terminalId: string): Promise<TerminalSale | null> {
    // The transaction's state is the truth about "busy" (the same rule as the unique index).
    const row = await this.db
      .selectFrom('terminalSales')
      .innerJoin('transactions', 'transactions.id', 'terminalSales.transactionId')
      .selectAll('terminalSales')
      .where('terminalSales.terminalId', '=', terminalId)
      .where('transactions.state', 'in', ['PENDING', 'PROCESSING'])
      .orderBy('terminalSales.createdAt', 'desc')
      .executeTakeFirst();
    return row ? toSale(row) : null;
  }

  async moveStage(
    transactionId: string,
    from: SaleStage,
    to: SaleStage,
    fields: Partial<Pick<TerminalSale, 'dispatchedAt' | 'expiresAt' | 'cardPresentedAt' | 'endedAt'>> & { updatedAt: string },
    notExpiredAt?: string,
  ): Promise<boolean> {
    let q = this.db
      .updateTable('terminalSales')
      .set({ ...fields, stage: to })
      .where('transactionId', '=', transactionId)
      .where('stage', '=', from);
    if (notExpiredAt !== undefined) q = q.where('expiresAt', '>', notExpiredAt);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async findTerminal(terminalId: string): Promise<Terminal | null> {
    const row = await this.db.selectFrom('terminals').selectAll().where('id', '=', terminalId).executeTakeFirst();
    return row ? { ...row, fallback: row.fallback === 1 } : null;
  }
}
