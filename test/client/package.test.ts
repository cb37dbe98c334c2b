/**
 * The client as people install it: `npm pack` in clients/typescript (prepack builds dist/ with the
 * repository's TypeScript), `npm install <tarball>` in a fresh folder outside the repository, then
 *
 * - package/flow.mjs, run there with plain `node` (no tsx, no NODE_OPTIONS), drives a running service
 *   through one MOTO: authorize → capture (own Idempotency-Key, replayed) → refund → read back, an
 *   error as a value, the list iterator, and the MOTO's signed callback checked with verifyDelivery;
 * - package/consumer.ts is type-checked there by the repository's `tsc` against the installed
 *   package's `.d.ts` (its `@ts-expect-error` lines must all be needed).
 *
 * The install needs the registry only for openapi-fetch and its one dependency; `--prefer-offline`
 * takes them from npm's cache when `npm ci` has put them there (CI), and from the registry otherwise.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';

// The repository itself, also when this file runs from the compiled copy under node_modules/.cache
// (where package.json is a link to the original).
const ROOT = path.dirname(fs.realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
const CLIENT = path.join(ROOT, 'clients', 'typescript');
const FIXTURES = path.join(ROOT, 'test', 'client', 'package');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The environment of every child: no loader hooks (tsx) inherited from this process. */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS'));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs a command without blocking this process, which serves the flow's requests meanwhile. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 }));
  });
}

/** What each step took, printed at the end: the test's time depends on the host's load. */
const took: string[] = [];

function must(ran: Ran, what: string): Ran {
  took.push(`${what} ${ran.seconds.toFixed(1)} s`);
  assert.equal(ran.code, 0, `${what} exited ${ran.code}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`);
  return ran;
}

let tmp = '';
let app = '';
let t: TestRuntime;
let m: TestMerchant;
let baseUrl = '';

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-client-package-'));
  app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  t = await startTestRuntime('sqlite');
  await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.runtime.app.server.address() as AddressInfo).port}`;
  m = await t.createMerchant({ physical: false });
});

after(async () => {
  await t?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('the packed client installs outside the repository and works from plain node, typed by its .d.ts', { timeout: 120_000 }, async (ctx) => {
  // npm pack: prepack builds dist/; the tarball holds the build, the spec and the README, no sources.
  const packed = must(await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: CLIENT }), 'npm pack');
  // npm 10 writes the prepack script's output to stdout ahead of the JSON.
  const [pack] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = pack!.files.map((f) => f.path).sort();
  for (const expected of ['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/generated/openapi.d.ts', 'openapi.json', 'package.json']) {
    assert.ok(files.includes(expected), `${expected} missing from the tarball: ${files.join(', ')}`);
  }
  assert.deepEqual(
    files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|openapi\.json|README\.md|package\.json)$/.test(f)),
    [],
    'the tarball holds only the build, openapi.json, README.md and package.json',
  );
  const tarball = path.join(tmp, pack!.filename);
  ctx.diagnostic(`packed ${path.basename(tarball)}: ${files.length} files, ${fs.statSync(tarball).size} bytes`);

  // npm install <tarball> in a folder of its own, as a user would.
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'client-consumer', private: true, type: 'module' }));
  must(
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', tarball], { cwd: app }),
    'npm install <tarball>',
  );
  const installed = path.join(app, 'node_modules', '@payments-service', 'client');
  assert.ok(fs.existsSync(path.join(installed, 'dist', 'index.js')), 'installed package has dist/index.js');
  assert.ok(!fs.existsSync(path.join(installed, 'src')), 'installed package ships no TypeScript sources');

  // The flow, from plain node.
  fs.copyFileSync(path.join(FIXTURES, 'flow.mjs'), path.join(app, 'flow.mjs'));
  const flowed = must(
    await run(process.execPath, ['flow.mjs'], {
      cwd: app,
      env: { ...ENV, PAYMENTS_URL: baseUrl, PAYMENTS_API_KEY: m.token, PAYMENTS_POS_ID: m.onlinePointOfSaleId },
    }),
    'node flow.mjs',
  );
  const seen = JSON.parse(flowed.stdout.trim().split('\n').pop()!);
  assert.equal(fs.realpathSync(fileURLToPath(seen.resolved)), fs.realpathSync(path.join(installed, 'dist', 'index.js')));
  assert.equal(typeof seen.specTitle, 'string');
  assert.equal(seen.motoState, 'SUCCESS');
  assert.equal(seen.replayed, 'true');
  assert.equal(seen.replayOperationId, seen.captureOperationId);
  assert.equal(seen.state, 'SUCCESS');
  assert.equal(seen.aggregates.authorized, 2500);
  assert.equal(seen.aggregates.captured, 2500);
  assert.equal(seen.aggregates.refunded, 1000);
  assert.deepEqual(seen.missing, { status: 404, errorCode: 'NOT_FOUND' });
  assert.deepEqual(seen.listed, [seen.transactionId]);
  assert.deepEqual(seen.thrown, { status: 422, errorCode: 'VALIDATION_ERROR' });
  assert.deepEqual(seen.delivery, { verified: true, aboutTheMoto: true, tampered: 'DeliveryVerificationError' }, 'the signed callback verifies');

  // The types, from the installed .d.ts: a consumer's strict tsconfig and the repository's tsc,
  // nothing of the repository's sources. The DOM's lib and no @types/node: the package's types
  // need only the Fetch types (Request, Response, Headers), which @types/node declares too
  // (checking @types/node as well doubled this step's time).
  fs.copyFileSync(path.join(FIXTURES, 'consumer.ts'), path.join(app, 'consumer.ts'));
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM'],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
      },
      files: ['consumer.ts'],
    }),
  );
  const checked = must(await run(process.execPath, [TSC, '-p', 'tsconfig.json', '--listFiles'], { cwd: app }), 'tsc against the installed .d.ts');
  const client = checked.stdout.split('\n').filter((f) => f.includes('@payments-service/client'));
  assert.ok(
    client.length > 0 && client.every((f) => f.endsWith('.d.ts') && f.startsWith(fs.realpathSync(app))),
    `the types come from the installed .d.ts:\n${client.join('\n')}`,
  );
  ctx.diagnostic(took.join(', '));
});
