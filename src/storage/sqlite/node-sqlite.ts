/**
 * The node:sqlite driver: Node's built-in synchronous SQLite (Node 22.16+ and 24; no native build,
 * no install step). Adapted to SqliteHandle (better-sqlite3's shape):
 *   - parameters spread or as one array (Kysely passes an array);
 *   - `reader` from the statement's result columns, `busy` while an iteration is open;
 *   - rows as plain objects (node:sqlite's have a null prototype), built from rows read as arrays;
 *   - an integer beyond 2^53 read as the nearest number, as better-sqlite3 does, instead of failing
 *     the whole read (a read-only statement is run again reading BigInts);
 *   - SQLite's errors as SqliteError with the extended result code's name (`SQLITE_BUSY`, ...).
 * Node 22.16 is the first 22.x with both `StatementSync#columns` and `DatabaseSync#isTransaction`.
 */
import { resultCodeName, SqliteError, type SqliteHandle, type SqliteRunResult, type SqliteStatement } from './handle.js';
import { type RowBuilder, rowBuilder } from './rows.js';

type Row = Record<string, unknown>;

/** A row as node:sqlite returns it: an object (null prototype), or an array with setReturnArrays. */
type RawRow = Row | unknown[];

interface StatementSync {
  all(...params: unknown[]): RawRow[];
  get(...params: unknown[]): RawRow | undefined;
  run(...params: unknown[]): SqliteRunResult;
  iterate(...params: unknown[]): Iterator<RawRow>;
  columns(): Array<{ name: string }>;
  setReadBigInts(enabled: boolean): void;
  /** Node 24, 22.16+: rows as arrays of values. */
  setReturnArrays?(enabled: boolean): void;
}

interface DatabaseSync {
  readonly isTransaction: boolean;
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  close(): void;
}

interface NodeSqlite {
  DatabaseSync: new (path: string) => DatabaseSync;
}

let loaded: NodeSqlite | undefined;

/** `require('node:sqlite')`, without the ExperimentalWarning Node 22 prints on stderr when it loads. */
function load(require: NodeRequire): NodeSqlite {
  if (loaded) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('SQLite is an experimental feature')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  let sqlite: NodeSqlite;
  try {
    sqlite = require('node:sqlite') as NodeSqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
  // Asked of an instance: isTransaction is an accessor of the instances, not of the prototype.
  const probe = new sqlite.DatabaseSync(':memory:');
  try {
    if (!('isTransaction' in probe) || typeof probe.prepare('select 1').columns !== 'function') {
      throw new Error(`node:sqlite of Node ${process.versions.node} lacks isTransaction/columns (Node 22.16 or later has them)`);
    }
  } finally {
    probe.close();
  }
  return (loaded = sqlite);
}

/** node:sqlite's errors of SQLite itself carry `errcode`; others (a bad parameter type, ...) stay as they are. */
function translate(err: unknown): unknown {
  const e = err as { code?: unknown; errcode?: unknown; message?: unknown } | null;
  if (e && e.code === 'ERR_SQLITE_ERROR') {
    const code = typeof e.errcode === 'number' ? resultCodeName(e.errcode) : 'SQLITE_ERROR';
    return Object.assign(new SqliteError(String(e.message), code), { cause: err });
  }
  return err;
}

const paramsOf = (params: unknown[]): unknown[] => (params.length === 1 && Array.isArray(params[0]) ? (params[0] as unknown[]) : params);
const WRITES = /^\s*(insert|update|delete|replace|with)\b/i;
const tooLarge = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'ERR_OUT_OF_RANGE';
const number = (value: unknown): unknown => (typeof value === 'bigint' ? Number(value) : value);

class NodeStatement implements SqliteStatement {
  readonly reader: boolean;
  busy = false;
  /** The rows' property of each result column (keyOf), when rows come as arrays (setReturnArrays); else null. */
  private readonly names: string[] | null;
  /** The rows' object of their array of values (sqlite/rows.ts), when they come as arrays. */
  private readonly build: RowBuilder | null;

  constructor(
    private readonly stmt: StatementSync,
    private readonly sql: string,
    private readonly keyOf: (column: string) => string = (column) => column,
  ) {
    const columns = stmt.columns();
    this.reader = columns.length > 0;
    // node:sqlite builds each row object key by key in a dictionary-mode object with a null
    // prototype; rows read as arrays and built here as plain objects are several times cheaper
    // to make and to use (measured: a 50-row read ~70 µs instead of ~200 µs with a copy).
    if (this.reader && typeof stmt.setReturnArrays === 'function') {
      stmt.setReturnArrays(true);
      this.names = columns.map((c) => keyOf(c.name));
      this.build = rowBuilder(this.names);
    } else [this.names, this.build] = [null, null];
  }

  /** A plain object with the row's columns (a later column of the same name wins, as in both drivers). */
  private row(raw: RawRow, convert?: (value: unknown) => unknown): Row {
    if (this.build && !convert) return this.build(raw as unknown[]);
    const row: Row = {};
    const names = this.names;
    if (names) {
      const values = raw as unknown[];
      for (let i = 0; i < names.length; i++) row[names[i]!] = convert ? convert(values[i]) : values[i];
    } else for (const key in raw as Row) row[this.keyOf(key)] = convert ? convert((raw as Row)[key]) : (raw as Row)[key];
    return row;
  }

  all(...params: unknown[]): unknown[] {
    try {
      return this.stmt.all(...paramsOf(params)).map((raw) => this.row(raw));
    } catch (err) {
      if (tooLarge(err) && !WRITES.test(this.sql)) return this.withBigInts(() => this.stmt.all(...paramsOf(params)).map((raw) => this.row(raw, number)));
      throw translate(err);
    }
  }

  get(...params: unknown[]): unknown {
    try {
      const raw = this.stmt.get(...paramsOf(params));
      return raw && this.row(raw);
    } catch (err) {
      if (tooLarge(err) && !WRITES.test(this.sql))
        return this.withBigInts(() => {
          const raw = this.stmt.get(...paramsOf(params));
          return raw && this.row(raw, number);
        });
      throw translate(err);
    }
  }

  run(...params: unknown[]): SqliteRunResult {
    try {
      return this.stmt.run(...paramsOf(params));
    } catch (err) {
      throw translate(err);
    }
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    let rows: Iterator<RawRow>;
    try {
      rows = this.stmt.iterate(...paramsOf(params));
    } catch (err) {
      throw translate(err);
    }
    this.busy = true;
    const done = () => {
      this.busy = false;
    };
    const row = (raw: RawRow) => this.row(raw);
    return (function* () {
      try {
        for (;;) {
          let next: IteratorResult<RawRow>;
          try {
            next = rows.next();
          } catch (err) {
            throw translate(err);
          }
          if (next.done) return;
          yield row(next.value);
        }
      } finally {
        done();
        rows.return?.();
      }
    })();
  }

  /** The read again with integers as BigInts, turned into the nearest number (lossy beyond 2^53, as better-sqlite3). */
  private withBigInts<T>(read: () => T): T {
    this.stmt.setReadBigInts(true);
    try {
      return read();
    } catch (err) {
      throw translate(err);
    } finally {
      this.stmt.setReadBigInts(false);
    }
  }
}

export function openNodeSqlite(file: string, require: NodeRequire): SqliteHandle {
  const { DatabaseSync } = load(require);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file);
    // better-sqlite3's default: a statement that finds the database locked waits up to 5 s (node:sqlite's: not at all).
    db.exec('PRAGMA busy_timeout = 5000');
  } catch (err) {
    throw translate(err);
  }
  return {
    driver: 'node:sqlite',
    get inTransaction() {
      return db.isTransaction;
    },
    prepare(sql, keyOf) {
      try {
        return new NodeStatement(db.prepare(sql), sql, keyOf);
      } catch (err) {
        throw translate(err);
      }
    },
    exec(sql) {
      try {
        db.exec(sql);
      } catch (err) {
        throw translate(err);
      }
    },
    pragma(source, options) {
      const stmt = this.prepare(`PRAGMA ${source}`);
      if (!options?.simple) return stmt.all();
      const row = stmt.get() as Row | undefined;
      return row ? Object.values(row)[0] : undefined;
    },
    close: () => db.close(),
  };
}
