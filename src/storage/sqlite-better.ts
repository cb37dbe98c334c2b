/**
 * The better-sqlite3 driver (an optional dependency: a native addon that loads only on the Node it
 * was built for). Its API is the one SqliteHandle copies, so its statements are handed out as they
 * are and its errors already carry the extended result code's name.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteHandle, SqliteStatement } from './sqlite-handle.js';

export function openBetterSqlite(file: string, require: NodeRequire): SqliteHandle {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(file);
  return {
    driver: 'better-sqlite3',
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql) => db.prepare(sql) as unknown as SqliteStatement,
    exec: (sql) => void db.exec(sql),
    pragma: (source, options) => db.pragma(source, options),
    close: () => void db.close(),
  };
}
