/**
 * What the storage layer needs of a synchronous SQLite connection (the subset of better-sqlite3's
 * API it uses), implemented by sqlite/node-sqlite.ts (node:sqlite) and sqlite/better-sqlite3.ts (better-sqlite3);
 * sqlite/driver.ts chooses between them.
 */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

export interface SqliteRunResult {
  changes: number | bigint;
  lastInsertRowid: number | bigint;
}

export interface SqliteStatement {
  /** True when the statement returns rows (a SELECT, a PRAGMA that answers, a write with RETURNING). */
  readonly reader: boolean;
  /** True while an iteration over the statement is open: it cannot run again until that ends. */
  readonly busy: boolean;
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): SqliteRunResult;
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

export interface SqliteHandle {
  readonly driver: SqliteDriverName;
  /** Whether a transaction is open on the connection (asked of SQLite, not followed). */
  readonly inTransaction: boolean;
  /** `keyOf`: the property of each result column in the rows (default: the column's name). */
  prepare(sql: string, keyOf?: (column: string) => string): SqliteStatement;
  /** Runs one or more statements, no parameters, no result. */
  exec(sql: string): void;
  /** `PRAGMA <source>`; with `simple`, the first column of the first row (else every row). */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): void;
}

/** An error of SQLite, as better-sqlite3 throws it: `code` is the extended result code's name. */
export class SqliteError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

/** SQLite's primary result codes (sqlite3.h), by number. */
const PRIMARY: Record<number, string> = {
  1: 'ERROR',
  2: 'INTERNAL',
  3: 'PERM',
  4: 'ABORT',
  5: 'BUSY',
  6: 'LOCKED',
  7: 'NOMEM',
  8: 'READONLY',
  9: 'INTERRUPT',
  10: 'IOERR',
  11: 'CORRUPT',
  12: 'NOTFOUND',
  13: 'FULL',
  14: 'CANTOPEN',
  15: 'PROTOCOL',
  16: 'EMPTY',
  17: 'SCHEMA',
  18: 'TOOBIG',
  19: 'CONSTRAINT',
  20: 'MISMATCH',
  21: 'MISUSE',
  22: 'NOLFS',
  23: 'AUTH',
  24: 'FORMAT',
  25: 'RANGE',
  26: 'NOTADB',
  27: 'NOTICE',
  28: 'WARNING',
};

/** The extended result codes (sqlite3.h): primary code → names of `primary | (n << 8)`, n = 1, 2, ... */
const EXTENDED: Record<number, readonly string[]> = {
  1: ['MISSING_COLLSEQ', 'RETRY', 'SNAPSHOT', 'RESERVESIZE', 'KEY', 'UNABLE'],
  4: ['', 'ROLLBACK'],
  5: ['RECOVERY', 'SNAPSHOT', 'TIMEOUT'],
  6: ['SHAREDCACHE', 'VTAB'],
  8: ['RECOVERY', 'CANTLOCK', 'ROLLBACK', 'DBMOVED', 'CANTINIT', 'DIRECTORY'],
  10: [
    'READ',
    'SHORT_READ',
    'WRITE',
    'FSYNC',
    'DIR_FSYNC',
    'TRUNCATE',
    'FSTAT',
    'UNLOCK',
    'RDLOCK',
    'DELETE',
    'BLOCKED',
    'NOMEM',
    'ACCESS',
    'CHECKRESERVEDLOCK',
    'LOCK',
    'CLOSE',
    'DIR_CLOSE',
    'SHMOPEN',
    'SHMSIZE',
    'SHMLOCK',
    'SHMMAP',
    'SEEK',
    'DELETE_NOENT',
    'MMAP',
    'GETTEMPPATH',
    'CONVPATH',
    'VNODE',
    'AUTH',
    'BEGIN_ATOMIC',
    'COMMIT_ATOMIC',
    'ROLLBACK_ATOMIC',
    'DATA',
    'CORRUPTFS',
    'IN_PAGE',
    'BADKEY',
    'CODEC',
  ],
  11: ['VTAB', 'SEQUENCE', 'INDEX'],
  14: ['NOTEMPDIR', 'ISDIR', 'FULLPATH', 'CONVPATH', 'DIRTYWAL', 'SYMLINK'],
  19: ['CHECK', 'COMMITHOOK', 'FOREIGNKEY', 'FUNCTION', 'NOTNULL', 'PRIMARYKEY', 'TRIGGER', 'UNIQUE', 'VTAB', 'ROWID', 'PINNED', 'DATATYPE'],
  27: ['RECOVER_WAL', 'RECOVER_ROLLBACK', 'RBU'],
  28: ['AUTOINDEX'],
  23: ['USER'],
};

/**
 * The name better-sqlite3 gives an (extended) result code: 2067 → `SQLITE_CONSTRAINT_UNIQUE`,
 * 5 → `SQLITE_BUSY`. An extended code this table does not know is named by its primary code.
 */
export function resultCodeName(code: number): string {
  const primary = code & 0xff;
  const base = PRIMARY[primary] ?? 'ERROR';
  const extended = code >> 8 ? EXTENDED[primary]?.[(code >> 8) - 1] : undefined;
  return extended ? `SQLITE_${base}_${extended}` : `SQLITE_${base}`;
}
