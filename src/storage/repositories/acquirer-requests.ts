/** The acquirer requests that are never repeated (024_acquirer_requests): one row per operation sent. */
import type { Kysely, Selectable } from 'kysely';
import type { AcquirerCall } from '../../connectors/acquirer.js';
import type {
  AcquirerRequest,
  AcquirerRequestsRepository,
  InDoubtResolution,
  NewAcquirerRequest,
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
  constructor(private readonly db: Kysely<Database>) {}

  async recordSending(request: NewAcquirerRequest): Promise<boolean> {
    const result = await this.db
      .insertInto('acquirerRequests')
      .values({ ...request, inDoubtAt: null, inDoubtReason: null, acquirerReference: null, resolvedAt: null, resolution: null })
      .onConflict((oc) => oc.column('operationId').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
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
