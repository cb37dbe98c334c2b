import { sql, type Kysely, type Selectable } from 'kysely';
import type { PointOfSale, PointOfSaleType } from '../../modules/points-of-sale/point-of-sale.js';
import type { PointsOfSaleRepository } from '../../modules/points-of-sale/points-of-sale.repository.js';
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

export function toPointOfSale(row: Omit<Selectable<PointsOfSaleTable>, 'webhookAuthenticationSealed'>): PointOfSale {
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

  async insert(pointOfSale: PointOfSale, webhookAuthenticationSealed: string): Promise<void> {
    await this.db
      .insertInto('pointsOfSale')
      .values({ ...pointOfSale, hostedConfiguration: JSON.stringify(pointOfSale.hostedConfiguration), webhookAuthenticationSealed })
      .execute();
  }

  async findById(accountId: string, id: string) {
    const row = await selectPointOfSale.executeTakeFirst(this.db, { id, accountId });
    return row ? { ...toPointOfSale(row), webhookAuthenticationSealed: row.webhookAuthenticationSealed } : null;
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
