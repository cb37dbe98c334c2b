/**
 * Acquirer agreements (023_acquirer_agreements): append-only rows, at most one current (removed_at
 * null) per account. `replace` runs inside a store transaction (its writes commit together).
 */
import type { Kysely, Selectable } from 'kysely';
import type { AcquirerAgreement, AcquirerName, NewAcquirerAgreement, ThreeDSProviderName } from '../../modules/acquirer-agreements/acquirer-agreement.js';
import type { AcquirerAgreementsRepository } from '../../modules/acquirer-agreements/acquirer-agreements.repository.js';
import type { Dialect } from '../connect.js';
import type { AcquirerAgreementsTable, Database } from '../schema.js';

function toAgreement(row: Selectable<AcquirerAgreementsTable>): AcquirerAgreement {
  return {
    id: row.id,
    accountId: row.accountId,
    acquirer: row.acquirer as AcquirerName,
    apiKeySealed: row.apiKeySealed,
    mcc: row.mcc,
    textOnStatement: row.textOnStatement,
    threeDSecure:
      row.threeDsProvider !== null && row.threeDsApiKeySealed !== null
        ? { provider: row.threeDsProvider as ThreeDSProviderName, apiKeySealed: row.threeDsApiKeySealed }
        : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    removedAt: row.removedAt,
  };
}

export class KyselyAcquirerAgreementsRepository implements AcquirerAgreementsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async current(accountId: string): Promise<AcquirerAgreement | null> {
    const row = await this.db.selectFrom('acquirerAgreements').selectAll().where('accountId', '=', accountId).where('removedAt', 'is', null).executeTakeFirst();
    return row ? toAgreement(row) : null;
  }

  async findById(id: string): Promise<AcquirerAgreement | null> {
    const row = await this.db.selectFrom('acquirerAgreements').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toAgreement(row) : null;
  }

  async replace(accountId: string, row: NewAcquirerAgreement, at: string): Promise<AcquirerAgreement> {
    // PostgreSQL: two PUTs of one account follow each other (the second would otherwise find no
    // current row to remove once the first commits, and its insert would meet the first's new row in
    // the unique index). NO KEY UPDATE: inserts that reference the account (payments) do not wait.
    // SQLite: a transaction is one unit of the group commit, which runs its units one at a time.
    if (this.dialect === 'postgres') await this.db.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
    const previous = await this.db
      .updateTable('acquirerAgreements')
      .set({ removedAt: at })
      .where('accountId', '=', accountId)
      .where('removedAt', 'is', null)
      .returning('createdAt')
      .executeTakeFirst();
    const inserted = await this.db
      .insertInto('acquirerAgreements')
      .values({
        id: row.id,
        accountId,
        acquirer: row.acquirer,
        apiKeySealed: row.apiKeySealed,
        mcc: row.mcc,
        textOnStatement: row.textOnStatement,
        threeDsProvider: row.threeDSecure?.provider ?? null,
        threeDsApiKeySealed: row.threeDSecure?.apiKeySealed ?? null,
        createdAt: previous?.createdAt ?? at,
        updatedAt: at,
        removedAt: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAgreement(inserted);
  }

  async remove(accountId: string, at: string): Promise<AcquirerAgreement | null> {
    const row = await this.db
      .updateTable('acquirerAgreements')
      .set({ removedAt: at })
      .where('accountId', '=', accountId)
      .where('removedAt', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toAgreement(row) : null;
  }
}
