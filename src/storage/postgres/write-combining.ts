/**
 * Fewer round trips per commit on PostgreSQL (issue 10): node-postgres sends one statement per
 * round trip, and at a few hundred payments a second the socket writes and the backends' wake-ups
 * are most of the work. Two changes, both inside a transaction only, both invisible to callers:
 *
 * - **Deferred writes.** A write whose caller needs nothing back (no RETURNING, its row count
 *   unused) is marked with `deferrable()`; it is held and sent together with the next ones, as one
 *   statement of data-modifying CTEs (`WITH w1 AS (…), w2 AS (…) SELECT 1`), when the transaction
 *   commits or when a statement that could observe it comes: one that names a table with a held
 *   write, or any statement while a held INSERT may be a row another row refers to (a table with
 *   foreign keys pointing at it), savepoints and streamed reads. Held writes are in the order they
 *   were made; in one statement they see the same snapshot, which is why only independent writes
 *   are marked (new rows, updates by key). A marked statement that is itself made of CTEs (the
 *   engine's record of a payment, an answer's checked update) is held too: PostgreSQL allows
 *   data-modifying CTEs only at the top level, so its CTEs are lifted into the combined
 *   statement's, renamed, and its main query becomes one more (a SELECT among them is read by the
 *   combined statement's own, so that it runs). It joins the others only when no table is named
 *   by both it and them; otherwise they are sent first. A held write that fails, fails the
 *   statement it goes with, and so the transaction, which is rolled back — as it would have been
 *   at once.
 * - **A lazy BEGIN.** BEGIN is sent with the first statement that is not held. A transaction whose
 *   writes were all held sends them as ONE statement without BEGIN/COMMIT (a single statement is
 *   atomic by itself); one that sent nothing sends nothing.
 * - **A lazy connection.** The pool's connection is taken by the first statement that needs one of
 *   its own (BEGIN and what follows it); a statement outside a transaction, and a transaction's
 *   held writes sent alone, go to the shared connections (postgres/shared-clients.ts).
 * - **Sent now, awaited later.** BEGIN and the held writes are sent without waiting for their
 *   answers; the next statement (or the COMMIT) waits for them and for itself. The pool's clients
 *   pipeline (connect.ts), so each goes out with the statement after it: a transaction waits once
 *   per statement whose answer it needs, plus the COMMIT. Without pipelining the client queues
 *   them, and the order is the same.
 *
 * SQLite ignores the mark (a comment): statements run in-process there, the group commit batches
 * the commits (sqlite/group-commit.ts).
 */
import type { SharedClients } from './shared-clients.js';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
  sql,
  type Expression,
} from 'kysely';
import type { Database } from '../schema.js';
import type { StatementCounter } from '../statement-counter.js';

/** Ends a write that may be held (a SQL comment, so the text stays valid on its own). */
const MARK = '/* deferrable */';

/** Tables other tables refer to by foreign key: a held INSERT into one may be a row a later statement needs. */
const REFERENCED_TABLES = new Set([
  'accounts',
  'billing_agreements',
  'billing_plans',
  'multi_links',
  'notifications',
  'operations',
  'points_of_sale',
  'sessions',
  'settlement_transfers',
  'terminals',
  'transactions',
  'webhook_deliveries',
  'webhooks',
]);

/** Marks a write (INSERT/UPDATE/DELETE without RETURNING, result unused) that may be sent later in its transaction. */
export function deferrable<Q extends { modifyEnd(modifier: Expression<unknown>): Q }>(query: Q): Q {
  return query.modifyEnd(sql.raw(MARK));
}

/** Appends the mark to a statement's text (one built without Kysely, such as a bulk insert). */
export function deferrableText(text: string): string {
  return `${text} ${MARK}`;
}

/**
 * Lets the writes of the transaction `trx` wait up to `ms` for another transaction's joinable
 * statement and go with it (postgres/shared-clients.ts), when they are all held and joinable: a commit
 * nobody waits for (a delivered callback's record) then costs no round trip or commit of its own.
 * Without shared connections, or once the transaction has begun on its own connection, no effect.
 */
export async function lingerCommit(trx: Kysely<Database>, ms: number): Promise<void> {
  await trx.getExecutor().provideConnection(async (connection) => {
    if (connection instanceof CombiningConnection) connection.lingerMs = ms;
  });
}

/** Marks, before MARK, a held write that other commits' may join (see joinable). */
const JOINABLE = '/* joinable */';
const JOINABLE_END = `${JOINABLE} ${MARK}`;

/**
 * Marks a held write that may also be joined with other transactions' joinable writes given in the
 * same turn, in one transaction (postgres/shared-clients.ts), when every write of its transaction is
 * joinable. The joined statements run one after another, each seeing those before it, as they
 * would alone; but they commit together, and when one is refused all roll back and each goes
 * again alone. So a joinable write is one that may wait for the others' commit and be sent again
 * after a refusal — one that writes only:
 * - new rows, with ids of their own (the record of a payment, an event, a callback's row);
 * - a row its caller alone writes at that moment (a job under the caller's lease, the callback row
 *   that job delivers);
 * - or a row it checks: refused unless its update left the row as predicted (an answer's
 *   predicted answer, transaction-updates.ts).
 */
export function joinable<Q extends { modifyEnd(modifier: Expression<unknown>): Q }>(query: Q): Q {
  return query.modifyEnd(sql.raw(JOINABLE_END));
}

/** joinable for a statement's text (one built without Kysely, such as a payment's record). */
export function joinableText(text: string): string {
  return deferrableText(`${text} ${JOINABLE}`);
}

const WRITE_TARGET = /^\s*(insert\s+into|update|delete\s+from)\s+"([^"]+)"/i;
/** The writes of a statement of data-modifying CTEs (`WITH a AS (INSERT …) INSERT …`). */
const CTE_WRITE_TARGETS = /\b(insert\s+into|update|delete\s+from)\s+"([^"]+)"/gi;
const QUOTED = /"([^"]+)"/g;

interface Held {
  query: CompiledQuery;
  /** The tables it writes. */
  tables: string[];
  insert: boolean;
  /** A statement of CTEs itself: combine() lifts its CTEs to the top level (PostgreSQL wants data-modifying CTEs there). */
  cte: boolean;
  /** Marked by joinableText. */
  joinable: boolean;
}

/** `query` as a held write, or null when it is not one (not marked, or not a write). */
function heldOf(query: CompiledQuery): Held | null {
  if (!query.sql.endsWith(MARK)) return null;
  const joinable = query.sql.endsWith(JOINABLE_END);
  const direct = WRITE_TARGET.exec(query.sql);
  if (direct) return { query, tables: [direct[2]!], insert: /^\s*insert/i.test(direct[1]!), cte: false, joinable };
  if (!/^\s*with\s/i.test(query.sql)) return null;
  const writes = [...query.sql.matchAll(CTE_WRITE_TARGETS)];
  if (writes.length === 0) return null;
  return { query, tables: writes.map((m) => m[2]!), insert: writes.some((m) => /^insert/i.test(m[1]!)), cte: true, joinable };
}

/** The connection Kysely gets: the pool's own, with the held writes of its open transaction. */
class CombiningConnection implements DatabaseConnection {
  inTransaction = false;
  begun = false;
  /** lingerCommit: how long the transaction's writes, sent alone as a joinable statement, may wait for another's. */
  lingerMs = 0;
  private held: Held[] = [];
  /**
   * Statements sent whose answers nobody has waited for yet (BEGIN, held writes): they are on the
   * wire ahead of the next statement (the pool's clients pipeline, connect.ts) and that statement
   * waits for them too, so a failure among them is its failure.
   */
  private unanswered: Promise<unknown>[] = [];

  /** The pool's connection, taken at the first statement that needs one of its own. */
  private own: Promise<DatabaseConnection> | null = null;

  constructor(
    private readonly acquire: () => Promise<DatabaseConnection>,
    private readonly shared: SharedClients | null,
    /** Told what each statement touches while its log is on (StatementCounter.describe). */
    private readonly counter: StatementCounter | null = null,
  ) {}

  /** Runs `use` on the pool's connection, in the order asked (the first use takes it). */
  onOwn<T>(use: (conn: DatabaseConnection) => Promise<T>): Promise<T> {
    this.own ??= this.acquire();
    return this.own.then(use);
  }

  /** The pool's connection if one was taken, to be given back. */
  taken(): Promise<DatabaseConnection> | null {
    const own = this.own;
    this.own = null;
    return own;
  }

  /**
   * A statement that is a transaction by itself: on a shared connection, unless this one has its
   * own — and there, when `joinable`, as one with other transactions' joinable statements.
   */
  private sendAlone<R>(query: CompiledQuery, joinable = false): Promise<QueryResult<R>> {
    if (!this.shared || this.own) return this.onOwn((c) => c.executeQuery<R>(query));
    return joinable ? this.shared.executeJoined<R>(query, this.lingerMs) : this.shared.execute<R>(query);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.counter?.log) this.counter.describeQuery(query);
    if (!this.inTransaction) return this.sendAlone<R>(query);
    const held = heldOf(query);
    if (held) {
      // A statement of CTEs joins the held writes only when they have no table in common (one
      // snapshot: neither would see the other's rows); otherwise they go first.
      if (this.held.some((h) => (h.cte || held.cte) && sharesTable(h, held))) this.sendHeld();
      this.held.push(held);
      return { rows: [] };
    }
    if (this.mustFlushBefore(query.sql)) this.sendHeld();
    this.sendBegin();
    return this.answerOf(this.onOwn((c) => c.executeQuery<R>(query)));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.counter?.log) this.counter.describeQuery(query);
    if (this.inTransaction) {
      this.sendHeld();
      this.sendBegin();
      await this.answerOf();
    }
    yield* (await this.onOwn(async (c) => c)).streamQuery<R>(query, chunkSize);
  }

  /** Sends BEGIN if the transaction has sent nothing yet (its answer is awaited with the next statement's). */
  sendBegin(): void {
    if (this.inTransaction && !this.begun) {
      this.begun = true;
      this.unanswered.push(this.onOwn((c) => c.executeQuery(CompiledQuery.raw('begin'))));
    }
  }

  /** Sends the held writes as one statement (after BEGIN, unless `alone`: then they are the whole transaction). */
  sendHeld(alone = false): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    if (!alone) this.sendBegin();
    const combined = combine(held.map((h) => h.query));
    if (this.counter?.log)
      this.counter.describe(
        combined.sql,
        held.map((h) => h.query.query),
      );
    // Alone, they are the whole transaction: one statement, which any connection can take.
    const joinable = held.every((h) => h.joinable);
    this.unanswered.push(alone ? this.sendAlone(combined, joinable) : this.onOwn((c) => c.executeQuery(combined)));
  }

  /**
   * `last`'s answer, once everything sent before it has answered: the first failure in the order
   * sent is the one thrown (a statement after a failed one fails only because the transaction is aborted).
   */
  async answerOf<T = void>(last: Promise<T> = Promise.resolve() as Promise<T>): Promise<T> {
    const before = this.unanswered;
    this.unanswered = [];
    if (before.length === 0) return last;
    const settled = await Promise.allSettled([...before, last]);
    for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
    return (settled[settled.length - 1] as PromiseFulfilledResult<T>).value;
  }

  discard(): void {
    this.held = [];
    this.lingerMs = 0;
  }

  private mustFlushBefore(text: string): boolean {
    if (this.held.length === 0) return false;
    if (this.held.some((h) => h.insert && h.tables.some((table) => REFERENCED_TABLES.has(table)))) return true;
    const named = namesIn(text);
    return this.held.some((h) => h.tables.some((table) => named.has(table)));
  }
}

/** Whether `a` and `b` name a table in common (`b`'s text against `a`'s writes, and the other way). */
function sharesTable(a: Held, b: Held): boolean {
  const inA = namesIn(a.query.sql);
  const inB = namesIn(b.query.sql);
  return a.tables.some((table) => inB.has(table)) || b.tables.some((table) => inA.has(table));
}

/** The quoted names in a statement's text; the texts are few (compiled once each), so each is scanned once. */
const names = new Map<string, ReadonlySet<string>>();
function namesIn(text: string): ReadonlySet<string> {
  let found = names.get(text);
  if (!found) {
    if (names.size >= 1024) names.clear();
    names.set(text, (found = new Set([...text.matchAll(QUOTED)].map((m) => m[1]!))));
  }
  return found;
}

/** Index just past the quoted text that starts at `start` (`quote` doubled inside stands for itself). */
function pastQuoted(text: string, start: number, quote: string): number {
  let i = start + 1;
  for (;;) {
    const end = text.indexOf(quote, i);
    if (end < 0) return text.length;
    if (text[end + 1] !== quote) return end + 1;
    i = end + 2;
  }
}

/** `with "a" as (…), "b" as (…) <main>` taken apart at its top level; null when the text is not that. */
export function splitCtes(text: string): { ctes: Array<{ name: string; body: string }>; main: string } | null {
  const head = /^\s*with\s+/i.exec(text);
  if (!head) return null;
  let i = head[0].length;
  const ctes: Array<{ name: string; body: string }> = [];
  for (;;) {
    const cte = /^"([^"]+)"\s+as\s+\(/i.exec(text.slice(i));
    if (!cte) return null;
    i += cte[0].length;
    const start = i;
    for (let depth = 1; depth > 0;) {
      if (i >= text.length) return null;
      const c = text[i]!;
      if (c === "'" || c === '"') {
        i = pastQuoted(text, i, c);
        continue;
      }
      if (c === '(') depth++;
      else if (c === ')') depth--;
      i++;
    }
    ctes.push({ name: cte[1]!, body: text.slice(start, i - 1) });
    const next = /^\s*,\s*/.exec(text.slice(i));
    if (!next) break;
    i += next[0].length;
  }
  return { ctes, main: text.slice(i).trim() };
}

/**
 * Statements → one: `WITH w1 AS (s1), w2 AS (s2) SELECT 1`, parameters numbered on. A statement of
 * CTEs is taken apart: its CTEs become the combined statement's, named `w<n>_<name>`, and its main
 * query `w<n>`; a main SELECT is read, whole rows, by the final one, since PostgreSQL runs a SELECT
 * in WITH only when something reads it (data-modifying ones always run).
 */
export function combine(queries: readonly CompiledQuery[]): CompiledQuery {
  if (queries.length === 1) return queries[0]!;
  const parameters: unknown[] = [];
  for (const query of queries) for (const parameter of query.parameters) parameters.push(parameter);
  return CompiledQuery.raw(combinedText(queries), parameters);
}

/** Combined texts by their parts' texts, in order (a trie): the same texts repeat, their rewriting is costly. */
interface TextNode {
  next: Map<string, TextNode>;
  text?: string;
}
let combinedTexts: TextNode = { next: new Map() };
let combinedNodes = 0;
const MAX_COMBINED_NODES = 10_000;

function combinedText(queries: readonly CompiledQuery[]): string {
  if (combinedNodes > MAX_COMBINED_NODES) {
    combinedTexts = { next: new Map() };
    combinedNodes = 0;
  }
  let node = combinedTexts;
  for (const query of queries) {
    let next = node.next.get(query.sql);
    if (!next) {
      node.next.set(query.sql, (next = { next: new Map() }));
      combinedNodes++;
    }
    node = next;
  }
  // The parameter counts follow from the texts (each names its own $1…$n).
  node.text ??= buildCombinedText(queries);
  return node.text;
}

function buildCombinedText(queries: readonly CompiledQuery[]): string {
  let offset = 0;
  const read: string[] = [];
  const parts = queries.flatMap((query, i) => {
    const text = offset === 0 ? query.sql : query.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    offset += query.parameters.length;
    const name = `w${i + 1}`;
    const split = splitCtes(text);
    if (!split) return [`"${name}" as (${text})`];
    const rename = (part: string) => split.ctes.reduce((renamed, cte) => renamed.replaceAll(`"${cte.name}"`, `"${name}_${cte.name}"`), part);
    if (/^select\s/i.test(split.main)) read.push(`"${name}"`);
    return [...split.ctes.map((cte) => `"${name}_${cte.name}" as (${rename(cte.body)})`), `"${name}" as (${rename(split.main)})`];
  });
  // Each read on its own, by whole rows: PostgreSQL may inline a CTE read once and drop the columns
  // nobody uses (a check among them would not run), and a join would skip the rest after an empty one.
  const reads = read.map((name) => `(select count(*) from ${name} where ${name} is not null)`);
  return `with ${parts.join(', ')} select ${reads.length ? reads.join(', ') : '1'}`;
}

class CombiningDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly shared: SharedClients | null,
    private readonly counter: StatementCounter | null,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new CombiningConnection(() => this.inner.acquireConnection(), this.shared, this.counter);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const conn = connection as CombiningConnection;
    conn.inTransaction = true;
    conn.begun = false;
    // An isolation level or access mode is part of the BEGIN itself: sent at once.
    if (settings.isolationLevel || settings.accessMode) {
      conn.begun = true;
      await conn.onOwn((c) => this.inner.beginTransaction(c, settings));
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = connection as CombiningConnection;
    try {
      if (!conn.begun) {
        conn.sendHeld(true);
        await conn.answerOf();
      } else {
        // The held writes and the COMMIT go out together: one round trip.
        conn.sendHeld();
        await conn.answerOf(conn.onOwn((c) => this.inner.commitTransaction(c)));
      }
    } finally {
      // Whatever happens next (Kysely rolls back after a failed commit) is outside the held writes.
      conn.discard();
    }
    conn.inTransaction = false;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = connection as CombiningConnection;
    conn.discard();
    conn.inTransaction = false;
    if (conn.begun) await conn.answerOf(conn.onOwn((c) => this.inner.rollbackTransaction(c)));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    const conn = connection as CombiningConnection;
    conn.sendHeld();
    conn.sendBegin();
    await conn.answerOf(conn.onOwn((c) => this.inner.savepoint!(c, name, compile)));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]): Promise<void> {
    const conn = connection as CombiningConnection;
    conn.sendHeld();
    await conn.answerOf(conn.onOwn((c) => this.inner.rollbackToSavepoint!(c, name, compile)));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2]): Promise<void> {
    const conn = connection as CombiningConnection;
    conn.sendHeld();
    await conn.answerOf(conn.onOwn((c) => this.inner.releaseSavepoint!(c, name, compile)));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const conn = connection as CombiningConnection;
    // A connection goes back to the pool with nothing held (a transaction always ends first).
    conn.discard();
    conn.inTransaction = false;
    const own = conn.taken();
    const taken = await own?.catch(() => null);
    if (taken) await this.inner.releaseConnection(taken);
  }

  async destroy(): Promise<void> {
    await this.shared?.close();
    return this.inner.destroy();
  }
}

/**
 * `dialect` (PostgreSQL's) with deferred writes and a lazy BEGIN in transactions; `counter` is told
 * what each statement touches, the held writes sent as one included, while its log is on.
 */
export function writeCombining(dialect: Dialect, shared: SharedClients | null = null, counter: StatementCounter | null = null): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new CombiningDriver(dialect.createDriver(), shared, counter),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
