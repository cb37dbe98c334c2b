/**
 * Server-side prepared statements on PostgreSQL. Kysely sends every query as unnamed text, which
 * the server parses, analyses and plans again at each run; under payment load that is a large
 * share of the backends' CPU (issue 10). The service's statements repeat (query-template.ts
 * compiles the hot ones once), so each pooled client prepares a statement under a name the first
 * time it sends its text with parameters, and afterwards only binds and executes it (node-postgres
 * keeps the names per connection; PostgreSQL caches the plan).
 *
 * Names are given per process, in order of first use, up to MAX_NAMED texts; past that, texts
 * go unnamed as before (a long-running process that builds many distinct statements does not
 * grow without bound). Statements without parameters (BEGIN, COMMIT, DDL) are left alone.
 *
 * A named statement goes as a `pg.Query` made from the text and values, its name set after: a
 * config object would be copied property descriptor by descriptor (node-postgres'
 * cloneQueryConfig, 2 % of the service's CPU under POST /mit). The query answers through a promise,
 * as `client.query(text, values)` does.
 *
 * A named statement's rows are described the same way at every run, so what node-postgres derives
 * from the description (a type parser per field and the empty row copied for each row, its
 * Result.addFields: 6 % of the service's CPU under POST /mit, whose charge read has 40-odd columns)
 * is kept per name and reused while the fields' names, types and formats are the same.
 */
import pg from 'pg';

const MAX_NAMED = 2_000;

interface QueryingClient {
  query(...args: unknown[]): unknown;
  /** node-postgres' connection (its Parse bookkeeping is read by parsePending). */
  connection?: object;
}

/** What node-postgres' Connection records of named statements: those it sent a Parse for, and those PostgreSQL confirmed. */
interface ParseBookkeeping {
  submittedNamedStatements?: Record<string, string>;
  parsedStatements?: Record<string, string>;
}

/**
 * Whether the connection has sent a Parse for `name` that PostgreSQL has not confirmed yet. A
 * pipelined query under that name would go without a Parse of its own and rely on that one — and
 * fail with "prepared statement does not exist" when it is refused (in a transaction that a
 * failed statement before it aborted), though the query itself is fine.
 */
function parsePending(client: QueryingClient, name: string): boolean {
  const connection = client.connection as ParseBookkeeping | undefined;
  return connection?.submittedNamedStatements?.[name] !== undefined && connection.parsedStatements?.[name] === undefined;
}

/** The part of node-postgres' Result (pg/lib/result.js) that addFields sets. */
interface ResultFields {
  fields: pg.FieldDef[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
  addFields(fields: pg.FieldDef[]): void;
}

type Described = Pick<ResultFields, 'fields' | '_parsers' | '_prebuiltEmptyResultObject'>;

export class PreparedNames {
  private readonly names = new Map<string, string>();
  /** What addFields made of each name's last row description. */
  private readonly described = new Map<string, Described>();

  /** The statement name for `text`, or null when it goes unnamed. */
  nameOf(text: string): string | null {
    let name = this.names.get(text);
    if (name === undefined) {
      if (this.names.size >= MAX_NAMED) return null;
      name = `s${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }

  /** Makes `client` send parameterized text queries as named (prepared) statements. */
  prepareOn(client: QueryingClient): void {
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      const [text, values, ...rest] = args;
      if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && typeof rest[0] !== 'function') {
        const name = this.nameOf(text);
        // Unnamed while its Parse is pending: this query then stands on its own.
        if (name !== null && !parsePending(client, name)) return this.send(query, text, values, name);
      }
      return query(...args);
    };
  }

  /** `text` with `values` as the named statement `name`, through `query` (the client's own). */
  private send(query: (...args: unknown[]) => unknown, text: string, values: unknown[], name: string): Promise<pg.QueryResult> {
    // node-postgres' Query reads these fields, though its types do not declare them.
    const named = new pg.Query(text, values) as pg.Query & {
      name: string;
      callback: (err: Error | null, result: pg.QueryResult) => void;
      _result: ResultFields;
    };
    named.name = name;
    const result = named._result;
    const addFields = result.addFields;
    result.addFields = (fields) => {
      const known = this.described.get(name);
      if (known && sameFields(known.fields, fields)) {
        result.fields = fields;
        result._parsers = known._parsers;
        result._prebuiltEmptyResultObject = known._prebuiltEmptyResultObject;
        return;
      }
      addFields.call(result, fields);
      this.described.set(name, { fields, _parsers: result._parsers, _prebuiltEmptyResultObject: result._prebuiltEmptyResultObject });
    };
    return new Promise((resolve, reject) => {
      named.callback = (err, result) => (err ? reject(err) : resolve(result));
      query(named);
    });
  }
}

/** The same columns, in the same order, of the same types and formats. */
function sameFields(a: pg.FieldDef[], b: pg.FieldDef[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name || x.dataTypeID !== y.dataTypeID || x.format !== y.format) return false;
  }
  return true;
}
