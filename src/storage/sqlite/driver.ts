/**
 * The embedded store's driver: one synchronous SQLite connection, from Node's built-in `node:sqlite`
 * (Node 22.16+ and 24) or from the better-sqlite3 package (a native addon, built for the Node it was
 * installed with: on this project's Node 20 it is the only choice).
 *
 * Both are put behind the one interface below, the subset of better-sqlite3's API that the storage
 * layer uses (connect.ts, the statement cache and group commit of sqlite/group-commit.ts), so that
 * everything above this file is the same on either:
 *   - a statement takes its parameters spread or as one array, and tells whether it returns rows
 *     (`reader`) and whether an iteration over it is still open (`busy`);
 *   - rows are plain objects, integers are numbers;
 *   - an error of SQLite carries better-sqlite3's `code`, the name of the extended result code
 *     (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_IOERR_WRITE`, ...), which is what
 *     unavailable.ts classifies;
 *   - `inTransaction` asks the connection itself (after an I/O error SQLite may have rolled back alone).
 *
 * Which one: `node:sqlite` where it exists, else better-sqlite3 where its binary loads (see
 * sqliteDriver(); the README gives the measurements behind the choice).
 */
import { createRequire } from 'node:module';
import { openBetterSqlite } from './better-sqlite3.js';
import type { SqliteDriverName, SqliteHandle } from './handle.js';
import { openNodeSqlite } from './node-sqlite.js';

export { type SqliteDriverName, type SqliteHandle, type SqliteRunResult, type SqliteStatement, SqliteError } from './handle.js';

const require = createRequire(import.meta.url);

/** Why a driver cannot be used here, or null when it can (each probed once per process). */
const probes = new Map<SqliteDriverName, string | null>();

function probe(driver: SqliteDriverName): string | null {
  if (!probes.has(driver)) {
    let why: string | null = null;
    try {
      // A throwaway in-memory connection: better-sqlite3 loads its binary only when one is opened.
      open(driver, ':memory:').close();
    } catch (err) {
      why = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    }
    probes.set(driver, why);
  }
  return probes.get(driver)!;
}

function open(driver: SqliteDriverName, file: string): SqliteHandle {
  return driver === 'node:sqlite' ? openNodeSqlite(file, require) : openBetterSqlite(file, require);
}

/** In order of preference: node:sqlite where this Node has it, better-sqlite3 elsewhere. */
export const SQLITE_DRIVERS: readonly SqliteDriverName[] = ['node:sqlite', 'better-sqlite3'];

/**
 * The driver a connection opened now would use: `preferred` when given (it must load), else the
 * first of SQLITE_DRIVERS that loads on this Node. Throws, naming why each one cannot, when none does.
 */
export function sqliteDriver(preferred?: SqliteDriverName): SqliteDriverName {
  const candidates = preferred ? [preferred] : SQLITE_DRIVERS;
  const reasons: string[] = [];
  for (const driver of candidates) {
    const why = probe(driver);
    if (why === null) return driver;
    reasons.push(`${driver}: ${why}`);
  }
  throw new Error(
    `no SQLite driver can be used on Node ${process.versions.node} (${reasons.join('; ')}). ` +
      'Use Node 22.16 or later (built-in node:sqlite), or install better-sqlite3 with the Node that runs the service.',
  );
}

/** Every driver that loads on this Node (tests run the storage checks on each). */
export function availableSqliteDrivers(): SqliteDriverName[] {
  return SQLITE_DRIVERS.filter((driver) => probe(driver) === null);
}

/** Opens a connection to `file` (or `:memory:`) with `driver`, by default sqliteDriver()'s choice. */
export function openSqlite(file: string, driver: SqliteDriverName = sqliteDriver()): SqliteHandle {
  return open(driver, file);
}
