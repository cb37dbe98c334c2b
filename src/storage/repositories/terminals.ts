import { sql, type Kysely, type Selectable } from 'kysely';
import type { Terminal } from '../../modules/terminals/terminal.js';
import type { TerminalFilter, TerminalsRepository } from '../../modules/terminals/terminals.repository.js';
import type { Database, TerminalsTable } from '../schema.js';

const toTerminal = (row: Selectable<TerminalsTable>): Terminal => ({ ...row, fallback: row.fallback === 1 });

export class KyselyTerminalsRepository implements TerminalsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(terminal: Terminal): Promise<void> {
    if (terminal.fallback) {
      await this.db.updateTable('terminals').set({ fallback: 0 }).where('pointOfSaleId', '=', terminal.pointOfSaleId).where('fallback', '=', 1).execute();
    }
    await this.db
      .insertInto('terminals')
      .values({ ...terminal, fallback: terminal.fallback ? 1 : 0 })
      .execute();
  }

  async findById(accountId: string, id: string): Promise<Terminal | null> {
    const row = await this.db.selectFrom('terminals').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toTerminal(row) : null;
  }

  async countForPointOfSale(pointOfSaleId: string): Promise<number> {
    const row = await this.db
      .selectFrom('terminals')
      .select(sql<number>`count(*)`.as('n'))
      .where('pointOfSaleId', '=', pointOfSaleId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async findFallback(pointOfSaleId: string): Promise<Terminal | null> {
    const row = await this.db.selectFrom('terminals').selectAll().where('pointOfSaleId', '=', pointOfSaleId).where('fallback', '=', 1).executeTakeFirst();
    return row ? toTerminal(row) : null;
  }

  async list(accountId: string, filter: TerminalFilter, offset: number, limit: number) {
    let query = this.db.selectFrom('terminals').where('accountId', '=', accountId);
    if (filter.pointOfSaleId) query = query.where('pointOfSaleId', '=', filter.pointOfSaleId);
    if (filter.deviceId) query = query.where('deviceId', '=', filter.deviceId);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toTerminal), total: Number(count.n) };
  }
}
