/**
 * A request's statements replayed on the store without the service: what the store alone does with
 * them (issue 10's POST /mit and capture figures). On SQLite it is the service's ceiling: its group
 * commit does the same with no work besides. On PostgreSQL each copy is sent as one request sends
 * it; the service, which joins concurrent requests' commits and pipelines, may pass it.
 *
 * replayRequest notes every statement the store is sent while the request runs, with its parameters
 * (PostgreSQL: node-postgres's queries; SQLite: the connection's prepared statements), then runs
 * that list again for other rows of the same shape, each copy with values of its own, as fast as
 * the store takes them:
 *   - PostgreSQL: `connections` clients, each one copy after another, one round trip per statement
 *     (no pipelining, no joined commits: those are the service's own);
 *   - SQLite: one connection, `connections` copies per group commit (each transaction of the list
 *     run once for the group, its WAL synced after COMMIT, as sqlite/group-commit.ts does; no savepoints).
 */
import pg from 'pg';
import { connect } from '../../src/storage/connect.js';
import type { SqliteStatement } from '../../src/storage/sqlite/handle.js';
import { type KyselyStatement, StatementCache } from '../../src/storage/sqlite/group-commit.js';
import { formatRatio } from './report.js';
import { BENCH_DATABASE_URL, type BenchDatabase } from './stores.js';

interface RecordedStatement {
  sql: string;
  parameters: unknown[];
}

const CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;
const BEGIN = /^\s*begin\b/i;
const COMMIT = /^\s*commit\b/i;

/** The statements sent to the store while `fn` runs, in order. */
async function recordStatements(kind: BenchDatabase['kind'], fn: () => Promise<void>): Promise<RecordedStatement[]> {
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

/** A new id of this service (ids.ts newId: a UUIDv7), its first 12 hex digits the millisecond it was made in. */
const NEW_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Replayed {
  /** Copies replayed per second. */
  perSecond: number;
  copies: number;
  /** Statements per copy. */
  statements: number;
}

/**
 * The store alone for one request: its statements recorded while `request` runs — with nothing
 * else under way: every statement sent meanwhile is taken as the request's — then replayed `copies`
 * times. `request` answers the values it names that each copy replaces (`renamed(copy)` gives the
 * copy's, in the same order: the row it acts on, an id it made that is not a newId); the newIds the
 * request made (its operation, job, event) get ids of each copy's own. Replaced within strings too:
 * a job's dedupe key and payload name its operation.
 */
export async function replayRequest(
  db: BenchDatabase,
  request: () => Promise<string[]>,
  renamed: (copy: number) => string[],
  copies: number,
  connections: number,
): Promise<Replayed> {
  // The last answers of a load may still be committing.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const since = Date.now();
  let named: string[] = [];
  const statements = await recordStatements(db.kind, async () => void (named = await request()));
  const made = new Set<string>();
  for (const s of statements)
    mapStrings(s.parameters, (text) => {
      const time = NEW_ID.exec(text);
      if (time && parseInt(time[1]! + time[2]!, 16) >= since) made.add(text);
      return text;
    });
  // Every copy's parameters made before the replay starts: the replay times the store alone.
  const copyParameters = Array.from({ length: copies }, (_, copy) => {
    const copyNames = renamed(copy);
    const pairs: Array<[string, string]> = [
      ...named.map((from, i): [string, string] => [from, copyNames[i]!]),
      ...[...made].map((id): [string, string] => [id, `${id.slice(0, -8)}${copy.toString(16).padStart(8, '0')}`]),
    ];
    const replace = (text: string) => pairs.reduce((t, [from, to]) => (t.includes(from) ? t.split(from).join(to) : t), text);
    return statements.map((s) => mapStrings(s.parameters, replace) as unknown[]);
  });
  const perSecond = await replay(db, statements, copyParameters, connections);
  return { perSecond, copies, statements: statements.length };
}

/** Every string in `value` (arrays searched, as PostgreSQL's bulk inserts bind them) with `replace` applied. */
function mapStrings(value: unknown, replace: (text: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, replace));
  return typeof value === 'string' ? replace(value) : value;
}

/** Per copy, per statement: the parameters it runs with. */
type CopyParameters = unknown[][][];

/** Replays `statements` once per copy, each with its parameters; answers the copies per second. */
async function replay(db: BenchDatabase, statements: RecordedStatement[], copies: CopyParameters, connections: number): Promise<number> {
  const started = performance.now();
  if (db.kind === 'postgres') await replayPostgres(db, statements, copies, connections);
  else await replaySqlite(db, statements, copies, connections);
  return copies.length / ((performance.now() - started) / 1000);
}

async function replayPostgres(db: BenchDatabase, statements: RecordedStatement[], copies: CopyParameters, connections: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: connections });
  let next = 0;
  const client = async () => {
    const c = await pool.connect();
    try {
      await c.query(`set search_path to ${db.schema}`);
      for (let copy = next++; copy < copies.length; copy = next++) {
        // Named: prepared once per connection, as the service's are (postgres/prepared-statements.ts).
        for (const [i, s] of statements.entries()) await c.query({ name: `replay-${i}`, text: s.sql, values: copies[copy]![i] });
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

/** The statements (by index) as phases: each transaction (its statements between BEGIN and COMMIT, savepoints left out), or one statement outside any. */
function phases(statements: RecordedStatement[]): Array<{ transaction: boolean; statements: number[] }> {
  const out: Array<{ transaction: boolean; statements: number[] }> = [];
  let open: number[] | null = null;
  for (const [i, s] of statements.entries()) {
    if (BEGIN.test(s.sql)) out.push({ transaction: true, statements: (open = []) });
    else if (COMMIT.test(s.sql)) open = null;
    else if (CONTROL.test(s.sql)) continue;
    else if (open) open.push(i);
    else out.push({ transaction: false, statements: [i] });
  }
  return out;
}

async function replaySqlite(db: BenchDatabase, statements: RecordedStatement[], copies: CopyParameters, group: number): Promise<void> {
  // A connection opened as the service opens its own (pragmas, WAL sync, checkpoints).
  const connection = connect(db.config);
  const handle = connection.statements!.handle;
  const prepared = new Map<string, SqliteStatement>();
  const run = (i: number, copy: number) => {
    const s = statements[i]!;
    let stmt = prepared.get(s.sql);
    if (!stmt) prepared.set(s.sql, (stmt = handle.prepare(s.sql)));
    const parameters = copies[copy]![i]!;
    try {
      if (stmt.reader) stmt.all(...parameters);
      else stmt.run(...parameters);
    } catch (err) {
      throw new Error(`copy ${copy}: ${s.sql.slice(0, 80)}… ${JSON.stringify(parameters).slice(0, 300)}`, { cause: err });
    }
  };
  const begin = handle.prepare('BEGIN IMMEDIATE');
  const commit = handle.prepare('COMMIT');
  const inPhases = phases(statements);
  try {
    for (let first = 0; first < copies.length; first += group) {
      const last = Math.min(copies.length, first + group);
      for (const phase of inPhases) {
        if (phase.transaction) begin.run();
        for (let copy = first; copy < last; copy++) for (const i of phase.statements) run(i, copy);
        if (phase.transaction) {
          commit.run();
          await connection.sync!();
        }
      }
    }
  } finally {
    await connection.close();
  }
}

/** The note of a store-alone figure: its rate beside the baseline's, and the service's share of it. */
export function storeAloneNote(what: string, alone: Replayed, connections: number, service: { rps: number }, baseline: { rps: number }): string {
  return (
    `the store alone: ${what}'s ${alone.statements} statements replayed ${alone.copies} times without the service (${connections} at a time): ` +
    `${alone.perSecond.toFixed(0)}/s = ${formatRatio(alone.perSecond, baseline.rps)} of the baseline; the service reaches ${((service.rps / alone.perSecond) * 100).toFixed(0)} % of it`
  );
}
