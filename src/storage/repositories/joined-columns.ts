/**
 * One read that brings another table's row beside the main one (a join): that row's columns are
 * selected under prefixed aliases and taken back out of the result. The alias is prefix + the
 * column in camel case, which the CamelCasePlugin maps both ways unchanged.
 */
import { sql, type AliasedRawBuilder } from 'kysely';

export function joinedAlias(prefix: string, column: string): string {
  return `${prefix}${column[0]!.toUpperCase()}${column.slice(1)}`;
}

/** The select list of `table`'s `columns` (`table` as named in the query), each under its prefixed alias. */
export function joinedColumns(table: string, prefix: string, columns: readonly string[]): AliasedRawBuilder<unknown, string>[] {
  return columns.map((column) => sql.ref<unknown>(`${table}.${column}`).as(joinedAlias(prefix, column)));
}

/** Each column's prefixed alias, computed once per (columns, prefix): the reads on the payment path call these per row. */
const aliasCache = new WeakMap<readonly string[], Map<string, readonly string[]>>();

function aliasesOf(prefix: string, columns: readonly string[]): readonly string[] {
  let byPrefix = aliasCache.get(columns);
  if (!byPrefix) aliasCache.set(columns, (byPrefix = new Map()));
  let aliases = byPrefix.get(prefix);
  if (!aliases) byPrefix.set(prefix, (aliases = columns.map((column) => joinedAlias(prefix, column))));
  return aliases;
}

/**
 * The prefixed columns of `row` as a row of their own, `row` left as it is (no copy of the wide
 * row, no deletes that would turn it into a slow dictionary); null when its `id` is null (no row joined).
 */
export function pickJoined(row: Record<string, unknown>, prefix: string, columns: readonly string[]): Record<string, unknown> | null {
  const aliases = aliasesOf(prefix, columns);
  if (row[aliases[columns.indexOf('id')]!] == null) return null;
  const joined: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) joined[columns[i]!] = row[aliases[i]!];
  return joined;
}
