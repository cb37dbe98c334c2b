/**
 * The compiled start (issue 13, point 2): `npm ci` compiles src/ into dist/ (prepare → build →
 * build:server), and `npm start` and the `payments` command run dist/ — no TypeScript compiled at
 * run time — unless src/ has changed since that build, when bin/payments.mjs runs src/ through tsx.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILT = path.join(ROOT, 'dist', 'BUILT');

function run(args: string[], env: Record<string, string> = {}, cwd = os.tmpdir()) {
  const started = performance.now();
  const res = spawnSync(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 });
  return { ...res, seconds: (performance.now() - started) / 1000 };
}

describe('bin/payments.mjs chooses the build or the source', () => {
  /** A package with the real launcher, a stand-in build and source, and the real node_modules (tsx). */
  function fakePackage(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-launcher-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.copyFileSync(path.join(ROOT, 'bin/payments.mjs'), path.join(dir, 'bin/payments.mjs'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    fs.mkdirSync(path.join(dir, 'dist/cli'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dist/cli/main.js'), "process.stdout.write('compiled ' + process.argv.slice(2).join(' '));\n");
    fs.mkdirSync(path.join(dir, 'src/cli'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src/cli/main.ts'), "const from: string = 'source ';\nprocess.stdout.write(from + process.argv.slice(2).join(' '));\n");
    return dir;
  }
  const at = (file: string, seconds: number) => fs.utimesSync(file, seconds, seconds);

  test('a build newer than every file of src/ runs in-process; src/ changed since, or no build: src/ through tsx, said once', () => {
    const dir = fakePackage();
    try {
      const now = Date.now() / 1000;
      at(path.join(dir, 'src/cli/main.ts'), now - 60);
      fs.writeFileSync(path.join(dir, 'dist/BUILT'), 'now\n');
      at(path.join(dir, 'dist/BUILT'), now - 30);
      const fresh = run([path.join(dir, 'bin/payments.mjs'), 'jobs', 'dead']);
      assert.equal(fresh.status, 0, fresh.stderr);
      assert.equal(fresh.stdout, 'compiled jobs dead');
      assert.equal(fresh.stderr, '');

      at(path.join(dir, 'src/cli/main.ts'), now);
      const stale = run([path.join(dir, 'bin/payments.mjs'), 'config']);
      assert.equal(stale.status, 0, stale.stderr);
      assert.equal(stale.stdout, 'source config');
      assert.match(stale.stderr, /src\/ changed since the last build; running it through tsx/);

      fs.rmSync(path.join(dir, 'dist/BUILT'));
      const none = run([path.join(dir, 'bin/payments.mjs'), '--help']);
      assert.equal(none.stdout, 'source --help');
      assert.match(none.stderr, /no build in dist\//);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the build in dist/ (made by npm ci)', { skip: fs.existsSync(BUILT) ? false : 'no dist/BUILT: run `npm run build:server` (npm ci does)' }, () => {
  test('payments --help answers from dist/ without tsx', () => {
    const res = run([path.join(ROOT, 'dist/cli/main.js'), '--help']);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /^Usage: payments <command>/);
    const viaBin = run([path.join(ROOT, 'bin/payments.mjs'), '--help']);
    assert.equal(viaBin.status, 0, viaBin.stderr);
    assert.match(viaBin.stdout, /^Usage: payments <command>/);
    const fresh = !spawnSync('find', [path.join(ROOT, 'src'), '-newer', BUILT, '-print', '-quit'], { encoding: 'utf8' }).stdout.trim();
    if (fresh) assert.equal(viaBin.stderr, '', 'the build is up to date: no tsx');
    process.stdout.write(`# payments --help: ${viaBin.seconds.toFixed(2)} s through bin/payments.mjs (${fresh ? 'dist/' : 'src/ via tsx: dist/ is older'})\n`);
  });

  test('the compiled migrate finds the migrations beside it and applies every one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-dist-migrate-'));
    try {
      const expected = fs.readdirSync(path.join(ROOT, 'dist/storage/migrations/sqlite')).filter((f) => f.endsWith('.sql')).length;
      assert.ok(expected > 0, 'the build copied the migrations');
      const res = run([path.join(ROOT, 'dist/cli/main.js'), 'migrate'], { DATABASE_URL: path.join(dir, 'p.db') });
      assert.equal(res.status, 0, res.stderr);
      assert.match(res.stdout, new RegExp(`^applied ${expected} migration\\(s\\)`));
      const again = run([path.join(ROOT, 'dist/cli/main.js'), 'migrate'], { DATABASE_URL: path.join(dir, 'p.db') });
      assert.equal(again.stdout.trim(), 'the database is up to date');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
