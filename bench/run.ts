/**
 * `npm run bench`: runs every bench/*.bench.ts (or the one an argument names, `mit`; else those whose
 * name contains an argument) in one process, each figure printed beside the baseline measured in the
 * same run, then a summary.
 *
 *   BENCH_QUICK=1        smallest data sizes, short measurements
 *   BENCH_CONNECTIONS=n  concurrent connections of the load generator (default 10)
 *   BENCH_SECONDS=n      seconds measured per figure (default 10, quick 3), after a warm-up
 *   BENCH_MAX_LAG_MS=n   the lag bound (PAYMENTS_MAX_LAG_MS) of the measured service; 0 turns it off (default: the service's default)
 *   BENCH_STORES=a,b     the stores measured: sqlite, postgres (default both)
 *   BENCH_MIT_PARTS=ac   the mit suite's sections (a always runs: the others' baseline; default abcde)
 *   BENCH_DATABASE_URL   PostgreSQL to use (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Report } from './lib/report.js';
import { createContext, type BenchSuite } from './lib/suite.js';

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`bench: ${name} must be a positive integer, got "${raw}"\n`);
    process.exit(2);
  }
  return value;
}

const quick = ['1', 'true', 'yes'].includes((process.env.BENCH_QUICK ?? '').toLowerCase());
const load = {
  connections: positive('BENCH_CONNECTIONS', 10),
  durationSeconds: positive('BENCH_SECONDS', quick ? 3 : 10),
  warmupSeconds: quick ? 1 : 2,
  rounds: quick ? 3 : 5,
};

const dir = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const suites = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
// A filter that names a suite exactly (`mit`, `mit.bench.ts`) selects that one alone — `mit` is also
// in rate-limit.bench.ts; any other filter selects the suites whose file name contains it.
const names = (f: string) => [f, f.slice(0, -'.bench.ts'.length)];
const selects = (f: string, x: string) => (suites.some((g) => names(g).includes(x)) ? names(f).includes(x) : f.includes(x));
const files = suites.filter((f) => filters.length === 0 || filters.some((x) => selects(f, x)));
if (files.length === 0) {
  process.stderr.write(`bench: no bench/*.bench.ts matches ${filters.join(' ')}\n`);
  process.exit(2);
}

const report = new Report();
const ctx = createContext(quick, load, report);
process.stdout.write(
  `payments bench — node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), ` +
    `${load.connections} connections, ${load.warmupSeconds} s warm-up + ${load.durationSeconds} s per figure in ${load.rounds} alternating rounds${quick ? ', QUICK' : ''}\n` +
    '   ratios are figure / baseline of the same section: req/s below 1× and latency above 1× are slower\n',
);

let failed = false;
for (const file of files) {
  const suite = (await import(pathToFileURL(path.join(dir, file)).href)).default as BenchSuite;
  report.section(`${suite.name}: ${suite.description}`);
  try {
    await suite.run(ctx);
  } catch (err) {
    failed = true;
    report.broken.push(`${suite.name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.stdout.write(`   FAILED ${suite.name}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
report.summary();
// A bench that could not measure fails the command; a missed target is reported, not fatal.
process.exit(failed || report.broken.length ? 1 : 0);
