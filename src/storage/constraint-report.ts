/**
 * Before a migration adds CHECK constraints, finds the existing rows that would violate them and
 * refuses to run it, naming each row (table, key, column, value) so that the operator can fix the
 * data. Nothing is dropped or altered: a bad row stops the migration, it is never skipped.
 *
 * The constraints are read from the migration's own statements, so the report always checks
 * exactly what the migration is about to enforce:
 *   - PostgreSQL: `ALTER TABLE t ADD CONSTRAINT name CHECK (expr)[, ADD CONSTRAINT ...]`;
 *   - SQLite, which cannot add a CHECK to a table: `CREATE TABLE t_new (... CHECK (expr) ...)`
 *     filled by `INSERT INTO t_new (...) SELECT ... FROM t` — the rows of `t` are checked.
 * A row violates a CHECK when the expression is false (NULL passes, as in the CHECK itself), so the
 * query is `SELECT <key>, <columns of expr> FROM t WHERE NOT (expr)`.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './connect.js';

export interface CheckConstraint {
  /** The existing table whose rows must satisfy it. */
  table: string;
  name: string;
  /** The CHECK expression, in the migration's dialect. */
  expression: string;
}

export interface Violation {
  table: string;
  constraint: string;
  /** The row's primary key, e.g. `{ id: 'LDG7M4WW44G' }`. */
  key: Record<string, unknown>;
  /** The columns the expression reads, with the stored value (and on SQLite its storage class). */
  values: Array<{ column: string; value: unknown; type?: string }>;
}

/** How many violating rows the error lists. */
export const REPORTED_ROWS = 20;

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';

/** Every CHECK a migration's statements add to an existing table. */
export function checksOf(statements: string[]): CheckConstraint[] {
  const copiedFrom = new Map<string, string>();
  for (const statement of statements) {
    const copy = new RegExp(`^\\s*INSERT\\s+INTO\\s+(${IDENT})\\b[\\s\\S]*?\\bSELECT\\b[\\s\\S]*?\\bFROM\\s+(${IDENT})\\s*$`, 'i').exec(statement);
    if (copy) copiedFrom.set(copy[1]!.toLowerCase(), copy[2]!.toLowerCase());
  }
  const checks: CheckConstraint[] = [];
  for (const statement of statements) {
    const alter = new RegExp(`^\\s*ALTER\\s+TABLE\\s+(?:IF\\s+EXISTS\\s+)?(?:ONLY\\s+)?(${IDENT})\\s`, 'i').exec(statement);
    if (alter) {
      checks.push(...checksIn(alter[1]!.toLowerCase(), statement.slice(alter[0].length), true));
      continue;
    }
    const create = new RegExp(`^\\s*CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?(${IDENT})\\s*\\(`, 'i').exec(statement);
    // A new table filled from nothing has no rows to check.
    const source = create ? copiedFrom.get(create[1]!.toLowerCase()) : undefined;
    if (create && source) checks.push(...checksIn(source, statement.slice(create[0].length)));
  }
  return checks;
}

/**
 * The `[CONSTRAINT name] CHECK (expr)` clauses of a statement's text, unnamed ones numbered. In an
 * ALTER TABLE only `ADD [CONSTRAINT name] CHECK` counts (a CHECK of a column being added reads no existing value).
 */
function checksIn(table: string, text: string, alter = false): CheckConstraint[] {
  const found: CheckConstraint[] = [];
  const code = blankLiterals(text);
  const keyword = /\bCHECK\s*\(/gi;
  for (let match = keyword.exec(code); match; match = keyword.exec(code)) {
    const open = match.index + match[0].length - 1;
    const close = matchingParen(code, open);
    const before = code.slice(0, match.index);
    const named = new RegExp(`\\bCONSTRAINT\\s+(${IDENT})\\s+$`, 'i').exec(before);
    keyword.lastIndex = close + 1;
    if (alter && !new RegExp(`\\bADD\\s+(CONSTRAINT\\s+${IDENT}\\s+)?$`, 'i').test(before)) continue;
    found.push({ table, name: named ? named[1]! : `${table} CHECK #${found.length + 1}`, expression: text.slice(open + 1, close).trim() });
  }
  return found;
}

/** The text with the inside of every '...' literal blanked (same length), so that scans skip literals. */
function blankLiterals(text: string): string {
  return text.replace(/'(?:[^']|'')*'/g, (literal) => `'${' '.repeat(literal.length - 2)}'`);
}

function matchingParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return i;
  }
  throw new Error(`unbalanced parentheses in CHECK (${code.slice(open, open + 80)}`);
}

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

type AnyDb = Kysely<any>;

/** Column names of a table (empty when it does not exist) and its primary key, in order. */
async function describe(db: AnyDb, dialect: Dialect, table: string): Promise<{ columns: string[]; key: string[] }> {
  if (dialect === 'sqlite') {
    const rows = (await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${table})`.execute(db)).rows;
    return {
      columns: rows.map((r) => r.name),
      key: rows
        .filter((r) => r.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((r) => r.name),
    };
  }
  const columns = (
    await sql<{
      name: string;
    }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(
      db,
    )
  ).rows.map((r) => r.name);
  if (columns.length === 0) return { columns, key: [] };
  const key = (
    await sql<{ name: string }>`
      select a.attname as name from pg_index i
      join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = to_regclass(${quote(table)}) and i.indisprimary
      order by array_position(i.indkey, a.attnum)`.execute(db)
  ).rows.map((r) => r.name);
  return { columns, key };
}

/** The table's columns that an expression reads (string literals ignored). */
function columnsRead(expression: string, columns: string[]): string[] {
  const code = blankLiterals(expression);
  return columns.filter((c) => new RegExp(`(^|[^A-Za-z0-9_."])${c}($|[^A-Za-z0-9_"])`, 'i').test(code) || code.includes(quote(c)));
}

/**
 * The rows that violate the checks, at most `limit` of them, and how many there are per
 * constraint. Checks on tables that do not exist yet are skipped.
 */
export async function findViolations(
  db: AnyDb,
  dialect: Dialect,
  checks: CheckConstraint[],
  limit = REPORTED_ROWS,
): Promise<{ rows: Violation[]; counts: Map<string, number> }> {
  const rows: Violation[] = [];
  const counts = new Map<string, number>();
  const tables = new Map<string, { columns: string[]; key: string[] }>();
  // One scan per table finds whether any of its checks fails (the usual answer: none); only a
  // table with a violating row is read again, constraint by constraint, to name the rows.
  const suspect = new Set<string>();
  for (const table of new Set(checks.map((c) => c.table))) {
    const described = await describe(db, dialect, table);
    tables.set(table, described);
    if (described.columns.length === 0) continue;
    const any = checks
      .filter((c) => c.table === table)
      .map((c) => `not (${c.expression})`)
      .join(' or ');
    if ((await sql.raw(`select 1 as found from ${quote(table)} where ${any} limit 1`).execute(db)).rows.length > 0) suspect.add(table);
  }
  for (const check of checks) {
    if (!suspect.has(check.table)) continue;
    const { columns, key } = tables.get(check.table)!;
    // Without a primary key, SQLite's rowid (PostgreSQL's ctid) still names the row.
    const keyColumns = key.length > 0 ? key : [dialect === 'sqlite' ? 'rowid' : 'ctid'];
    const read = columnsRead(check.expression, columns);
    // Positional aliases: the CamelCasePlugin would rename snake_case result columns.
    const selected = [
      ...keyColumns.map((c, i) => `${c === 'rowid' || c === 'ctid' ? c : quote(c)}${dialect === 'postgres' && c === 'ctid' ? '::text' : ''} as k${i}`),
      ...read.map((c, i) => `${quote(c)} as v${i}`),
      ...(dialect === 'sqlite' ? read.map((c, i) => `typeof(${quote(c)}) as t${i}`) : []),
    ];
    const where = `from ${quote(check.table)} where not (${check.expression})`;
    const found = (await sql.raw<Record<string, unknown>>(`select ${selected.join(', ')} ${where} limit ${Math.max(1, limit - rows.length)}`).execute(db)).rows;
    if (found.length === 0) continue;
    const total = (await sql.raw<{ n: number | string }>(`select count(*) as n ${where}`).execute(db)).rows[0]?.n ?? found.length;
    counts.set(`${check.table}.${check.name}`, Number(total));
    for (const row of found) {
      if (rows.length >= limit) break;
      rows.push({
        table: check.table,
        constraint: check.name,
        key: Object.fromEntries(keyColumns.map((c, i) => [c, row[`k${i}`]])),
        values: read.map((column, i) => ({ column, value: row[`v${i}`], ...(dialect === 'sqlite' ? { type: String(row[`t${i}`]) } : {}) })),
      });
    }
  }
  return { rows, counts };
}

const show = (value: unknown): string => (value === null || value === undefined ? 'NULL' : typeof value === 'string' ? `'${value}'` : String(value));

/** One line per violating row: `transactions id='X': amount='Infinity' (text) violates transactions_amount_check`. */
export function describeViolation(v: Violation): string {
  const key = Object.entries(v.key)
    .map(([c, value]) => `${c}=${show(value)}`)
    .join(', ');
  const values = v.values.map((x) => `${x.column}=${show(x.value)}${x.type ? ` (${x.type})` : ''}`).join(', ');
  return `${v.table} ${key}: ${values} violates ${v.constraint}`;
}

export class ConstraintViolationsError extends Error {
  constructor(
    readonly rows: Violation[],
    readonly counts: Map<string, number>,
  ) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const perConstraint = [...counts].map(([name, n]) => `${name}: ${n}`).join(', ');
    super(
      `${total} existing row(s) would violate the new constraints (${perConstraint}); nothing was changed. ` +
        `Fix or remove these rows, then run the migration again:\n${rows.map((r) => `  ${describeViolation(r)}`).join('\n')}` +
        (total > rows.length ? `\n  ... and ${total - rows.length} more` : ''),
    );
    this.name = 'ConstraintViolationsError';
  }
}

/** Throws ConstraintViolationsError when existing rows violate a CHECK that the statements add. */
export async function assertNoViolations(db: AnyDb, dialect: Dialect, statements: string[]): Promise<void> {
  const checks = checksOf(statements);
  if (checks.length === 0) return;
  const { rows, counts } = await findViolations(db, dialect, checks);
  if (rows.length > 0) throw new ConstraintViolationsError(rows, counts);
}
