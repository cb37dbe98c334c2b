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
 */
import pg from 'pg';

const MAX_NAMED = 2_000;

interface QueryingClient {
  query(...args: unknown[]): unknown;
}

export class PreparedNames {
  private readonly names = new Map<string, string>();

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
        if (name !== null) return send(query, text, values, name);
      }
      return query(...args);
    };
  }
}

/** `text` with `values` as the named statement `name`, through `query` (the client's own). */
function send(query: (...args: unknown[]) => unknown, text: string, values: unknown[], name: string): Promise<pg.QueryResult> {
  // Both fields are read by node-postgres' Query, though its types do not declare them.
  const named = new pg.Query(text, values) as pg.Query & { name: string; callback: (err: Error | null, result: pg.QueryResult) => void };
  named.name = name;
  return new Promise((resolve, reject) => {
    named.callback = (err, result) => (err ? reject(err) : resolve(result));
    query(named);
  });
}
