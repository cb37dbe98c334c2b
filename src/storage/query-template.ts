/**
 * Query templates: a statement of fixed shape, built and compiled by Kysely ONCE per dialect, then
 * run with new parameters only. Building and compiling (operation nodes, Object.freeze, the
 * CamelCasePlugin's transformer, the compiler) cost more CPU than running most of this service's
 * statements; the hot path's statements always have the same shape.
 *
 *   const insertJob = queryTemplate((db: Kysely<Database>, p: { id: string; kind: string }) =>
 *     db.insertInto('jobs').values({ id: p.id, kind: p.kind, state: 'queued' }));
 *   await insertJob.execute(db, { id, kind });
 *
 * The builder is called with placeholders (unique strings) instead of the values: every parameter
 * of the compiled statement is then either a placeholder (bound from `params` at each run) or a
 * constant of the builder (kept). A placeholder the statement does not bind as a parameter of its
 * own (used in a condition, transformed, put into the SQL text) means that the statement's shape
 * depends on the value: that throws at the first compile. `undefined` throws at every run (Kysely
 * leaves such columns out: the shape would depend on it); `null` is a value like any other.
 *
 * Results are what the builder's own `execute()` gives: rows (select, or `returning` where the
 * dialect supports it, with the plugins' result transforms such as camelCase keys), otherwise
 * InsertResult / UpdateResult / DeleteResult.
 *
 * Cache: one compiled statement per dialect adapter instance and plugin list. Transactions and
 * `db.connection()` (the group commit's closures) share their root instance's adapter and plugins,
 * so they reuse it; `withPlugin` gets its own compile.
 */
import {
  createQueryId,
  DeleteResult,
  InsertResult,
  UpdateResult,
  type CompiledQuery,
  type DialectAdapter,
  type Kysely,
  type KyselyPlugin,
  type QueryResult,
  type RootOperationNode,
} from 'kysely';
import { Recent } from '../shared/recent.js';

const TOKEN = '\u0000tpl:';

/** The builder's parameters: placeholders typed as the values they stand for. */
export type Params<P extends object> = Readonly<P>;

/** What a template can be built from: any Kysely query builder that executes to rows or results. */
export interface TemplateQuery {
  compile(): CompiledQuery;
  execute(): Promise<readonly unknown[]>;
}

type Result<Q extends TemplateQuery> = Awaited<ReturnType<Q['execute']>>;

interface Compiled {
  readonly plugins: readonly KyselyPlugin[];
  readonly sql: string;
  readonly node: RootOperationNode;
  /** Per parameter: the placeholder's name, or the builder's constant. */
  readonly slots: ReadonlyArray<{ name: string } | { value: unknown }>;
  readonly returnsRows: boolean;
}

/** A placeholder's name, or null when `value` is not a placeholder. */
function placeholder(value: unknown): string | null {
  return typeof value === 'string' && value.startsWith(TOKEN) ? value.slice(TOKEN.length) : null;
}

function containsToken(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(TOKEN);
  if (Array.isArray(value)) return value.some(containsToken);
  return false;
}

/** A value Kysely would not bind as a parameter (an expression, a sub-query, a factory). */
function isExpression(value: unknown): boolean {
  return typeof value === 'function' || (typeof value === 'object' && value !== null && 'toOperationNode' in value);
}

export class QueryTemplate<DB, P extends object, Q extends TemplateQuery> {
  private readonly cache = new WeakMap<DialectAdapter, Compiled[]>();
  /** How many times the builder was built and compiled (tests). */
  compiles = 0;

  constructor(private readonly build: (db: Kysely<DB>, p: P) => Q) {}

  /** The compiled statement with `params` bound (what `execute` runs). */
  compile(db: Kysely<DB>, params: P): CompiledQuery {
    const compiled = this.compiled(db);
    return { query: compiled.node, queryId: createQueryId(), sql: compiled.sql, parameters: bind(compiled, params) };
  }

  async execute(db: Kysely<DB>, params: P): Promise<Result<Q>> {
    const compiled = this.compiled(db);
    const query: CompiledQuery = { query: compiled.node, queryId: createQueryId(), sql: compiled.sql, parameters: bind(compiled, params) };
    const result = await db.getExecutor().executeQuery(query);
    return toResult(compiled, result) as Result<Q>;
  }

  async executeTakeFirst(db: Kysely<DB>, params: P): Promise<Result<Q>[number] | undefined> {
    const [first] = await this.execute(db, params);
    return first;
  }

  private compiled(db: Kysely<DB>): Compiled {
    const executor = db.getExecutor();
    const { adapter, plugins } = executor;
    let list = this.cache.get(adapter);
    if (!list) this.cache.set(adapter, (list = []));
    for (const entry of list) if (samePlugins(entry.plugins, plugins)) return entry;
    const entry = this.compileNew(db, adapter, plugins);
    list.push(entry);
    return entry;
  }

  private compileNew(db: Kysely<DB>, adapter: DialectAdapter, plugins: readonly KyselyPlugin[]): Compiled {
    this.compiles++;
    const used = new Set<string>();
    const p = new Proxy(Object.create(null) as object, {
      get(_target, key) {
        if (typeof key !== 'string') return undefined;
        used.add(key);
        return TOKEN + key;
      },
    }) as P;
    const query = this.build(db, p).compile();
    if (query.sql.includes(TOKEN)) throw new Error(`query template: a placeholder is part of the SQL text: ${printable(query.sql)}`);
    const bound = new Set<string>();
    const slots = query.parameters.map((value) => {
      const name = placeholder(value);
      if (name !== null && used.has(name)) {
        bound.add(name);
        return { name };
      }
      if (containsToken(value)) throw new Error(`query template: a placeholder was transformed into the parameter ${printable(String(value))}`);
      return { value };
    });
    for (const name of used) {
      if (!bound.has(name))
        throw new Error(`query template: the placeholder "${name}" is not a parameter of the statement (its shape depends on the value?): ${query.sql}`);
    }
    const node = query.query as RootOperationNode & { returning?: unknown; output?: unknown };
    const returnsRows =
      node.kind === 'SelectQueryNode' ||
      node.kind === 'RawNode' ||
      (!!node.returning && adapter.supportsReturning) ||
      (!!node.output && !!adapter.supportsOutput);
    return { plugins: [...plugins], sql: query.sql, node: query.query, slots, returnsRows };
  }
}

function bind(compiled: Compiled, params: object): unknown[] {
  const values = params as Record<string, unknown>;
  const { slots } = compiled;
  const parameters = new Array<unknown>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    if ('value' in slot) {
      parameters[i] = slot.value;
      continue;
    }
    const value = values[slot.name];
    if (value === undefined) throw new Error(`query template: parameter "${slot.name}" is undefined (use null)`);
    if (isExpression(value)) throw new Error(`query template: parameter "${slot.name}" is an expression, not a value`);
    parameters[i] = value;
  }
  return parameters;
}

function toResult(compiled: Compiled, result: QueryResult<unknown>): readonly unknown[] {
  if (compiled.returnsRows) return result.rows;
  switch (compiled.node.kind) {
    case 'InsertQueryNode':
      return [new InsertResult(result.insertId, result.numAffectedRows ?? BigInt(0))];
    case 'UpdateQueryNode':
      return [new UpdateResult(result.numAffectedRows ?? BigInt(0), result.numChangedRows)];
    case 'DeleteQueryNode':
      return [new DeleteResult(result.numAffectedRows ?? BigInt(0))];
    default:
      return result.rows;
  }
}

function samePlugins(a: readonly KyselyPlugin[], b: readonly KyselyPlugin[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const printable = (text: string): string => text.replaceAll('\u0000', '\\0');

/** A statement of fixed shape, compiled once per dialect (see the file's comment). */
export function queryTemplate<DB, P extends object, Q extends TemplateQuery>(build: (db: Kysely<DB>, p: Params<P>) => Q): QueryTemplate<DB, P, Q> {
  return new QueryTemplate<DB, P, Q>(build);
}

/** Shapes per KeyedTemplates checked before a look-up by signature. */
const RECENT_SHAPES = 4;

/** Whether the defined keys of `values`, in order, are exactly `keys`. */
export function definedKeysAre(values: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in values) {
    if (values[key] === undefined) continue;
    if (keys[i] !== key) return false;
    i++;
  }
  return i === keys.length;
}

/**
 * Templates whose shape is chosen by the keys of `params` that are defined (an insert or an update
 * of the columns given, as Kysely leaves `undefined` ones out): one fixed-shape template per key set,
 * compiled once each. The builder gets an object of placeholders with exactly those keys, in the
 * order of `params` (the column order Kysely would write).
 */
export class KeyedTemplates<DB, P extends object, Q extends TemplateQuery> {
  private readonly templates = new Map<string, QueryTemplate<DB, P, Q>>();
  /**
   * The shapes met last, checked key by key before any signature is built: a statement is called
   * with one or a few shapes, and joining a wide row's keys into a signature to look it up cost
   * ~5 µs per call (a payment's record).
   */
  private readonly recent = new Recent<{ keys: readonly string[]; template: QueryTemplate<DB, P, Q> }>(RECENT_SHAPES);

  constructor(private readonly build: (db: Kysely<DB>, p: Params<P>) => Q) {}

  /** The fixed-shape template for the defined keys of `params`, and the params it binds. */
  template(params: P): { template: QueryTemplate<DB, P, Q>; params: P } {
    const recent = this.recent.find((shape) => definedKeysAre(params as Record<string, unknown>, shape.keys));
    return { template: recent?.template ?? this.lookUp(params), params };
  }

  private lookUp(params: P): QueryTemplate<DB, P, Q> {
    const keys: string[] = [];
    for (const [key, value] of Object.entries(params)) if (value !== undefined) keys.push(key);
    const signature = keys.join('\u0001');
    let template = this.templates.get(signature);
    if (!template) {
      if (this.templates.size >= 256) this.templates.clear();
      const build = this.build;
      template = new QueryTemplate<DB, P, Q>((db, p) => {
        const tokens: Record<string, unknown> = {};
        for (const key of keys) tokens[key] = (p as Record<string, unknown>)[key];
        return build(db, tokens as P);
      });
      this.templates.set(signature, template);
    }
    return this.recent.add({ keys, template }).template;
  }

  execute(db: Kysely<DB>, params: P): Promise<Result<Q>> {
    return this.template(params).template.execute(db, params);
  }

  executeTakeFirst(db: Kysely<DB>, params: P): Promise<Result<Q>[number] | undefined> {
    return this.template(params).template.executeTakeFirst(db, params);
  }
}

/** Fixed-shape templates chosen by the defined keys of `params` (see KeyedTemplates). */
export function keyedTemplates<DB, P extends object, Q extends TemplateQuery>(build: (db: Kysely<DB>, p: Params<P>) => Q): KeyedTemplates<DB, P, Q> {
  return new KeyedTemplates<DB, P, Q>(build);
}
