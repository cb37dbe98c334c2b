import { sql, type Kysely, type Selectable } from 'kysely';
import type { PointOfSale, PointOfSaleType } from '../../modules/points-of-sale/point-of-sale.js';
import type { PointsOfSaleRepository, StoredPointOfSale } from '../../modules/points-of-sale/points-of-sale.repository.js';
import type { SealedSigningSecrets } from '../../shared/signing.js';
import type { Database, PointsOfSaleTable } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

/** Compiled once (query-template.ts). */
const selectPointOfSale = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('pointsOfSale').selectAll().where('id', '=', p.id).where('accountId', '=', p.accountId),
);

/** The columns of a point of sale without its sealed callback authorization (a join that reads one aliases them). */
export const POINT_OF_SALE_COLUMNS = [
  'id',
  'accountId',
  'name',
  'type',
  'domain',
  'descriptor',
  'hostedConfiguration',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof PointsOfSaleTable>;

export function toPointOfSale(row: Pick<Selectable<PointsOfSaleTable>, (typeof POINT_OF_SALE_COLUMNS)[number]>): PointOfSale {
  return {
    id: row.id,
    accountId: row.accountId,
    name: row.name,
    type: row.type as PointOfSaleType,
    domain: row.domain,
    descriptor: row.descriptor,
    hostedConfiguration: JSON.parse(row.hostedConfiguration),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export class KyselyPointsOfSaleRepository implements PointsOfSaleRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(pointOfSale: PointOfSale, webhookAuthenticationSealed: string, signingSecretSealed?: string): Promise<void> {
    await this.db
      .insertInto('pointsOfSale')
      .values({
        ...pointOfSale,
        hostedConfiguration: JSON.stringify(pointOfSale.hostedConfiguration),
        webhookAuthenticationSealed,
        signingSecretSealed: signingSecretSealed ?? null,
        previousSigningSecretSealed: null,
        previousSigningSecretExpiresAt: null,
      })
      .execute();
  }

  async findById(accountId: string, id: string): Promise<StoredPointOfSale | null> {
    const row = await selectPointOfSale.executeTakeFirst(this.db, { id, accountId });
    return row
      ? {
          ...toPointOfSale(row),
          webhookAuthenticationSealed: row.webhookAuthenticationSealed,
          signingSecretSealed: row.signingSecretSealed,
          previousSigningSecretSealed: row.previousSigningSecretSealed,
          previousSigningSecretExpiresAt: row.previousSigningSecretExpiresAt,
        }
      : null;
  }

  async fillSigningSecret(accountId: string, id: string, signingSecretSealed: string): Promise<void> {
    await this.db
      .updateTable('pointsOfSale')
      .set({ signingSecretSealed })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('signingSecretSealed', 'is', null)
      .execute();
  }

  async replaceSigningSecrets(accountId: string, id: string, expected: string, next: SealedSigningSecrets, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('pointsOfSale')
      .set({ ...next, updatedAt: now })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('signingSecretSealed', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async list(accountId: string, offset: number, limit: number) {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('pointsOfSale')
        .selectAll()
        .where('accountId', '=', accountId)
        .orderBy('createdAt', 'desc')
        .orderBy('id', 'desc')
        .offset(offset)
        .limit(limit)
        .execute(),
      this.db
        .selectFrom('pointsOfSale')
        .select(sql<number>`count(*)`.as('n'))
        .where('accountId', '=', accountId)
        .executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toPointOfSale), total: Number(count.n) };
  }
}
