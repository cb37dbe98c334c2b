/**
 * Group commit on SQLite. A durable commit costs an fsync of the WAL (~0.2–1.2 ms here), so
 * one commit per write caps the whole process at a few thousand writes per second. The batcher
 * queues units of work (closures) and runs everything queued inside ONE `BEGIN IMMEDIATE …
 * COMMIT` on the single SQLite connection (node:sqlite or better-sqlite3, see sqlite/driver.ts):
 *
 *   - each closure's writes are undone alone when it throws, its caller gets the error, and the
 *     others commit. Most closures run in a SAVEPOINT of their own, rolled back to. Some need none:
 *     the first closure of a transaction (the transaction rolled back is its alone, the closures
 *     after it begin another); a single write statement (`execute`: SQLite undoes a failed
 *     statement by itself); and a replayable closure (UnitOptions.replayable) whose transaction
 *     holds only replayable closures so far — when it throws, the transaction is rolled back and
 *     the closures before it run again in a new one, once per batch at most (after a replay, such
 *     closures take savepoints). A savepoint costs two statements (SAVEPOINT, RELEASE): a MIT
 *     took ~7 of its ~21 under load;
 *   - no closure's promise settles before the COMMIT that holds it has returned and been made
 *     durable (`durable`: an fdatasync of the WAL in the thread pool, see wal-sync.ts — the event
 *     loop keeps serving meanwhile), so nothing is answered (HTTP response, job marked done,
 *     callback sent) before its write is durable;
 *   - a crash before the COMMIT loses the whole batch, and none of it was answered; a failed
 *     COMMIT rejects every closure of the batch;
 *   - while one batch commits, new closures queue for the next one: the commit rate stays at what
 *     the disk gives, and the rows per commit grow with the load.
 *
 * A unit may linger (`run(fn, { lingerMs })`): work whose caller waits for nobody (a delivered
 * callback's record, an answer applied by its job) that finds no commit due to start does not start
 * one of its own but joins the next one that another unit starts, or commits alone once it has
 * waited `lingerMs`. At low rates this saves a commit, its fsync and its wake-ups per such unit;
 * under load a unit that starts a commit is nearly always queued already, and it joins that one.
 *
 * Closures run one after another (never interleaved), so each sees the writes of those before
 * it, exactly as serial transactions would. The batch holds Kysely's connection lock for its
 * duration, so reads outside a batch never see uncommitted rows. A closure must not wait on
 * another write of the same store (that write would wait for this batch: deadlock), and must not
 * wait on the network (it would hold every writer).
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { DeadlineTimer } from '../../shared/deadline-timer.js';
import type { UnitOptions } from '../unit-commits.js';
import type { Database } from '../schema.js';
import type { SqliteHandle, SqliteRunResult, SqliteStatement as Statement } from './handle.js';
import { StatementCounter } from '../statement-counter.js';

export interface WriteBatcherOptions {
  /** Most closures in one commit: bounds how long one batch holds the connection (latency). */
  maxBatch?: number;
  /** Test hook: runs after the closures of a batch, before its COMMIT. */
  beforeCommit?: (size: number) => void | Promise<void>;
  /** Makes the COMMIT durable (wal-sync.ts), awaited before anyone is answered; none: COMMIT is. */
  durable?: () => Promise<void>;
}

interface Item {
  fn: (conn: Kysely<Database>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Wall time (ms) until which the unit may wait for another's commit; 0: starts one at once. */
  lingerUntil: number;
  /** UnitOptions.replayable (a single statement is). */
  replayable: boolean;
  /** One statement: when it fails, SQLite undoes it alone, so it needs no savepoint. */
  atomic: boolean;
}

export interface BatcherStats {
  commits: number;
  closures: number;
  largestBatch: number;
  /** Units that were queued to linger (joined another's commit, or waited theirs out). */
  lingered: number;
  /** Transactions rolled back for a replayable unit's failure, their units run again. */
  replays: number;
}

/**
 * A prepared statement as Kysely's SqliteConnection uses it (`reader`, then `all` or `run` with the
 * parameters as one array), passing them on spread: better-sqlite3 binds spread arguments faster
 * than the elements of an array (measured: a 47-parameter insert 4.8 → 3.6 µs; a 500-row insert
 * 1.4 µs less per row). SQLite takes at most 32 766 parameters, well within a call's arguments.
 */
export interface KyselyStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): unknown[];
  run(parameters: readonly unknown[]): SqliteRunResult;
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}

function spreadingStatement(stmt: Statement): KyselyStatement {
  return {
    reader: stmt.reader,
    all: (parameters) => stmt.all(...parameters),
    run: (parameters) => stmt.run(...parameters),
    iterate: (parameters) => stmt.iterate(...parameters),
  };
}

/**
 * Prepared statements, reused: preparing costs more than running most of this service's queries.
 * Every statement run on the connection is taken from here just before it runs, once per run:
 * the place `counter` counts them.
 */
export class StatementCache {
  /** The statements handed out as they are (control statements, direct reads): rows with the columns' names. */
  private readonly direct = new Map<string, { stmt: Statement; spreading: KyselyStatement }>();
  /** The statements Kysely runs: rows with the properties `kyselyKey` names (prenamed-rows.ts). */
  private readonly kysely = new Map<string, { stmt: Statement; spreading: KyselyStatement }>();

  constructor(
    readonly handle: SqliteHandle,
    readonly counter = new StatementCounter(),
    /** The property of each result column in the rows Kysely gets (default: the column's name). */
    private readonly kyselyKey?: (column: string) => string,
    private readonly max = 1000,
  ) {}

  prepare(sql: string): Statement {
    return this.entry(this.direct, sql).stmt;
  }

  /** The statement for Kysely's connection (connect.ts), binding its parameters spread. */
  prepareForKysely(sql: string): KyselyStatement {
    return this.entry(this.kysely, sql, this.kyselyKey).spreading;
  }

  /** What Kysely's SQLite connection does with a compiled query, on a cached statement. */
  execute<R>(query: CompiledQuery): QueryResult<R> {
    if (this.counter.log) this.counter.describeQuery(query);
    const stmt = this.prepareForKysely(query.sql);
    if (stmt.reader) return { rows: stmt.all(query.parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(query.parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  private entry(
    cache: Map<string, { stmt: Statement; spreading: KyselyStatement }>,
    sql: string,
    keyOf?: (column: string) => string,
  ): { stmt: Statement; spreading: KyselyStatement } {
    if (this.counter.enabled) this.counter.count(sql, this.handle.inTransaction);
    const cached = cache.get(sql);
    // A statement still iterating (a streamed read) cannot run again: a fresh one for this use.
    if (cached && !cached.stmt.busy) return cached;
    const stmt = this.handle.prepare(sql, keyOf);
    const entry = { stmt, spreading: spreadingStatement(stmt) };
    if (!cached) {
      if (cache.size >= this.max) cache.clear();
      cache.set(sql, entry);
    }
    return entry;
  }
}

export class WriteBatcher {
  private queue: Item[] = [];
  /** Queued units that start a commit (lingerUntil 0). */
  private urgent = 0;
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  /** Commits lingering units when the first of them has waited enough. */
  private readonly lingerTimer = new DeadlineTimer(() => this.schedule());
  private readonly maxBatch: number;
  /**
   * What the units of a batch write with: a Kysely on the connection whose lock the batch holds,
   * built once, with `db`'s adapter and plugins (so query templates compiled for `db` serve it).
   */
  private readonly held: Kysely<Database>;
  readonly stats: BatcherStats = { commits: 0, closures: 0, largestBatch: 0, lingered: 0, replays: 0 };

  /**
   * @param db the Kysely instance of the SQLite connection (its lock serializes batches with reads)
   * @param statements the same connection's raw handle, for BEGIN/SAVEPOINT/COMMIT
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly statements: StatementCache,
    private readonly options: WriteBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 128;
    const { adapter, plugins } = db.getExecutor();
    this.held = new Kysely<Database>({ dialect: { ...heldConnectionDialect(statements), createAdapter: () => adapter }, plugins: [...plugins] });
  }

  /** Runs `fn` in the next group commit; settles after that commit (or with `fn`'s own error). */
  run<T>(fn: (conn: Kysely<Database>) => Promise<T>, options: UnitOptions = {}): Promise<T> {
    return this.enqueue(fn, options, false);
  }

  private enqueue<T>(fn: (conn: Kysely<Database>) => Promise<T>, options: UnitOptions, atomic: boolean): Promise<T> {
    // A unit lingers unless a commit is due to start: one queued behind a unit that starts a commit
    // joins it at once. One queued while a commit is under way waits for the next that another
    // unit starts (at low rates, a commit made for it alone would follow the current one at once).
    const lingerMs = options.lingerMs ?? 0;
    const lingers = lingerMs > 0 && !this.scheduled && this.urgent === 0;
    return new Promise<T>((resolve, reject) => {
      const lingerUntil = lingers ? Date.now() + lingerMs : 0;
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, lingerUntil, replayable: atomic || options.replayable === true, atomic });
      if (lingerUntil === 0) {
        this.urgent++;
        this.schedule();
      } else {
        this.stats.lingered++;
        this.lingerTimer.arm(lingerUntil);
      }
    });
  }

  /** One compiled write statement as its own unit of work (autocommit writes outside a transaction). */
  execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.enqueue(async () => this.statements.execute<R>(query), {}, true);
  }

  /**
   * A read under the connection lock: never between a batch's BEGIN and COMMIT. The lock is taken
   * from Kysely's executor, not with `db.connection()`, which builds a Kysely instance per call
   * (0.55 against 1.9 µs a call in a loop: a read starts most requests).
   */
  read<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.db.getExecutor().provideConnection(async () => this.statements.execute<R>(query));
  }

  /** Resolves once everything queued so far is committed (lingering units without waiting). */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length) {
      if (!this.flushing) this.schedule();
      await (this.flushing ?? new Promise((r) => setImmediate(r)));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    this.lingerTimer.clear();
    // setImmediate, not a microtask: the requests read in the same I/O turn join this batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        if (this.urgent > 0) this.schedule();
        else if (this.queue.length) this.lingerTimer.arm(this.firstLingerDeadline());
      });
    });
  }

  private async flush(): Promise<void> {
    // Whatever queued while a batch committed forms the next one, at once — unless it may linger.
    do {
      const batch = this.queue.splice(0, this.maxBatch);
      for (const item of batch) if (item.lingerUntil === 0) this.urgent--;
      await this.commit(batch);
    } while (this.queue.length && (this.urgent > 0 || this.firstLingerDeadline() <= Date.now()));
  }

  private firstLingerDeadline(): number {
    let first = Number.POSITIVE_INFINITY;
    for (const item of this.queue) if (item.lingerUntil < first) first = item.lingerUntil;
    return first;
  }

  private async commit(batch: Item[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown } | undefined> = new Array(batch.length);
    const exec = (sql: string) => this.statements.prepare(sql).run();
    let committed = false;
    try {
      await this.db.getExecutor().provideConnection(async () => {
        const conn = this.held;
        const handle = this.statements.handle;
        try {
          // The open transaction: the index of its first unit; `fresh`: no unit has written into it
          // yet; `replayable`: every unit in it so far may run again (see needsSavepoint).
          let start = 0;
          let fresh = true;
          let replayable = true;
          // One replay per batch at most: after it, units that would have replayed take savepoints.
          let replayed = false;
          for (let i = 0; i < batch.length; i++) {
            // A unit that failed is not run again when the units before it are replayed.
            if (outcomes[i]?.ok === false) continue;
            const item = batch[i]!;
            if (!handle.inTransaction) {
              exec('BEGIN IMMEDIATE');
              [start, fresh, replayable] = [i, true, true];
            }
            const savepoint = needsSavepoint(item, { fresh, replayable: replayable && !replayed });
            if (savepoint) exec('SAVEPOINT group_commit_item');
            try {
              const value = await item.fn(conn);
              if (savepoint) exec('RELEASE group_commit_item');
              outcomes[i] = { ok: true, value };
              fresh = false;
              replayable &&= item.replayable;
            } catch (error) {
              // An I/O or full-disk error ends the whole transaction: then the batch fails as one.
              if (!handle.inTransaction) throw error;
              outcomes[i] = { ok: false, error };
              if (savepoint) {
                exec('ROLLBACK TO group_commit_item');
                exec('RELEASE group_commit_item');
              } else if (!item.atomic) {
                // Its writes can only go with the transaction's: the units before it run again in a new one.
                exec('ROLLBACK');
                if (!fresh) {
                  replayed = true;
                  this.stats.replays++;
                  i = start - 1;
                }
              }
              // (A single statement that failed was undone by SQLite alone.)
            }
          }
          // Nothing left to commit when the last units were rolled back with their transaction.
          if (handle.inTransaction) {
            await this.options.beforeCommit?.(batch.length);
            exec('COMMIT');
            committed = true;
            // Still under the connection lock: nothing reads the batch's rows before they are durable.
            // A failed sync fails the batch, like a failed COMMIT: nobody is told it is stored.
            await this.options.durable?.();
          }
        } catch (error) {
          // The batch's own error is the one its callers get (SQLITE_BUSY, SQLITE_IOERR, SQLITE_FULL → 503),
          // not a failing ROLLBACK's (after an I/O or full-disk error SQLite has usually rolled back by itself).
          try {
            if (handle.inTransaction) exec('ROLLBACK');
          } catch {}
          throw error;
        }
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    if (committed) this.stats.commits++;
    this.stats.closures += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

/**
 * Whether a unit runs in a savepoint of its own. Not the first unit of a transaction (`fresh`: its
 * failure rolls back a transaction that is its alone), nor a single statement (SQLite undoes a failed
 * one by itself), nor a replayable unit after replayable units only (`replayable`: its failure rolls
 * the transaction back and they run again).
 */
function needsSavepoint(item: Item, transaction: { fresh: boolean; replayable: boolean }): boolean {
  return !transaction.fresh && !item.atomic && !(transaction.replayable && item.replayable);
}

/** A Kysely dialect over a connection whose lock the caller holds already: statements run at once. */
function heldConnectionDialect(statements: StatementCache): Dialect {
  return singleConnectionDialect(
    {
      executeQuery: async <R>(query: CompiledQuery) => statements.execute<R>(query),
      streamQuery: <R>(query: CompiledQuery, chunkSize = 100) => inChunks(statements.execute<R>(query).rows, chunkSize),
    },
    'a unit of the group commit is in its transaction already',
  );
}

const WRITE = /^\s*(insert|update|delete|replace)\b/i;

/**
 * A Kysely dialect for the repositories used outside `store.transaction` on SQLite: every write
 * statement becomes its own unit of work in the next group commit (and returns after it), every
 * read runs under the connection lock. Transactions go through `WriteBatcher.run` instead.
 */
export function groupCommitDialect(batcher: WriteBatcher): Dialect {
  const connection: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery) => (WRITE.test(query.sql) ? batcher.execute<R>(query) : batcher.read<R>(query)),
    // Reads are small and bounded here; a streamed query is read whole under the lock, then yielded.
    async *streamQuery<R>(query: CompiledQuery, chunkSize = 100) {
      yield* inChunks((await batcher.read<R>(query)).rows, chunkSize);
    },
  };
  return singleConnectionDialect(connection, 'transactions on SQLite go through store.transaction (group commit)');
}

/** Rows read whole, handed out as a stream query's results. */
async function* inChunks<R>(rows: R[], chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
  for (let i = 0; i < rows.length; i += chunkSize) yield { rows: rows.slice(i, i + chunkSize) };
}

/** A SQLite dialect whose every query runs on `connection`, and which refuses transactions (`why`). */
function singleConnectionDialect(connection: DatabaseConnection, why: string): Dialect {
  const refuse = async (): Promise<void> => {
    throw new Error(why);
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  return {
    createDriver: () => driver,
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}
