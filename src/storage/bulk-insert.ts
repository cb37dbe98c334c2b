/**
 * Multi-row inserts without Kysely's per-value work. Building `insertInto(t).values(rows)` for a
 * batch of 500 MITs (16 000 values over three tables) took 13 % of the service's busy time on
 * PostgreSQL (operation nodes, the CamelCasePlugin's transformer, the compiler, each per value),
 * and its garbage most of another 15 %. Here Kysely compiles the statement for ONE row of the
 * given columns, once per table and column set; the statement for n rows repeats that row's
 * placeholders n times (cached per row count), and the parameters are the rows' values in order.
 *
 * Rows must share their defined columns (as rows made by one function do); otherwise `bulkInsert`
 * answers null and the caller lets Kysely build the statement as usual (`insertRows` does).
 *
 * On PostgreSQL, PG_ARRAYS_FROM_ROWS rows or more of the tables of PG_BULK_COLUMN_TYPES take one
 * array per column instead, the rows read from `unnest($1::text[], $2::int8[], …)`: one statement
 * text for any such row count, and each value converted to its column once the expression is set
 * up for the statement. In a VALUES list
 * PostgreSQL sets each row's expressions up again, which for a column whose type is a domain
 * (migration 022) costs that domain's constraints each time: 500 rows into `transactions` took
 * 40–43 µs a row through VALUES with casts, 66 µs without, and 32–35 µs through unnest (31–39 µs
 * with its former CHECKs).
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { Recent } from '../shared/recent.js';
import { PG_BULK_COLUMN_TYPES } from './postgres/column-types.js';
import type { Database } from './schema.js';

type Table = keyof Database & string;

interface Shape {
  table: Table;
  conflictColumn: string | undefined;
  /** `insert into "t" ("a", "b") values ` */
  head: string;
  /** What follows the row (an ON CONFLICT clause), with a leading space, or ''. */
  tail: string;
  columns: readonly string[];
  /** `$n` placeholders (PostgreSQL) or `?` (SQLite). */
  numbered: boolean;
  /** PostgreSQL, a table of PG_BULK_COLUMN_TYPES: each column's array type; the rows come from `unnest`. */
  arrayTypes: readonly string[] | null;
  /** SQL text per row count and first parameter number. */
  texts: Map<string, string>;
}

/**
 * PostgreSQL: fewer rows than this go in through VALUES. `unnest` of n arrays sets up a tuplestore
 * per array: for a `transactions` row (46 columns) about 1 MB that the server's glibc malloc takes
 * from the heap and gives back at the statement's end, each time (its default trim threshold is
 * 128 KB), the pages faulted in again by the next statement. One 46-column row: 2 716 statements a
 * second through unnest against 26 034 through VALUES (pgbench, 4 clients, this 2-core host);
 * 64 rows: 2 742 against 3 092. Beyond that, VALUES' per-row set-up (each domain's constraints)
 * costs more than the arrays' fixed cost.
 */
export const PG_ARRAYS_FROM_ROWS = 64;

/** Per dialect adapter: the shapes by key, and the last ones met (checked column by column first). */
const shapes = new WeakMap<object, { byKey: Map<string, Shape>; recent: Recent<Shape> }>();
/**
 * Shapes checked before a look-up by key: joining a wide row's columns into the key cost ~5 µs per
 * call (a payment's record is one row), more than comparing the columns with the few shapes in use.
 */
const RECENT_SHAPES = 8;

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The rows' common defined columns, or null when they differ. */
function columnsOf(rows: readonly Readonly<Record<string, unknown>>[]): string[] | null {
  const columns = Object.keys(rows[0]!).filter((key) => rows[0]![key] !== undefined);
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    let defined = 0;
    for (const key in row) if (row[key] !== undefined) defined++;
    if (defined !== columns.length) return null;
    for (const column of columns) if (row[column] === undefined) return null;
  }
  return columns;
}

/** Kysely's own insert of `rows` into `table`, skipping rows whose `conflictColumn` value is taken. */
function kyselyInsert(db: Kysely<Database>, table: Table, rows: readonly Readonly<Record<string, unknown>>[], conflictColumn: string | undefined) {
  const query = db.insertInto(table).values(rows as never);
  return conflictColumn ? query.onConflict((oc) => oc.column(conflictColumn as never).doNothing()) : query;
}

function shapeOf(db: Kysely<Database>, table: Table, columns: readonly string[], conflictColumn: string | undefined): Shape {
  const adapter = db.getExecutor().adapter;
  let known = shapes.get(adapter);
  if (!known) shapes.set(adapter, (known = { byKey: new Map(), recent: new Recent(RECENT_SHAPES) }));
  const recent = known.recent.find((shape) => shape.table === table && shape.conflictColumn === conflictColumn && sameColumns(shape.columns, columns));
  if (recent) return recent;
  const key = `${table}\u0001${conflictColumn ?? ''}\u0001${columns.join('\u0001')}`;
  let shape = known.byKey.get(key);
  if (shape) return known.recent.add(shape);
  const row = Object.fromEntries(columns.map((column) => [column, null]));
  const { sql } = kyselyInsert(db, table, [row], conflictColumn).compile();
  const values = sql.indexOf(' values (');
  const rowEnd = sql.indexOf(')', values + ' values ('.length);
  if (values < 0 || rowEnd < 0) throw new Error(`bulk insert: unexpected statement ${sql}`);
  const numbered = sql.includes('$1');
  const types = numbered ? PG_BULK_COLUMN_TYPES[table] : undefined;
  shape = {
    table,
    conflictColumn,
    head: sql.slice(0, values + ' values '.length),
    tail: sql.slice(rowEnd + 1),
    columns,
    numbered,
    arrayTypes: types ? columnNames(sql.slice(0, values)).map((name) => `${types[name] ?? 'text'}[]`) : null,
    texts: new Map(),
  };
  if (known.byKey.size >= 64) known.byKey.clear();
  known.byKey.set(key, shape);
  return known.recent.add(shape);
}

/** The column names of `insert into "t" ("a", "b")`, unquoted. */
function columnNames(insertInto: string): string[] {
  const list = insertInto.slice(insertInto.indexOf('(') + 1, insertInto.lastIndexOf(')'));
  return [...list.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replaceAll('""', '"'));
}

/** Whether `rowCount` rows of `shape` go in as one array per column (PostgreSQL, many rows). */
const asArrays = (shape: Shape, rowCount: number): shape is Shape & { arrayTypes: readonly string[] } =>
  shape.arrayTypes !== null && rowCount >= PG_ARRAYS_FROM_ROWS;

/** The statement for `rowCount` rows whose placeholders start at `firstParameter`, cached per shape. */
function textOf(shape: Shape, rowCount: number, firstParameter: number): string {
  // Arrays: one text for any row count.
  const arrays = asArrays(shape, rowCount);
  const key = arrays ? `arrays:${firstParameter}` : `${rowCount}:${firstParameter}`;
  let text = shape.texts.get(key);
  if (text !== undefined) return text;
  text = arrays ? unnestText(shape, shape.arrayTypes, firstParameter) : valuesText(shape, rowCount, firstParameter);
  if (shape.texts.size >= 32) shape.texts.clear();
  shape.texts.set(key, text);
  return text;
}

/** `insert into "t" (…) select * from unnest($1::text[], …)`: one array per column. */
function unnestText(shape: Shape, arrayTypes: readonly string[], firstParameter: number): string {
  const arrays = arrayTypes.map((type, c) => `$${firstParameter + c}::${type}`);
  return `${shape.head.slice(0, -' values '.length)} select * from unnest(${arrays.join(', ')})${shape.tail}`;
}

/** `insert into "t" (…) values (…), (…)`: the row's placeholders `rowCount` times. */
function valuesText(shape: Shape, rowCount: number, firstParameter: number): string {
  const width = shape.columns.length;
  const tuples: string[] = [];
  for (let r = 0; r < rowCount; r++) {
    const slots: string[] = [];
    for (let c = 0; c < width; c++) slots.push(shape.numbered ? `$${firstParameter + r * width + c}` : '?');
    tuples.push(`(${slots.join(', ')})`);
  }
  return shape.head + tuples.join(', ') + shape.tail;
}

export interface BulkInsert {
  sql: string;
  parameters: unknown[];
}

/**
 * `insert into <table> (<the rows' columns>) values (…), (…) [on conflict (<conflictColumn>) do nothing]`
 * with the rows' values; PostgreSQL placeholders start at `firstParameter` (to go into a larger
 * statement). Null when the rows do not share their columns (then let Kysely build it).
 */
export function bulkInsert(
  db: Kysely<Database>,
  table: Table,
  rows: readonly Readonly<Record<string, unknown>>[],
  options: { conflictColumn?: string; firstParameter?: number } = {},
): BulkInsert | null {
  if (rows.length === 0) throw new Error('bulk insert: no rows');
  const columns = columnsOf(rows);
  if (!columns) return null;
  const shape = shapeOf(db, table, columns, options.conflictColumn);
  if (asArrays(shape, rows.length)) {
    return { sql: textOf(shape, rows.length, options.firstParameter ?? 1), parameters: columns.map((column) => rows.map((row) => row[column])) };
  }
  const parameters = new Array<unknown>(rows.length * columns.length);
  let i = 0;
  for (const row of rows) for (const column of columns) parameters[i++] = row[column];
  return { sql: textOf(shape, rows.length, options.firstParameter ?? 1), parameters };
}

/** Runs a bulk insert (or several joined into one statement) on `db` (a transaction or the pool). */
export async function runBulk(db: Kysely<Database>, statement: BulkInsert): Promise<void> {
  await db.executeQuery(CompiledQuery.raw(statement.sql, statement.parameters));
}

/** Parameters per statement: under SQLite's limit (32 766) and PostgreSQL's (65 535). */
const MAX_PARAMETERS = 30_000;

/** Inserts `rows` in as few statements as the parameter limits allow (Kysely builds them when the rows' columns differ). */
export async function insertRows(
  db: Kysely<Database>,
  table: Table,
  rows: readonly Readonly<Record<string, unknown>>[],
  conflictColumn?: string,
): Promise<void> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length));
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const bulk = bulkInsert(db, table, chunk, conflictColumn ? { conflictColumn } : {});
    if (bulk) await runBulk(db, bulk);
    else await kyselyInsert(db, table, chunk, conflictColumn).execute();
  }
}
