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

/** Takes the prefixed columns out of `row` (mutated) into a row of their own; null when its `id` is null (no row joined). */
export function takeJoined(row: Record<string, unknown>, prefix: string, columns: readonly string[]): Record<string, unknown> | null {
  const joined: Record<string, unknown> = {};
  for (const column of columns) {
    const alias = joinedAlias(prefix, column);
    joined[column] = row[alias];
    delete row[alias];
  }
  return joined.id == null ? null : joined;
}
