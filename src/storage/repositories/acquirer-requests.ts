/** The acquirer requests that are never repeated (024_acquirer_requests): one row per operation sent. */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../connect.js';
import { claimSeriesQuery, claimSeriesStatement, type SeriesClaim } from './payment-methods.js';
import { queryTemplate, type Params } from '../query-template.js';
import type { AcquirerCall } from '../../connectors/acquirer.js';
import type {
  AcquirerRequest,
  AcquirerRequestsRepository,
  InDoubtResolution,
  NewAcquirerRequest,
  SendingInSeries,
  SeriesOfRequest,
} from '../../modules/transactions/acquirer-requests.repository.js';
import type { AcquirerRequestsTable, Database } from '../schema.js';

// The records made before every request to a real acquirer: templates (built and compiled once).
const insertRequest = queryTemplate((db: Kysely<Database>, p: Params<NewAcquirerRequest>) =>
  db
    .insertInto('acquirerRequests')
    .values({
      operationId: p.operationId,
      accountId: p.accountId,
      transactionId: p.transactionId,
      acquirer: p.acquirer,
      call: p.call,
      amount: p.amount,
      currency: p.currency,
      sentAt: p.sentAt,
      inDoubtAt: null,
      inDoubtReason: null,
      acquirerReference: null,
      resolvedAt: null,
      resolution: null,
    })
    .onConflict((oc) => oc.column('operationId').doNothing()),
);

/** PostgreSQL: one statement, one commit: the card's series claimed and, only when it was, the request recorded. */
const claimAndInsertRequest = queryTemplate((db: Kysely<Database>, p: Params<NewAcquirerRequest & { paymentMethodId: string; staleBefore: string }>) =>
  db
    .with('claim', (qc) =>
      claimSeriesQuery(qc, { accountId: p.accountId, id: p.paymentMethodId, operationId: p.operationId, at: p.sentAt, staleBefore: p.staleBefore }),
    )
    .with('recorded', (qc) =>
      qc
        .insertInto('acquirerRequests')
        .columns(['operationId', 'accountId', 'transactionId', 'acquirer', 'call', 'amount', 'currency', 'sentAt'])
        .expression(
          qc
            .selectFrom('claim')
            .select([
              sql.val(p.operationId).as('operationId'),
              sql.val(p.accountId).as('accountId'),
              sql.val(p.transactionId).as('transactionId'),
              sql.val(p.acquirer).as('acquirer'),
              sql.val(p.call).as('call'),
              sql<number>`${p.amount}::bigint`.as('amount'),
              sql.val(p.currency).as('currency'),
              sql<string>`${p.sentAt}::timestamptz`.as('sentAt'),
            ]),
        )
        .onConflict((oc) => oc.column('operationId').doNothing())
        .returning('operationId'),
    )
    .selectNoFrom((eb) => [
      eb.selectFrom('claim').select('seriesReference').as('reference'),
      eb.exists(eb.selectFrom('recorded').select('operationId')).as('recorded'),
    ]),
);

function toRequest(row: Selectable<AcquirerRequestsTable>): AcquirerRequest {
  return {
    operationId: row.operationId,
    accountId: row.accountId,
    transactionId: row.transactionId,
    acquirer: row.acquirer,
    call: row.call as AcquirerCall,
    amount: Number(row.amount),
    currency: row.currency,
    sentAt: row.sentAt,
    inDoubtAt: row.inDoubtAt,
    inDoubtReason: row.inDoubtReason,
    acquirerReference: row.acquirerReference,
    resolvedAt: row.resolvedAt,
    resolution: row.resolution as InDoubtResolution | null,
  };
}

/** Runs `work` as one unit of SQLite's group commit (store.ts): its statements commit together. */
export type SqliteUnit = <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

export class KyselyAcquirerRequestsRepository implements AcquirerRequestsRepository {
  /** `unit`: SQLite outside a transaction, where each statement would otherwise commit by itself. */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly unit?: SqliteUnit,
  ) {}

  async recordSending(request: NewAcquirerRequest): Promise<boolean> {
    const result = await insertRequest.executeTakeFirst(this.db, request);
    return Number(result?.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async recordSendingInSeries(request: NewAcquirerRequest, series: SeriesOfRequest): Promise<SendingInSeries> {
    const claim: SeriesClaim = {
      accountId: request.accountId,
      id: series.paymentMethodId,
      operationId: request.operationId,
      at: request.sentAt,
      staleBefore: series.staleBefore,
    };
    if (this.dialect === 'postgres') {
      const row = await claimAndInsertRequest.executeTakeFirst(this.db, {
        ...request,
        staleBefore: series.staleBefore,
        paymentMethodId: series.paymentMethodId,
      });
      return { reference: row?.reference ?? null, recorded: Boolean(row?.recorded) };
    }
    // SQLite has no writing CTEs: the claim, then (once claimed) the record, in one commit.
    const claimAndRecord = async (db: Kysely<Database>): Promise<SendingInSeries> => {
      const reference = (await claimSeriesStatement.executeTakeFirst(db, claim))?.seriesReference ?? null;
      if (!reference) return { reference: null, recorded: false };
      const inserted = await insertRequest.executeTakeFirst(db, request);
      return { reference, recorded: Number(inserted?.numInsertedOrUpdatedRows ?? 0) === 1 };
    };
    return this.unit ? this.unit(claimAndRecord) : claimAndRecord(this.db);
  }

  async find(operationId: string): Promise<AcquirerRequest | null> {
    const row = await this.db.selectFrom('acquirerRequests').selectAll().where('operationId', '=', operationId).executeTakeFirst();
    return row ? toRequest(row) : null;
  }

  async forgetUnsent(operationId: string): Promise<void> {
    await this.db.deleteFrom('acquirerRequests').where('operationId', '=', operationId).where('inDoubtAt', 'is', null).execute();
  }

  async markInDoubt(operationId: string, reason: string, acquirerReference: string | null, at: string): Promise<void> {
    await this.db
      .updateTable('acquirerRequests')
      .set({ inDoubtAt: at, inDoubtReason: reason, acquirerReference })
      .where('operationId', '=', operationId)
      .where('inDoubtAt', 'is', null)
      .execute();
  }

  async markResolved(operationId: string, resolution: InDoubtResolution, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('acquirerRequests')
      .set({ resolvedAt: at, resolution })
      .where('operationId', '=', operationId)
      .where('inDoubtAt', 'is not', null)
      .where('resolvedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listInDoubt(limit: number, accountId?: string): Promise<AcquirerRequest[]> {
    let q = this.db.selectFrom('acquirerRequests').selectAll().where('inDoubtAt', 'is not', null).where('resolvedAt', 'is', null);
    if (accountId !== undefined) q = q.where('accountId', '=', accountId);
    const rows = await q.orderBy('inDoubtAt').orderBy('operationId').limit(limit).execute();
    return rows.map(toRequest);
  }

  async unresolvedInDoubt(operationIds: readonly string[]): Promise<string[]> {
    if (operationIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('acquirerRequests')
      .select('operationId')
      .where('operationId', 'in', operationIds)
      .where('inDoubtAt', 'is not', null)
      .where('resolvedAt', 'is', null)
      .execute();
    return rows.map((row) => row.operationId);
  }
}
