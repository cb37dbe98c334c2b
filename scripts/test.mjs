#!/usr/bin/env node
// Runs every test file under test/, each in a process of its own with node's test runner and the
// spec reporter; a file's output is printed whole when it ends, then a summary of the run.
// PostgreSQL suites run when TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
// is reachable; otherwise they say so and are skipped.
//
// The tests run as JavaScript compiled once per run (scripts/test-build.mjs): loading the service
// through tsx's module hooks in each of the ~170 test processes cost more than a minute of the
// suite. TEST_TSX=1 runs the TypeScript sources through tsx instead, as before.
//
// Scheduling (scripts/test-schedule.mjs): the timing-sensitive files start first, then the known
// slowest files, the rest in path order (node --test would take them in path order only).
// TEST_CONCURRENCY files run at once (default 2, the CI machines' cores: the suite keeps both
// busy, and 3 at once took as long, 786 s against 761 s); a timing-sensitive file — outage, crash,
// overload, the slow acquirer's p99 — runs beside at most one other file, never beside another
// timing-sensitive one, whose load (a crash test's MITs, an outage's retries) would fall into its
// measurements.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildTests } from './test-build.mjs';
import { SLOWEST, TIMING_SENSITIVE } from './test-schedule.mjs';

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' ? [] : walk(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filter = process.argv.slice(2);
const found = walk('test')
  .sort()
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)));
if (found.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`TEST_CONCURRENCY must be a whole number ≥ 1, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(2);
}
const timingSensitive = new Set(TIMING_SENSITIVE);
// The timing-sensitive files first (one at a time, see verdict), then the rest; longest first
// within each.
const group = (f) => (timingSensitive.has(f) ? 0 : 1);
const rank = (f) => group(f) * 2 * SLOWEST.length + (SLOWEST.includes(f) ? SLOWEST.indexOf(f) : SLOWEST.length);
const files = [...found].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));

const viaTsx = ['1', 'true', 'yes'].includes((process.env.TEST_TSX ?? '').toLowerCase());
const built = viaTsx ? null : buildTests();
const argsOf = (file) => (built ? [path.join(built, file.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', file]);
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };

/** The spec reporter's closing counts of one file ("ℹ pass 12"), summed over the run. */
const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
const totals = Object.fromEntries(COUNTS.map((k) => [k, 0]));
const failed = [];
const took = [];
const children = new Set();

function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--test-reporter=spec', '--test-reporter-destination=stdout', ...argsOf(file)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.on('close', (code, signal) => {
      children.delete(child);
      const seconds = (Date.now() - started) / 1000;
      took.push({ file, seconds });
      const lines = Buffer.concat(chunks).toString('utf8').split('\n');
      const kept = [];
      for (const line of lines) {
        const m = /^ℹ (\w+) (\d+(?:\.\d+)?)$/.exec(line);
        if (m && m[1] in totals) totals[m[1]] += Number(m[2]);
        else if (!(m && m[1] === 'duration_ms')) kept.push(line);
      }
      while (kept.length && kept[kept.length - 1] === '') kept.pop();
      const ok = code === 0;
      if (!ok) failed.push({ file, why: signal ? `signal ${signal}` : `exit code ${code}`, detail: failureDetail(kept) });
      process.stdout.write(`${kept.join('\n')}\n${ok ? '✔' : '✖'} ${file} (${seconds.toFixed(1)} s)\n\n`);
      resolve();
    });
  });
}

const DETAIL_LINES = 60;

/**
 * What a failed file said about its failures, for the run's closing lines (a CI log may keep only
 * its tail): the reporter's "failing tests" section without stack frames, else the file's last lines.
 */
function failureDetail(lines) {
  const from = lines.findIndex((line) => line.startsWith('✖ failing tests:'));
  const section = from >= 0 ? lines.slice(from + 1) : lines.slice(-30);
  const kept = section.filter((line) => !/^\s+at /.test(line) && line.trim() !== '');
  return kept.length > DETAIL_LINES ? [...kept.slice(0, DETAIL_LINES), `  … ${kept.length - DETAIL_LINES} more lines above, in the file's output`] : kept;
}

for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });

// Which file starts next: the first in order that may start now. A timing-sensitive file runs
// beside at most one other file, never beside another timing-sensitive one. One that waits for
// the others to thin out holds back the files behind it; one that waits for another
// timing-sensitive file to end lets them pass (the second core would idle otherwise).
const started = Date.now();
const running = new Set();
const pending = [...files];
const timingRunning = () => [...running].some((f) => timingSensitive.has(f));
/** 'start', 'skip' (let the files behind pass) or 'wait' (hold them back). */
function verdict(file) {
  if (timingSensitive.has(file)) {
    if (timingRunning()) return 'skip';
    return running.size <= 1 ? 'start' : 'wait';
  }
  return running.size < (timingRunning() ? Math.min(2, concurrency) : concurrency) ? 'start' : 'wait';
}
await new Promise((done) => {
  const fill = () => {
    for (let i = 0; i < pending.length;) {
      const v = verdict(pending[i]);
      if (v === 'wait') break;
      if (v === 'skip') {
        i++;
        continue;
      }
      const [file] = pending.splice(i, 1);
      running.add(file);
      void runFile(file).then(() => {
        running.delete(file);
        if (pending.length === 0 && running.size === 0) done();
        else fill();
      });
    }
  };
  fill();
});

const wall = (Date.now() - started) / 1000;
console.log('slowest files:');
for (const { file, seconds } of took.sort((a, b) => b.seconds - a.seconds).slice(0, 15)) console.log(`  ${seconds.toFixed(1).padStart(6)} s  ${file}`);
for (const k of COUNTS) console.log(`ℹ ${k} ${totals[k]}`);
console.log(`ℹ files ${files.length}, ${concurrency} at once`);
console.log(`ℹ duration_ms ${Math.round(wall * 1000)}`);
if (failed.length) {
  console.log(`\n✖ failed files:\n${failed.map((f) => `  ${f.file} (${f.why})`).join('\n')}`);
  for (const { file, detail } of failed) console.log(`\n✖ ${file}:\n${detail.map((line) => `  ${line}`).join('\n')}`);
  process.exit(1);
}
