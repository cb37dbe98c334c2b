/**
 * Runs the SQL migrations of the connection's dialect (migrations/<dialect>/NNN_name.sql) in name
 * order, all pending ones in one transaction that first takes a lock, so that several processes
 * starting at once apply each migration exactly once.
 *
 * Why not Kysely's Migrator: it checks for its tables by introspecting every schema of the
 * database, which fails when another schema is dropped at the same moment (other deployments or
 * test schemas on one server). This runner only looks at its own schema. It keeps the Migrator's
 * bookkeeping tables (`kysely_migration`, `kysely_migration_lock`), so existing databases carry on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { Connection } from './connect.js';
import { assertNoViolations } from './constraint-report.js';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Any fixed int4: with the schema's hash, the key of the PostgreSQL advisory lock held while migrating. */
const ADVISORY_LOCK_KEY = 7_243_019;

interface MigrationFile {
  name: string;
  statements: string[];
}

function readMigrations(dir: string): MigrationFile[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => ({ name: file.replace(/\.sql$/, ''), statements: splitStatements(fs.readFileSync(path.join(dir, file), 'utf8')) }));
}

/** Splits a migration file on semicolons that end a line (the files contain no procedures). */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export interface MigrationReport {
  applied: string[];
}

export interface MigrateOptions {
  /** Applies the pending migrations up to and including this one (e.g. `011_job_indexes`) only; default all. */
  until?: string;
}

type AnyDb = Kysely<any>;

export async function migrate(connection: Connection, options: MigrateOptions = {}): Promise<MigrationReport> {
  if (connection.schema) await sql.raw(`create schema if not exists ${connection.schema}`).execute(connection.db);
  const migrations = readMigrations(path.join(MIGRATIONS_DIR, connection.dialect)).filter((m) => options.until === undefined || m.name <= options.until);
  const db = connection.db as unknown as AnyDb;
  let current: string | undefined;
  // SQLite rebuilds a table to change its constraints (create new, copy, drop old, rename), and the
  // DROP of a referenced table counts every child row as a violation even when the rename restores
  // the parent: the documented procedure turns foreign keys off for it. The pragma is a no-op inside a
  // transaction, so it is set around the migration transaction, and PRAGMA foreign_key_check runs
  // inside it before the commit: a migration that breaks a reference still fails and is rolled back.
  // (The row's one column is read by position: the CamelCasePlugin renames `foreign_keys`.)
  const foreignKeys = connection.dialect === 'sqlite' ? Number(Object.values((await sql<object>`pragma foreign_keys`.execute(db)).rows[0] ?? {})[0] ?? 0) : 0;
  if (foreignKeys) await sql`pragma foreign_keys = off`.execute(db);
  try {
    const report = await db.transaction().execute(async (trx) => {
      if (connection.dialect === 'postgres') {
        // Per schema: deployments (or test schemas) sharing a server do not wait for each other.
        await sql`select pg_advisory_xact_lock(${ADVISORY_LOCK_KEY}::int4, hashtext(current_schema()))`.execute(trx);
      }
      await sql`create table if not exists kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(trx);
      await sql`create table if not exists kysely_migration_lock (id varchar(255) not null primary key, is_locked integer not null default 0)`.execute(trx);
      if (connection.dialect === 'sqlite') {
        // A write first: it takes SQLite's write lock before anything is read, so a second process waits here.
        await sql`insert or replace into kysely_migration_lock (id, is_locked) values ('migration_lock', 0)`.execute(trx);
      }
      const done = new Set((await sql<{ name: string }>`select name from kysely_migration`.execute(trx)).rows.map((r) => r.name));
      const applied: string[] = [];
      for (const migration of migrations) {
        if (done.has(migration.name)) continue;
        current = migration.name;
        // Existing rows that a new CHECK would refuse stop the migration, each one named (never dropped).
        await assertNoViolations(trx, connection.dialect, migration.statements);
        for (const statement of migration.statements) await sql.raw(statement).execute(trx);
        await sql`insert into kysely_migration (name, timestamp) values (${migration.name}, ${new Date().toISOString()})`.execute(trx);
        applied.push(migration.name);
      }
      if (foreignKeys && applied.length > 0) await assertForeignKeys(trx);
      return { applied };
    });
    // Outside the group commit: the migration's commit is made durable here (wal-sync.ts).
    await connection.sync?.();
    return report;
  } catch (err) {
    throw new Error(`migration ${current ?? '(setup)'} failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    if (foreignKeys) await sql`pragma foreign_keys = on`.execute(db);
  }
}

/** SQLite: every reference still points at an existing row (foreign keys were off while migrating). */
async function assertForeignKeys(trx: AnyDb): Promise<void> {
  const broken = (await sql<{ table: string; rowid: number; parent: string; fkid: number }>`pragma foreign_key_check`.execute(trx)).rows;
  if (broken.length === 0) return;
  const listed = broken.slice(0, 20).map((r) => `${r.table} rowid ${r.rowid} → ${r.parent}`);
  throw new Error(`${broken.length} row(s) reference a missing row: ${listed.join('; ')}`);
}
