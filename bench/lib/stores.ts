/**
 * Benchmark databases: a SQLite file under .bench/ or a PostgreSQL schema `bench_<name>`, opened
 * through the real runtime (migrations, services, HTTP app). A seeded database is kept with a
 * fingerprint of what it was seeded from, so that a re-run reuses it and a change of the seed or
 * of the schema it depends on seeds it again.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type Config, type DatabaseConfig, loadConfig, MAX_INGESTION_CAP } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import type { ConnectOptions } from '../../src/storage/connect.js';
import { sqliteDriver } from '../../src/storage/sqlite/driver.js';
import type { Report } from './report.js';

export type StoreKind = 'sqlite' | 'postgres';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BENCH_DIR = path.join(REPO_ROOT, '.bench');
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** null when PostgreSQL answers, else why not. */
export async function postgresUnreachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message || err.name : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL without its password, for printing. */
export const safeUrl = (url: string): string => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/** The stores a suite measures, in order: SQLite, then PostgreSQL when it answers (else one line saying why not). */
export async function* measuredStores(report: Report, figures: string): AsyncGenerator<StoreKind> {
  const only = process.env.BENCH_STORES?.split(',').map((s) => s.trim());
  const wanted = (kind: StoreKind) => !only || only.includes(kind);
  if (wanted('sqlite')) {
    report.note(`SQLite driver: ${sqliteDriver()} on Node ${process.versions.node} (src/storage/sqlite/driver.ts)`);
    yield 'sqlite';
  }
  if (!wanted('postgres')) return;
  const why = await postgresUnreachable();
  if (why) {
    report.section('postgres');
    report.skip(`PostgreSQL ${figures}`, `${safeUrl(BENCH_DATABASE_URL)} not reachable (${why}); set BENCH_DATABASE_URL or TEST_DATABASE_URL`);
    return;
  }
  yield 'postgres';
}

export interface BenchDatabase {
  kind: StoreKind;
  name: string;
  config: DatabaseConfig;
  /** PostgreSQL: the schema put first on the search_path. */
  schema?: string;
}

export function benchDatabase(kind: StoreKind, name: string): BenchDatabase {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bench database name ${name}: use a-z, 0-9 and _`);
  if (kind === 'sqlite') return { kind, name, config: { kind: 'sqlite', path: path.join(BENCH_DIR, `${name}.sqlite.db`) } };
  return { kind, name, config: { kind: 'postgres', url: BENCH_DATABASE_URL }, schema: `bench_${name}` };
}

/** Empties the database: the SQLite file with its WAL, or the PostgreSQL schema (created again, empty). */
export async function resetDatabase(db: BenchDatabase): Promise<void> {
  if (db.config.kind === 'sqlite') {
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(db.config.path + suffix, { force: true });
    return;
  }
  await withPgClient(db, async (client) => {
    await client.query(`drop schema if exists ${db.schema} cascade`);
    await client.query(`create schema ${db.schema}`);
  });
}

/** A plain pg client with the database's schema first on the search_path. */
export async function withPgClient<T>(db: BenchDatabase, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await client.connect();
  try {
    if (db.schema) {
      // Created up front: pool clients connecting at once would race on "create schema if not exists".
      await client.query(`create schema if not exists ${db.schema}`);
      await client.query(`set search_path to ${db.schema}`);
    }
    return await fn(client);
  } finally {
    await client.end();
  }
}

// Fixed secrets: the database outlives one run and sealed values in it must open again.
const OPERATOR_KEY = 'op_bench_operator_key_not_secret';
const VAULT_KEY = createHash('sha256').update('payments-bench-vault').digest();

/**
 * Production-like settings, except: no rate limits and the highest ingestion caps (they would
 * answer 429; the caps are still counted, as in production), no log lines, no workers.
 */
export function benchConfig(db: BenchDatabase, overrides: Partial<Config> = {}): Config {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  return {
    // The defaults of an empty environment, so that settings added later keep their defaults here.
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    database: db.config,
    dataDir: BENCH_DIR,
    operatorKey: OPERATOR_KEY,
    sandbox: false,
    sandboxLatencyMs: 0,
    rateLimits: 'off',
    mitCapPerMinute: MAX_INGESTION_CAP,
    mitBatchCapPerMinute: MAX_INGESTION_CAP,
    allowPrivateUrls: true,
    vaultKey: VAULT_KEY,
    publicUrl: 'http://127.0.0.1:8080',
    logLevel: 'silent',
    workers: false,
    shutdownTimeoutMs: 2000,
    // The lag bound is on by default; BENCH_MAX_LAG_MS=0 measures the service without it.
    ...(process.env.BENCH_MAX_LAG_MS ? { maxLagMs: Number(process.env.BENCH_MAX_LAG_MS) } : {}),
    ...overrides,
  };
}

/** `workers`: start the job runner (payment drive, callbacks); `jobConcurrency`: else the runtime's default. */
export async function openRuntime(
  db: BenchDatabase,
  overrides: Partial<Config> = {},
  options: { workers?: boolean; jobConcurrency?: number; connectOptions?: ConnectOptions } = {},
): Promise<Runtime> {
  if (db.schema) await withPgClient(db, async () => undefined);
  const config = benchConfig(db, overrides);
  const runtime = await createRuntime(config, {
    logger: createLogger(config.logLevel),
    connectOptions: { ...(db.schema ? { schema: db.schema } : {}), ...options.connectOptions },
    startWorkers: options.workers ?? false,
    ...(options.jobConcurrency ? { jobConcurrency: options.jobConcurrency } : {}),
  });
  await runtime.app.ready();
  return runtime;
}

/** Listens on a free loopback port; returns the base URL. */
export async function serve(runtime: Runtime): Promise<string> {
  await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  const address = runtime.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

const SEED_SETTING = 'bench.seed';

export interface Seeded<M> {
  runtime: Runtime;
  meta: M;
  /** True when the database was seeded in this run, false when the cached one was reused. */
  seeded: boolean;
  seedSeconds: number;
}

/**
 * Opens a seeded database: the cached one when its fingerprint matches, else an empty one on
 * which `seed` runs (it may close the runtime it is given; it returns the metadata to keep).
 */
export async function openSeeded<M>(db: BenchDatabase, fingerprint: string, seed: (runtime: Runtime) => Promise<M>): Promise<Seeded<M>> {
  let runtime = await openRuntime(db);
  const saved = await runtime.store.settings.get(SEED_SETTING);
  if (saved) {
    const parsed = JSON.parse(saved) as { fingerprint: string; meta: M };
    if (parsed.fingerprint === fingerprint) return { runtime, meta: parsed.meta, seeded: false, seedSeconds: 0 };
  }
  await runtime.close();
  await resetDatabase(db);
  const started = performance.now();
  runtime = await openRuntime(db);
  const meta = await seed(runtime);
  await runtime.close();
  runtime = await openRuntime(db);
  await runtime.store.settings.set(SEED_SETTING, JSON.stringify({ fingerprint, meta }));
  return { runtime, meta, seeded: true, seedSeconds: (performance.now() - started) / 1000 };
}

/**
 * A short hash of the migration statements that match `pattern` (e.g. the CREATE statements of
 * the transactions table and its indexes): a cached database migrated before such a statement
 * changed would not have it, so it is seeded again. Statements added by later migrations need
 * no re-seed — opening the cached database applies them.
 */
export function migrationFingerprint(kind: StoreKind, pattern: RegExp, extra: string): string {
  const dir = path.join(REPO_ROOT, 'src/storage/migrations', kind);
  const hash = createHash('sha256').update(extra);
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const statements = fs
      .readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => !l.trim().startsWith('--'))
      .join('\n')
      .split(/;\s*$/m)
      .map((s) => s.trim())
      .filter((s) => pattern.test(s));
    for (const s of statements) hash.update(s);
  }
  return hash.digest('hex').slice(0, 16);
}
