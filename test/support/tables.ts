/** The tables of a test database, for the suites that scan every row (secrets never in plain text). */
import { type Kysely, sql } from 'kysely';
import type { StoreKind } from './stores.js';

export async function tableNames(db: Kysely<any>, kind: StoreKind): Promise<string[]> {
  const rows =
    kind === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
      : await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  return rows.rows.map((r) => r.name);
}
