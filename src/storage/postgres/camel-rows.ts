/**
 * CamelCasePlugin for PostgreSQL, whose rows come from node-postgres with the columns' names: each
 * row is renamed by a function compiled once per set of columns, `(r) => ({ "pointOfSaleId":
 * m(r["point_of_sale_id"]), ... })`, instead of the plugin's per-row reduce over Object.keys (a
 * camelCase lookup and a keyed store per column), and the result is one literal, not the driver's
 * result spread with new rows — whose shapes vary by statement, which V8 reads as megamorphic
 * (docs/object-shapes.md; it was the service's most missed property store under PG MIT load).
 * Nested plain objects (none today: JSON is stored as text) are renamed as the plugin would.
 */
import { CamelCasePlugin, type PluginTransformResultArgs, type QueryResult, type UnknownRow } from 'kysely';
import { Recent } from '../../shared/recent.js';
import { definedKeysAre } from '../query-template.js';
import { literalKey } from '../sqlite/rows.js';

type RowMapper = (row: UnknownRow, nested: (value: unknown) => unknown) => UnknownRow;

/** Column sets kept at once; past it the cache starts again (statements are few and fixed). */
const MAX_MAPPERS = 1_000;
/** Column sets compared with a result's columns before a look-up by their joined names (as KeyedTemplates). */
const RECENT_MAPPERS = 8;

export class CompiledCamelCasePlugin extends CamelCasePlugin {
  private readonly mappers = new Map<string, RowMapper>();
  private readonly recent = new Recent<{ columns: readonly string[]; map: RowMapper }>(RECENT_MAPPERS);
  private readonly nested = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => (isPlainObject(item) ? this.mapRow(item as UnknownRow) : item));
    return isPlainObject(value) ? this.mapRow(value as UnknownRow) : value;
  };

  override async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const { result } = args;
    const rows = result.rows;
    if (!Array.isArray(rows) || rows.length === 0) return result;
    const map = this.mapperOf(rows[0]!);
    const mapped = new Array<UnknownRow>(rows.length);
    for (let i = 0; i < rows.length; i++) mapped[i] = map(rows[i]!, this.nested);
    return {
      rows: mapped,
      numAffectedRows: result.numAffectedRows,
      numChangedRows: result.numChangedRows,
      insertId: result.insertId,
    };
  }

  private mapperOf(row: UnknownRow): RowMapper {
    // node-postgres gives every column a value (null, never undefined): its defined keys are its columns.
    const recent = this.recent.find((known) => definedKeysAre(row, known.columns));
    if (recent) return recent.map;
    const columns = Object.keys(row);
    const signature = columns.join('\u0001');
    let map = this.mappers.get(signature);
    if (!map) {
      if (this.mappers.size >= MAX_MAPPERS) this.mappers.clear();
      const body = `return {${columns.map((c) => `${literalKey(this.camelCase(c))}: m(r[${JSON.stringify(c)}])`).join(', ')}};`;
      map = new Function('r', 'm', body) as RowMapper;
      this.mappers.set(signature, map);
    }
    return this.recent.add({ columns, map }).map;
  }
}

function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Object.prototype.toString.call(value) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || proto === Object.prototype;
}
