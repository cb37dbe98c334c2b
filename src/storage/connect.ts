/**
 * Opens the database named by the config on one of the two adapters and returns a Kysely
 * instance plus what differs between them. Everything above this file is dialect-agnostic
 * except the few places that ask `dialect` (row locks, SKIP LOCKED).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { type DatabaseConfig, DEFAULT_DB_POOL_SIZE } from '../config.js';
import type { Database } from './schema.js';
import { openSqlite, sqliteDriver, type SqliteDriverName } from './sqlite/driver.js';
import { describingQueries, StatementCounter } from './statement-counter.js';
import { writeBursts } from './postgres/bursts.js';
import { PreparedNames } from './postgres/prepared-statements.js';
import { PgStatisticsKeeper } from './postgres/statistics.js';
import { SharedClients } from './postgres/shared-clients.js';
import { writeCombining } from './postgres/write-combining.js';
import { MAIN_AUTOCHECKPOINT_PAGES, WalCheckpointer } from './sqlite/wal-checkpointer.js';
import { WalSync } from './sqlite/wal-sync.js';
import { PrenamedRowsPlugin } from './sqlite/prenamed-rows.js';
import { CompiledCamelCasePlugin } from './postgres/camel-rows.js';
import { StatementCache } from './sqlite/group-commit.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Connection {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL: the schema every connection works in (created by migrate when missing). */
  schema?: string;
  /** SQLite: the one connection's prepared-statement cache and raw handle (group commit, see store.ts). */
  statements?: StatementCache;
  /** SQLite: the driver of the connection (see sqlite/driver.ts). */
  sqliteDriver?: SqliteDriverName;
  /** SQLite: makes every commit so far durable (the connection runs with synchronous=NORMAL, see wal-sync.ts). */
  sync?: () => Promise<void>;
  /** Counts every statement and commit sent to the database while on (off by default). */
  counters: StatementCounter;
  /** Checks that the database answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// PostgreSQL: int8 (money, counts) → number (amounts stay far below 2^53), timestamptz → ISO string
// with milliseconds, so that rows look the same as on SQLite.
const INT8_OID = 20;
const TIMESTAMPTZ_OID = 1184;
const toIso = (value: string): string => new Date(value).toISOString();
pg.types.setTypeParser(INT8_OID, (value: string) => Number.parseInt(value, 10));
pg.types.setTypeParser(TIMESTAMPTZ_OID, toIso);

export interface ConnectOptions {
  /** PostgreSQL only: a schema to create and put first on the search_path (test isolation). */
  schema?: string;
  poolSize?: number;
  /** SQLite only: the driver to use instead of the default (it must load on this Node). */
  sqliteDriver?: SqliteDriverName;
  /**
   * SQLite only, default true. False: no WAL checkpoint at all (no background checkpointer, no
   * automatic one), so the WAL keeps every frame written: bench/mit-wal-pages.ts counts them.
   */
  checkpoints?: boolean;
}

/**
 * While PostgreSQL is unreachable a request fails within this time (503) instead of waiting for a
 * connection forever; it also bounds the wait for a free connection of a saturated pool.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/** Readiness answers within this time even when the database neither answers nor refuses. */
export const PING_TIMEOUT_MS = 2_000;

export function connect(config: DatabaseConfig, options: ConnectOptions = {}): Connection {
  return config.kind === 'sqlite' ? connectSqlite(config.path, options) : connectPostgres(config.url, options);
}

function connectSqlite(file: string, options: ConnectOptions): Connection {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const driver = sqliteDriver(options.sqliteDriver);
  const sqlite = openSqlite(file, driver);
  // First: switching a fresh file to WAL takes a lock that another process starting at once may hold.
  sqlite.pragma('busy_timeout = 10000');
  // WAL: a committed change survives kill -9. synchronous=NORMAL plus an fdatasync of the WAL after
  // each group commit, in the thread pool (wal-sync.ts): it survives a power loss too, as with
  // FULL, without stalling the event loop on the disk.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // LIKE is case-sensitive on PostgreSQL; the same here, so that a prefix filter matches the same rows on both.
  sqlite.pragma('case_sensitive_like = ON');
  // 16 MB of page cache, better-sqlite3's default (node:sqlite keeps SQLite's 2 MB).
  sqlite.pragma('cache_size = -16000');
  // Savepoint journals in memory: every unit of a group commit after the first runs in a SAVEPOINT
  // (sqlite/group-commit.ts), whose journal SQLite otherwise spills past 64 KiB to a temporary file,
  // created, written and deleted per batch (issue 10: closed-loop POST /mit 1.3–1.9× faster in
  // memory, four alternating pairs).
  sqlite.pragma('temp_store = MEMORY');
  // Checkpoints run in a worker thread on a connection of their own (wal-checkpointer.ts); this
  // connection checkpoints only should that one fall far behind (or never, without checkpoints).
  const checkpoints = options.checkpoints ?? true;
  const checkpointer = checkpoints && file !== ':memory:' ? new WalCheckpointer(file, driver) : null;
  sqlite.pragma(`wal_autocheckpoint = ${checkpoints ? MAIN_AUTOCHECKPOINT_PAGES : 0}`);
  const counters = new StatementCounter();
  // The rows Kysely gets are built with camelCase properties already (prenamed-rows.ts).
  const naming = new PrenamedRowsPlugin();
  const statements = new StatementCache(sqlite, counters, naming.keyOf);
  // Kysely prepares every query anew; the cache hands it the statement prepared last time.
  const database = { prepare: (sql: string) => statements.prepareForKysely(sql), close: () => sqlite.close() };
  const db = new Kysely<Database>({ dialect: describingQueries(new SqliteDialect({ database }), counters), plugins: [naming] });
  const wal = file === ':memory:' ? null : new WalSync(file);
  return {
    db,
    dialect: 'sqlite',
    statements,
    sync: async () => wal?.sync(),
    sqliteDriver: driver,
    counters,
    async ping() {
      sqlite.prepare('select 1').get();
    },
    async close() {
      await checkpointer?.close();
      await wal?.close();
      await db.destroy();
    },
  };
}

function connectPostgres(url: string, options: ConnectOptions): Connection {
  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  // The search_path is a startup parameter, so every pooled connection is in the schema from its first query.
  const poolSize = options.poolSize ?? DEFAULT_DB_POOL_SIZE;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // TCP keepalive from 10 s of silence: a pooled connection whose peer vanished without a reset (a
    // network partition) is found dead by the kernel's probes instead of never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // Pipelining: a statement goes out without waiting for the answer to the one before it on the
    // same connection, so a transaction's BEGIN rides with its first statement and its held writes
    // with its COMMIT (postgres/write-combining.ts). Answers still come back in order, one per statement.
    pipeline: true,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // A lost connection must never end the process (an 'error' event without a listener throws).
  // An idle client's error reaches the pool, which drops it; a checked-out client's error has no
  // listener of the pool's, so every client gets one of its own. Its query fails with the same error
  // (→ 503, see unavailable.ts), the pool drops it on release, and new connections replace it.
  pool.on('error', () => undefined);
  const counters = new StatementCounter();
  const prepared = new PreparedNames();
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepared.prepareOn(client);
    writeBursts(client);
    counters.watch(client);
  });
  // Held writes and a lazy BEGIN in transactions: fewer round trips per commit (postgres/write-combining.ts).
  const db = new Kysely<Database>({
    dialect: writeCombining(new PostgresDialect({ pool }), sharedClients(pool, poolSize), counters),
    plugins: [new CompiledCamelCasePlugin()],
  });
  // The job queue's planner statistics, fresh after a burst even where autovacuum is late or off.
  const statistics = new PgStatisticsKeeper((text, parameters) => pool.query(text, parameters));
  statistics.start();
  return {
    db,
    dialect: 'postgres',
    ...(schema ? { schema } : {}),
    counters,
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('Connection terminated: ping timed out'), { code: 'ETIMEDOUT' })), PING_TIMEOUT_MS);
      });
      try {
        await Promise.race([pool.query('select 1'), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await statistics.stop();
      await db.destroy();
    },
  };
}

/**
 * Half the pool serves the statements outside transactions, shared and pipelined
 * (postgres/shared-clients.ts); the other half is for transactions, one each. A pool of one has no
 * shared connections (its transactions would wait for ever).
 */
function sharedClients(pool: pg.Pool, poolSize: number): SharedClients | null {
  const shared = Math.floor(poolSize / 2);
  return shared > 0 ? new SharedClients(pool, shared) : null;
}
