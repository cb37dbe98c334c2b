/** The acquirer requests that are never repeated (024_acquirer_requests): one row per operation sent. */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../connect.js';
import { claimSeriesQuery, type SeriesClaim } from './payment-methods.js';
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

export class KyselyAcquirerRequestsRepository implements AcquirerRequestsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async recordSending(request: NewAcquirerRequest): Promise<boolean> {
    const result = await this.db
      .insertInto('acquirerRequests')
      .values({ ...request, inDoubtAt: null, inDoubtReason: null, acquirerReference: null, resolvedAt: null, resolution: null })
      .onConflict((oc) => oc.column('operationId').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
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
      // One statement, one commit: the claim and, only when it was made, the record.
      const row = await this.db
        .with('claim', (db) => claimSeriesQuery(db, claim))
        .with('recorded', (db) =>
          db
            .insertInto('acquirerRequests')
            .columns(['operationId', 'accountId', 'transactionId', 'acquirer', 'call', 'amount', 'currency', 'sentAt'])
            .expression(
              db
                .selectFrom('claim')
                .select([
                  sql.val(request.operationId).as('operationId'),
                  sql.val(request.accountId).as('accountId'),
                  sql.val(request.transactionId).as('transactionId'),
                  sql.val(request.acquirer).as('acquirer'),
                  sql.val(request.call).as('call'),
                  sql<number>`${request.amount}::bigint`.as('amount'),
                  sql.val(request.currency).as('currency'),
                  sql<string>`${request.sentAt}::timestamptz`.as('sentAt'),
                ]),
            )
            .onConflict((oc) => oc.column('operationId').doNothing())
            .returning('operationId'),
        )
        .selectNoFrom((eb) => [
          eb.selectFrom('claim').select('seriesReference').as('reference'),
          eb.exists(eb.selectFrom('recorded').select('operationId')).as('recorded'),
        ])
        .executeTakeFirstOrThrow();
      return { reference: row.reference ?? null, recorded: Boolean(row.recorded) };
    }
    // SQLite has no writing CTEs: the claim, then the record, each committed by itself (a claim
    // without its record is its own operation's, claimed again when it is driven again).
    const claimed = await claimSeriesQuery(this.db, claim).executeTakeFirst();
    if (!claimed?.seriesReference) return { reference: null, recorded: false };
    return { reference: claimed.seriesReference, recorded: await this.recordSending(request) };
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
