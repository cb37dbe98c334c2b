/**
 * Test databases: a fresh SQLite file per runtime, and on PostgreSQL a fresh schema per runtime
 * in TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test). PostgreSQL suites are
 * skipped, with a plain message, when the server cannot be reached.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.js';

export type StoreKind = 'sqlite' | 'postgres';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<boolean> | null = null;

/** Is PostgreSQL reachable? Asked once per test process. */
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

export const POSTGRES_SKIP_MESSAGE = `PostgreSQL not reachable at ${TEST_DATABASE_URL}: PostgreSQL suites skipped`;

export interface TestDatabase {
  config: DatabaseConfig;
  /** PostgreSQL: the schema to put on the search_path. */
  schema?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * `migrated`: the database is about to be migrated to the latest version anyway (a runtime or a
 * test store), so SQLite may start from a copy of an already migrated file. Tests of the
 * migrations themselves leave it out and get an empty file.
 */
export async function createTestDatabase(kind: StoreKind, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-test-'));
  if (kind === 'sqlite') {
    const file = path.join(dataDir, 'payments.db');
    if (options.migrated) fs.copyFileSync(await migratedSqliteTemplate(), file);
    return {
      config: { kind: 'sqlite', path: file },
      dataDir,
      async drop() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return {
    config: { kind: 'postgres', url: TEST_DATABASE_URL },
    schema,
    dataDir,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let sqliteTemplate: Promise<string> | null = null;

/**
 * A SQLite file with every migration applied, made once per test process: each runtime starts
 * from a copy (its own start then finds nothing to apply) instead of running the migrations again,
 * about 150 ms of CPU per runtime.
 */
function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    // Imported here: importing the storage sets the pg driver's type parsers process-wide, which
    // tests of raw pg clients that use this module do not expect.
    const [{ connect }, { migrate }] = await Promise.all([import('../../src/storage/connect.js'), import('../../src/storage/migrate.js')]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-template-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'migrated.db');
    const connection = connect({ kind: 'sqlite', path: file });
    try {
      await migrate(connection);
    } finally {
      await connection.close();
    }
    // Closed cleanly, the write-ahead log is folded into the file: the file alone is the database.
    if (fs.existsSync(`${file}-wal`)) throw new Error(`the migrated template left a write-ahead log beside ${file}`);
    return file;
  })();
  return sqliteTemplate;
}

/** The stores a suite should run on: always sqlite; postgres when reachable (else a note is printed once). */
export async function availableStores(): Promise<StoreKind[]> {
  if (await postgresReachable()) return ['sqlite', 'postgres'];
  console.log(`# ${POSTGRES_SKIP_MESSAGE}`);
  return ['sqlite'];
}
