/**
 * CamelCasePlugin for SQLite, whose rows come with their properties named already: the statements
 * Kysely runs build each row with the camelCase names (sqlite/rows.ts, compiled once per statement),
 * so the plugin still translates queries to snake_case but leaves results as they are — it would
 * otherwise copy every row into a new object, column by column (1.2–1.6 % of the event loop's time
 * in closed-loop captures and MITs).
 */
import { CamelCasePlugin, type PluginTransformResultArgs, type QueryResult, type UnknownRow } from 'kysely';

export class PrenamedRowsPlugin extends CamelCasePlugin {
  /** The property CamelCasePlugin gives a result column: what the statements name it. */
  readonly keyOf = (column: string): string => this.camelCase(column);

  override async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
