/**
 * Counts the statements and commits the service sends to its database, so that the cost of a
 * payment is counted, not guessed (docs: "The cost of a payment is a design quantity").
 *
 * Always present, off by default: while `enabled` is false a statement costs one boolean test.
 * It counts where statements reach the database: on SQLite every statement run on the one
 * connection (StatementCache.prepare: Kysely's, the group commit's BEGIN/SAVEPOINT/COMMIT); on
 * PostgreSQL every query a pooled client sends (Kysely's, its BEGIN/COMMIT, pool.query).
 *
 * A commit is a COMMIT statement or a write run outside a transaction (autocommit). Whether a
 * connection is inside a transaction is asked of the connection on SQLite, and followed on
 * PostgreSQL from the BEGIN/COMMIT/ROLLBACK each client sends — also while off, so that counting
 * may start at any time; these statements are short, so while off a longer one is not even read.
 *
 * While `log` is on, each statement logged can also be told apart by what it touches (`logged()`):
 * its kind and the tables it reads and writes, taken from the Kysely operation tree it was compiled
 * from (`describe`), not from its text, so that a test counts "one read of operations and
 * transactions" and a renamed alias or a reworded clause changes nothing. The places that see the
 * tree (StatementCache.execute, the PostgreSQL combining connection, describingQueries) ask `log`
 * first: while it is off, a query costs them one test more. A statement without a tree (the group
 * commit's BEGIN/COMMIT, a raw text, pool.query) is known by its kind only.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, OperationNode } from 'kysely';

export type StatementKind = 'read' | 'write' | 'begin' | 'commit' | 'rollback' | 'savepoint';

export interface StatementCounts {
  /** Statements that only read (SELECT, PRAGMA, ...). */
  reads: number;
  /** INSERT, UPDATE, DELETE, REPLACE, also inside a WITH (RETURNING included). */
  writes: number;
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE: statements too (on PostgreSQL a round trip each). */
  control: number;
  /** reads + writes + control. */
  statements: number;
  /** COMMIT statements plus autocommitted writes: what makes a change durable (an fsync or a WAL flush). */
  commits: number;
  /** Of `commits`: writes run outside a transaction, each its own commit. */
  autocommits: number;
  rollbacks: number;
  /**
   * PostgreSQL: the statements sent while no earlier one on their connection was still awaiting
   * its answer — the waits for the server (a pipelined statement rides with the one before it).
   * SQLite: 0 (statements run in-process).
   */
  roundTrips: number;
}

/**
 * Starts the statements the service sends for its own upkeep, on a timer and outside any
 * transaction (postgres/statistics.ts): not counted, so that no counted window catches one by chance.
 */
export const UNCOUNTED = '/* uncounted */ ';

/** Longer than any BEGIN/COMMIT/ROLLBACK/SAVEPOINT Kysely or the batcher sends. */
const CONTROL_MAX_LENGTH = 128;
const CONTROL = /^\s*(begin|start\s+transaction|commit|end|rollback(\s+to)?|savepoint|release)\b/i;
const WRITE = /^\s*(insert|update|delete|replace)\b/i;
const WITH_WRITE = /^\s*with\b[\s\S]*\b(insert\s+into|update\s+\S+\s+set|delete\s+from)\b/i;

/** BEGIN, COMMIT, ROLLBACK or a savepoint statement; null for any other. */
function controlKind(sql: string): StatementKind | null {
  const control = CONTROL.exec(sql);
  if (!control) return null;
  const word = control[1]!.toLowerCase();
  if (word === 'begin' || word.startsWith('start')) return 'begin';
  if (word === 'commit' || word === 'end') return 'commit';
  if (word === 'rollback') return 'rollback';
  return 'savepoint';
}

/** The kind of one SQL statement, from its text. */
export function classify(sql: string): StatementKind {
  return controlKind(sql) ?? (WRITE.test(sql) || WITH_WRITE.test(sql) ? 'write' : 'read');
}

/** The tables one statement touches, by their names in the database (aliases and CTE names aside). */
export interface StatementTables {
  /** Tables it reads: in FROM, joins and subqueries (a write's own target only when it reads it elsewhere too). */
  reads: ReadonlySet<string>;
  /** Tables it inserts into, updates, deletes from or merges into. */
  writes: ReadonlySet<string>;
}

/** One statement of the log, as `logged()` gives it. */
export interface LoggedStatement {
  kind: StatementKind;
  /** Null for a statement that reached the database without a Kysely operation tree (BEGIN/COMMIT, a raw text). */
  tables: StatementTables | null;
  /** Its text: for a person reading a failure, not for a test to match. */
  sql: string;
}

interface Node {
  kind: string;
  [key: string]: unknown;
}
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && typeof (value as Node).kind === 'string';

/** The name of the table `node` names (a TableNode: schema aside). */
const tableName = (node: Node): string => ((node.table as Node).identifier as { name: string }).name;

/**
 * The tables the statement compiled from `roots` touches (several roots: statements sent as one),
 * found by walking their operation trees; null when none is more than raw text.
 */
export function tablesOf(roots: readonly OperationNode[]): StatementTables | null {
  if (roots.every((root) => root.kind === 'RawNode' && !hasTable(root))) return null;
  const reads = new Set<string>();
  const writes = new Set<string>();
  const ctes = new Set<string>();
  /** `target`: the node is (or wraps) the table a write changes. */
  const visit = (value: unknown, target: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, target);
      return;
    }
    if (!isNode(value)) return;
    switch (value.kind) {
      case 'TableNode':
        (target ? writes : reads).add(tableName(value));
        return;
      case 'AliasNode':
        // The alias itself is an IdentifierNode: only what it names counts.
        visit(value.node, target);
        return;
      case 'FromNode':
        visit(value.froms, target);
        return;
      case 'ReferenceNode':
        // `"t"."id"`: its table is a name in scope (mostly an alias), not a read of its own.
        visit(value.column, false);
        return;
      case 'CommonTableExpressionNameNode':
        ctes.add(tableName(value.table as Node));
        return;
    }
    const written =
      value.kind === 'InsertQueryNode' || value.kind === 'MergeQueryNode'
        ? 'into'
        : value.kind === 'UpdateQueryNode'
          ? 'table'
          : value.kind === 'DeleteQueryNode'
            ? 'from'
            : null;
    for (const key in value) if (key !== 'kind') visit(value[key], key === written);
  };
  for (const root of roots) visit(root, false);
  for (const name of ctes) {
    reads.delete(name);
    writes.delete(name);
  }
  return { reads, writes };
}

function hasTable(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasTable);
  if (!isNode(value)) return false;
  if (value.kind === 'TableNode') return true;
  for (const key in value) if (key !== 'kind' && hasTable(value[key])) return true;
  return false;
}

const zero = (): StatementCounts => ({ reads: 0, writes: 0, control: 0, statements: 0, commits: 0, autocommits: 0, rollbacks: 0, roundTrips: 0 });

/** A pg client as far as counting needs it (kept free of the driver's types). */
interface QueryingClient {
  query(...args: unknown[]): unknown;
  /** node-postgres's pipeline mode: queries are written without waiting for the answers before them. */
  pipeline?: boolean;
}

export class StatementCounter {
  /** Off by default; `start()` turns it on. */
  enabled = false;
  private counts = zero();
  /**
   * When set, every counted statement's text is appended (profiling a path: which statements, in
   * order); `logged()` tells what each touched.
   */
  log: string[] | null = null;
  /** The tables of the statements described while `log` was set, by their texts (a text always touches the same). */
  private readonly described = new Map<string, StatementTables | null>();

  /** Counts from zero from now on. */
  start(): void {
    this.counts = zero();
    this.enabled = true;
  }

  /** Stops counting; returns what was counted since `start()`. */
  stop(): StatementCounts {
    this.enabled = false;
    return this.snapshot();
  }

  /** What was counted since `start()` (counting goes on). */
  snapshot(): StatementCounts {
    return { ...this.counts };
  }

  /**
   * The statement whose text is `sql` was compiled from `roots` (several: held writes sent as one
   * statement). Its callers call it only while `log` is set: otherwise it costs them one test.
   */
  describe(sql: string, roots: readonly OperationNode[]): void {
    if (this.described.has(sql)) return;
    if (this.described.size >= 10_000) this.described.clear();
    this.described.set(sql, tablesOf(roots));
  }

  /** `describe` for a compiled query, while `log` is set. */
  describeQuery(query: CompiledQuery): void {
    if (this.log) this.describe(query.sql, [query.query]);
  }

  /** The statements of `log`, each with its kind and the tables it touched (null: not compiled by Kysely). */
  logged(): LoggedStatement[] {
    return (this.log ?? []).map((sql) => ({ kind: classify(sql), tables: this.described.get(sql) ?? null, sql }));
  }

  /** One statement about to run on a connection that has (`inTransaction`) or has not a transaction open. */
  count(sql: string, inTransaction: boolean): StatementKind {
    const kind = classify(sql);
    this.log?.push(sql);
    const c = this.counts;
    c.statements++;
    if (kind === 'read') c.reads++;
    else if (kind === 'write') {
      c.writes++;
      if (!inTransaction) {
        c.autocommits++;
        c.commits++;
      }
    } else {
      c.control++;
      if (kind === 'commit') c.commits++;
      else if (kind === 'rollback') c.rollbacks++;
    }
    return kind;
  }

  /** PostgreSQL: counts every query `client` sends from now on (called once per pooled client). */
  watch(client: QueryingClient): void {
    const query = client.query.bind(client);
    let open = false;
    /** Statements of this client sent and not answered yet (without pipelining each one waits for the one before). */
    let unanswered = 0;
    const pipelined = client.pipeline === true;
    const answered = () => void unanswered--;
    client.query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string } | undefined;
      const sql = typeof first === 'string' ? first : (first?.text ?? '');
      if (sql.startsWith(UNCOUNTED)) return query(...args);
      const kind = this.enabled ? this.count(sql, open) : sql.length <= CONTROL_MAX_LENGTH ? controlKind(sql) : null;
      if (kind === 'begin') open = true;
      else if (kind === 'commit' || kind === 'rollback') open = false;
      const result = query(...args);
      if (this.enabled && result instanceof Promise) {
        if (unanswered === 0 || !pipelined) this.counts.roundTrips++;
        unanswered++;
        result.then(answered, answered);
      }
      return result;
    };
  }
}

/**
 * `dialect` whose connections describe each query to `counter` (`StatementCounter.describe`) before
 * running it, while its log is on: the same connection objects (drivers may look into them), with
 * `executeQuery` and `streamQuery` wrapped once each.
 */
export function describingQueries(dialect: Dialect, counter: StatementCounter): Dialect {
  const wrapped = new WeakSet<DatabaseConnection>();
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = async () => {
        const connection = await acquire();
        if (!wrapped.has(connection)) {
          wrapped.add(connection);
          const execute = connection.executeQuery.bind(connection);
          const stream = connection.streamQuery.bind(connection);
          connection.executeQuery = (query) => {
            if (counter.log) counter.describeQuery(query);
            return execute(query);
          };
          connection.streamQuery = (query, chunkSize) => {
            if (counter.log) counter.describeQuery(query);
            return stream(query, chunkSize);
          };
        }
        return connection;
      };
      return driver;
    },
  };
}
