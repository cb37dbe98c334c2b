/**
 * Query plans of the SQL the real repositories send: a Kysely plugin records the statements a
 * repository call runs, then EXPLAIN (SQLite: EXPLAIN QUERY PLAN) runs them with the same parameters.
 */
import {
  CompiledQuery,
  createQueryId,
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { Dialect } from '../../src/storage/connect.js';
import type { Database } from '../../src/storage/schema.js';

class Recorder implements KyselyPlugin {
  readonly nodes: RootOperationNode[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.nodes.push(args.node);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** Runs `fn` with a recording database handle; returns the SQL statements it executed. */
export async function recordQueries(db: Kysely<Database>, fn: (db: Kysely<Database>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const recorder = new Recorder();
  const recording = db.withPlugin(recorder);
  await fn(recording);
  const executor = recording.getExecutor();
  return recorder.nodes.map((node) => executor.compileQuery(node, createQueryId()));
}

export interface Plan {
  lines: string[];
  /** The plan reads the table through an index and does not sort: a page costs the page, not the table. */
  usesIndexWithoutSort: boolean;
  index: string | null;
  /** The condition the index is searched with (what bounds the scan), as the plan prints it. */
  indexCondition: string | null;
}

export async function explain(db: Kysely<Database>, dialect: Dialect, query: CompiledQuery): Promise<Plan> {
  if (dialect === 'sqlite') {
    const result = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
    const lines = result.rows.map((r) => r.detail);
    const found = lines.map((l) => /USING (?:COVERING )?INDEX (\w+)(?: \((.*)\))?/.exec(l)).find(Boolean);
    const index = found?.[1] ?? null;
    return { lines, index, indexCondition: found?.[2] ?? null, usesIndexWithoutSort: index !== null && !lines.some((l) => /TEMP B-TREE/.test(l)) };
  }
  const result = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]));
  const lines = result.rows.map((r) => r['QUERY PLAN']);
  const index = lines.map((l) => /Index (?:Only )?Scan(?: Backward)? using (\w+)/.exec(l)?.[1]).find(Boolean) ?? null;
  const indexCondition = lines.map((l) => /Index Cond: (.*)/.exec(l)?.[1]).find(Boolean) ?? null;
  return { lines, index, indexCondition, usesIndexWithoutSort: index !== null && !lines.some((l) => /\bSort\b/.test(l)) };
}
