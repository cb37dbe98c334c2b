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
 */

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
  /** When set, every counted statement's text is appended (profiling a path: which statements, in order). */
  log: string[] | null = null;

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
