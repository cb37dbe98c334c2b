/**
 * The better-sqlite3 driver (an optional dependency: a native addon that loads only on the Node it
 * was built for). Its API is the one SqliteHandle copies, so its statements are handed out as they
 * are and its errors already carry the extended result code's name — except that a statement that
 * returns rows reads them as arrays of values, made objects by a function compiled for its columns
 * (sqlite/rows.ts): the addon sets an object's columns one by one, which costs more.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteHandle, SqliteRunResult, SqliteStatement } from './handle.js';
import { type RowBuilder, rowBuilder } from './rows.js';

/** A statement that returns rows, read raw (arrays) and built into objects. */
class RowsStatement implements SqliteStatement {
  readonly reader = true;
  private readonly build: RowBuilder;

  constructor(
    private readonly stmt: BetterSqlite3.Statement,
    keyOf: (column: string) => string = (column) => column,
  ) {
    stmt.raw(true);
    this.build = rowBuilder(stmt.columns().map((column) => keyOf(column.name)));
  }

  get busy(): boolean {
    return this.stmt.busy;
  }

  all(...params: unknown[]): unknown[] {
    const build = this.build;
    return (this.stmt.all(...params) as unknown[][]).map((values) => build(values));
  }

  get(...params: unknown[]): unknown {
    const values = this.stmt.get(...params) as unknown[] | undefined;
    return values && this.build(values);
  }

  run(...params: unknown[]): SqliteRunResult {
    return this.stmt.run(...params);
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    // Started now, as the addon's own (the statement is busy from here); ending the loop early
    // (return) ends the addon's iteration too, and the statement is free again.
    const rows = this.stmt.iterate(...params) as IterableIterator<unknown[]>;
    const build = this.build;
    return {
      next() {
        const next = rows.next();
        return next.done ? next : { done: false, value: build(next.value) };
      },
      return(value?: unknown) {
        rows.return?.();
        return { done: true, value };
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  }
}

export function openBetterSqlite(file: string, require: NodeRequire): SqliteHandle {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(file);
  return {
    driver: 'better-sqlite3',
    get inTransaction() {
      return db.inTransaction;
    },
    prepare(sql, keyOf) {
      const stmt = db.prepare(sql);
      return stmt.reader ? new RowsStatement(stmt, keyOf) : (stmt as unknown as SqliteStatement);
    },
    exec: (sql) => void db.exec(sql),
    pragma: (source, options) => db.pragma(source, options),
    close: () => void db.close(),
  };
}
