#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (explicit file list, spec reporter).
// PostgreSQL suites run when TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
// is reachable; otherwise they say so and are skipped.
//
// The tests run as JavaScript compiled once per run (scripts/test-build.mjs): loading the service
// through tsx's module hooks in each of the ~135 test processes cost more than a minute of the
// suite. TEST_TSX=1 runs the TypeScript sources through tsx instead, as before.
//
// TEST_CONCURRENCY: test files run at once (default 2, the cores of the machines CI runs on; 3
// took the suite from 359 to 275 s here, but makes the timing-sensitive suites — outage, crash,
// overload — share the CPU with two others).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildTests } from './test-build.mjs';

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' ? [] : walk(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filter = process.argv.slice(2);
const files = walk('test')
  .sort()
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`TEST_CONCURRENCY must be a whole number ≥ 1, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(2);
}
const viaTsx = ['1', 'true', 'yes'].includes((process.env.TEST_TSX ?? '').toLowerCase());
let args;
if (viaTsx) args = ['--import', 'tsx', ...files];
else {
  const built = buildTests();
  args = files.map((f) => path.join(built, f.replace(/\.ts$/, '.js')));
}
const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...args], {
  stdio: 'inherit',
  env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
process.exit(result.status ?? 1);
