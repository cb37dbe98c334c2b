#!/usr/bin/env node
// `npm run build:server` (run by `npm ci` through prepare → build): compiles src/ to dist/ with
// tsc (tsconfig.build.json), so that `npm start` and the `payments` command start without
// compiling TypeScript at run time. dist/ is made anew: the compiled service, the migrations
// beside it (migrate.ts reads them from its own directory), and dist/BUILT last, whose time
// bin/payments.mjs compares with src/ to tell a build that src/ has moved past.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) {
  console.error('build:server: tsc failed (see above); dist/ is incomplete');
  process.exit(result.status ?? 1);
}
fs.cpSync(path.join(root, 'src/storage/migrations'), path.join(dist, 'storage/migrations'), { recursive: true });
fs.writeFileSync(path.join(dist, 'BUILT'), `${new Date().toISOString()}\n`);
