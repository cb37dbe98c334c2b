/**
 * A request's statements replayed on the store without the service: what the store alone does with
 * them, the ceiling of any service that sends the same statements (issue 10's capture figure).
 *
 * `recordStatements` notes every statement the store is sent while `fn` runs, with its parameters
 * (PostgreSQL: node-postgres's queries; SQLite: the connection's prepared statements). `replay` then
 * runs that list again for other rows of the same shape — `substitute` gives each copy its own
 * values — as fast as the store takes them:
 *   - PostgreSQL: `connections` clients, each one copy after another, one round trip per statement
 *     (no pipelining, no joined commits: those are the service's own);
 *   - SQLite: one connection, `connections` copies per group commit (each transaction of the list
 *     run once for the group, its WAL synced after COMMIT, as write-batcher.ts does; no savepoints).
 */
import pg from 'pg';
import { openSqlite } from '../../src/storage/sqlite-driver.js';
import type { SqliteStatement } from '../../src/storage/sqlite-handle.js';
import { MAIN_AUTOCHECKPOINT_PAGES } from '../../src/storage/wal-checkpointer.js';
import { WalSync } from '../../src/storage/wal-sync.js';
import { type KyselyStatement, StatementCache } from '../../src/storage/write-batcher.js';
import { BENCH_DATABASE_URL, type BenchDatabase } from './stores.js';

export interface RecordedStatement {
  sql: string;
  parameters: unknown[];
}

const CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;
const BEGIN = /^\s*begin\b/i;
const COMMIT = /^\s*commit\b/i;

/** The statements sent to the store while `fn` runs, in order. */
export async function recordStatements(kind: BenchDatabase['kind'], fn: () => Promise<void>): Promise<RecordedStatement[]> {
  const log: RecordedStatement[] = [];
  const restore = kind === 'postgres' ? recordPostgres(log) : recordSqlite(log);
  try {
    await fn();
  } finally {
    restore();
  }
  return log;
}

function recordPostgres(log: RecordedStatement[]): () => void {
  const query = (pg as unknown as { Query: { prototype: { submit(...args: unknown[]): unknown } } }).Query.prototype;
  const submit = query.submit;
  query.submit = function (this: { text?: string; values?: unknown[] }, ...args: unknown[]) {
    if (this.text) log.push({ sql: this.text, parameters: this.values ?? [] });
    return submit.apply(this, args);
  };
  return () => void (query.submit = submit);
}

function recordSqlite(log: RecordedStatement[]): () => void {
  const cache = StatementCache.prototype;
  const { prepare, prepareForKysely } = cache;
  cache.prepareForKysely = function (this: StatementCache, sql: string): KyselyStatement {
    const stmt = prepareForKysely.call(this, sql);
    const noted = (parameters: readonly unknown[]) => void log.push({ sql, parameters: [...parameters] });
    return {
      reader: stmt.reader,
      all: (parameters) => (noted(parameters), stmt.all(parameters)),
      run: (parameters) => (noted(parameters), stmt.run(parameters)),
      iterate: (parameters) => (noted(parameters), stmt.iterate(parameters)),
    };
  };
  cache.prepare = function (this: StatementCache, sql: string): SqliteStatement {
    const stmt = prepare.call(this, sql);
    return new Proxy(stmt, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || !['all', 'get', 'run', 'iterate'].includes(String(property))) return value;
        return (...parameters: unknown[]) => (log.push({ sql, parameters }), (value as (...p: unknown[]) => unknown).apply(target, parameters));
      },
    });
  };
  return () => {
    cache.prepare = prepare;
    cache.prepareForKysely = prepareForKysely;
  };
}

/** Every string in `value` (arrays searched, as PostgreSQL's bulk inserts bind them) with `replace` applied. */
export function mapStrings(value: unknown, replace: (text: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, replace));
  return typeof value === 'string' ? replace(value) : value;
}

/**
 * Replays `statements` once per element of `copies` (`substitute` gives the copy's parameters);
 * answers the copies per second.
 */
export async function replay(
  db: BenchDatabase,
  statements: RecordedStatement[],
  copies: number,
  substitute: (parameters: unknown[], copy: number) => unknown[],
  connections: number,
): Promise<number> {
  const started = performance.now();
  if (db.kind === 'postgres') await replayPostgres(db, statements, copies, substitute, connections);
  else await replaySqlite(db, statements, copies, substitute, connections);
  return copies / ((performance.now() - started) / 1000);
}

async function replayPostgres(
  db: BenchDatabase,
  statements: RecordedStatement[],
  copies: number,
  substitute: (parameters: unknown[], copy: number) => unknown[],
  connections: number,
): Promise<void> {
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: connections });
  let next = 0;
  const client = async () => {
    const c = await pool.connect();
    try {
      await c.query(`set search_path to ${db.schema}`);
      for (let copy = next++; copy < copies; copy = next++) {
        // Named: prepared once per connection, as the service's are (pg-prepared.ts).
        for (const [i, s] of statements.entries()) await c.query({ name: `replay-${i}`, text: s.sql, values: substitute(s.parameters, copy) });
      }
    } finally {
      c.release();
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, client));
  } finally {
    await pool.end();
  }
}

/** The statements as phases: each transaction (its statements between BEGIN and COMMIT, savepoints left out), or one statement outside any. */
function phases(statements: RecordedStatement[]): Array<{ transaction: boolean; statements: RecordedStatement[] }> {
  const out: Array<{ transaction: boolean; statements: RecordedStatement[] }> = [];
  let open: RecordedStatement[] | null = null;
  for (const s of statements) {
    if (BEGIN.test(s.sql)) out.push({ transaction: true, statements: (open = []) });
    else if (COMMIT.test(s.sql)) open = null;
    else if (CONTROL.test(s.sql)) continue;
    else if (open) open.push(s);
    else out.push({ transaction: false, statements: [s] });
  }
  return out;
}

async function replaySqlite(
  db: BenchDatabase,
  statements: RecordedStatement[],
  copies: number,
  substitute: (parameters: unknown[], copy: number) => unknown[],
  group: number,
): Promise<void> {
  if (db.config.kind !== 'sqlite') throw new Error('not a SQLite database');
  const handle = openSqlite(db.config.path);
  // As connect.ts opens the service's connection.
  for (const pragma of [
    'busy_timeout = 10000',
    'journal_mode = WAL',
    'synchronous = NORMAL',
    'foreign_keys = ON',
    'cache_size = -16000',
    'temp_store = MEMORY',
    `wal_autocheckpoint = ${MAIN_AUTOCHECKPOINT_PAGES}`,
  ])
    handle.pragma(pragma);
  const wal = new WalSync(db.config.path);
  const prepared = new Map<string, SqliteStatement>();
  const run = (s: RecordedStatement, copy: number) => {
    let stmt = prepared.get(s.sql);
    if (!stmt) prepared.set(s.sql, (stmt = handle.prepare(s.sql)));
    const parameters = substitute(s.parameters, copy);
    try {
      if (stmt.reader) stmt.all(...parameters);
      else stmt.run(...parameters);
    } catch (err) {
      throw new Error(`copy ${copy}: ${s.sql.slice(0, 80)}… ${JSON.stringify(parameters).slice(0, 300)}`, { cause: err });
    }
  };
  const begin = handle.prepare('BEGIN IMMEDIATE');
  const commit = handle.prepare('COMMIT');
  try {
    for (let first = 0; first < copies; first += group) {
      const last = Math.min(copies, first + group);
      for (const phase of phases(statements)) {
        if (phase.transaction) begin.run();
        for (let copy = first; copy < last; copy++) for (const s of phase.statements) run(s, copy);
        if (phase.transaction) {
          commit.run();
          await wal.sync();
        }
      }
    }
  } finally {
    await wal.close();
    handle.close();
  }
}
