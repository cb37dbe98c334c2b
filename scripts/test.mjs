#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (explicit file list, spec reporter).
// PostgreSQL suites run when TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
// is reachable; otherwise they say so and are skipped.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
process.exit(result.status ?? 1);
