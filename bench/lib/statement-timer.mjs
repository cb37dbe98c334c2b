/**
 * Preloaded into the service process by `bench/mit-profile.ts … statements` (node --import): times
 * every better-sqlite3 statement run (run, all, get, iterate) in the process, by SQL text, so that
 * a payment's SQLite time is read per statement rather than inferred from a V8 profile, where it
 * is all one native `run`. Plain JavaScript: it loads before any TypeScript loader.
 *
 * service-main.ts answers 'statement-times' with globalThis.__statementTimes.take(): the times
 * since the last take, largest first.
 */
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const Database = require('better-sqlite3');
const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
probe.close();

// Keyed by the statement object (one Map lookup per run); summed by SQL text when taken.
let times = new Map();
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = Statement[method];
  Statement[method] = function timed(...args) {
    const started = process.hrtime.bigint();
    let result;
    try {
      result = original.apply(this, args);
      return result;
    } finally {
      const ns = Number(process.hrtime.bigint() - started);
      let t = times.get(this);
      if (!t) times.set(this, (t = { sql: this.source, runs: 0, ns: 0, rows: 0 }));
      t.runs++;
      t.ns += ns;
      if (Array.isArray(result)) t.rows += result.length;
    }
  };
}

globalThis.__statementTimes = {
  /** [{ sql, runs, ns, rows }] since the last take, by SQL text, the most time first. */
  take() {
    const bySql = new Map();
    for (const t of times.values()) {
      const s = bySql.get(t.sql) ?? { sql: t.sql, runs: 0, ns: 0, rows: 0 };
      s.runs += t.runs;
      s.ns += t.ns;
      s.rows += t.rows;
      bySql.set(t.sql, s);
    }
    times = new Map();
    return [...bySql.values()].sort((a, b) => b.ns - a.ns);
  },
};
