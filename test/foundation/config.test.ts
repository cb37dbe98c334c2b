/**
 * Configuration (INTERFACE §10): defaults, every variable validated, a bad value → ConfigError
 * naming it, and the real entry point printing exactly one clear line for it (no stack trace).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError, DEFAULT_DB_POOL_SIZE, DEFAULT_MAX_BACKLOG, DEFAULT_MAX_LAG_MS, loadConfig } from '../../src/config.js';
import { SERVICE_MAIN } from '../e2e/service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function expectConfigError(env: Record<string, string>, variable: string): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError for ${JSON.stringify(env)}, got ${String(err)}`);
    assert.equal(err.variable, variable);
    assert.ok(err.message.startsWith(`${variable}: `), err.message);
    return err;
  }
  assert.fail(`${JSON.stringify(env)} should be refused`);
}

describe('loadConfig', () => {
  test('defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.deepEqual(config.database, { kind: 'sqlite', path: path.resolve('data/payments.db') });
    assert.equal(config.dataDir, path.resolve('data'));
    assert.equal(config.operatorKey, null);
    assert.equal(config.sandbox, true);
    assert.equal(config.sandboxLatencyMs, 50);
    assert.equal(config.rateLimits, 'default');
    assert.equal(config.allowPrivateUrls, false);
    assert.equal(config.vaultKey, null);
    assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(config.maxBacklog, 50_000);
    assert.equal(config.maxBacklog, DEFAULT_MAX_BACKLOG);
  });

  test('PAYMENTS_DB_POOL_SIZE: PostgreSQL connections per process, 1 to 1000, default 8', () => {
    assert.equal(loadConfig({}).dbPoolSize, DEFAULT_DB_POOL_SIZE);
    assert.equal(DEFAULT_DB_POOL_SIZE, 8);
    assert.equal(loadConfig({ PAYMENTS_DB_POOL_SIZE: '3' }).dbPoolSize, 3);
    assert.match(expectConfigError({ PAYMENTS_DB_POOL_SIZE: '0' }, 'PAYMENTS_DB_POOL_SIZE').message, /between 1 and 1000/);
    assert.match(expectConfigError({ PAYMENTS_DB_POOL_SIZE: 'many' }, 'PAYMENTS_DB_POOL_SIZE').message, /PAYMENTS_DB_POOL_SIZE/);
  });

  test('PAYMENTS_MAX_BACKLOG: an integer from 0 (off) to 1000000', () => {
    assert.equal(loadConfig({ PAYMENTS_MAX_BACKLOG: '0' }).maxBacklog, 0);
    assert.equal(loadConfig({}).maxLagMs, DEFAULT_MAX_LAG_MS);
    assert.equal(DEFAULT_MAX_LAG_MS, 500);
    assert.equal(loadConfig({ PAYMENTS_MAX_LAG_MS: '0' }).maxLagMs, 0);
    assert.equal(loadConfig({ PAYMENTS_MAX_LAG_MS: '500' }).maxLagMs, 500);
    assert.throws(() => loadConfig({ PAYMENTS_MAX_LAG_MS: '-1' }));
    assert.throws(() => loadConfig({ PAYMENTS_MAX_LAG_MS: '1.5' }));
    assert.equal(loadConfig({ PAYMENTS_MAX_BACKLOG: '1' }).maxBacklog, 1);
    assert.equal(loadConfig({ PAYMENTS_MAX_BACKLOG: '200000' }).maxBacklog, 200_000);
    assert.equal(loadConfig({ PAYMENTS_MAX_BACKLOG: '1000000' }).maxBacklog, 1_000_000);
    assert.equal(loadConfig({ PAYMENTS_MAX_BACKLOG: '' }).maxBacklog, DEFAULT_MAX_BACKLOG, 'empty: the default');
    assert.match(expectConfigError({ PAYMENTS_MAX_BACKLOG: '1000001' }, 'PAYMENTS_MAX_BACKLOG').message, /between 0 and 1000000/);
  });

  test('PAYMENTS_MIT_CAP_PER_MINUTE and PAYMENTS_MIT_BATCH_CAP_PER_MINUTE: 300 and 30000 by default, 0 (off) to 1000000000 (INTERFACE §11.8)', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.mitCapPerMinute, 300);
    assert.equal(defaults.mitBatchCapPerMinute, 30_000);
    const set = loadConfig({ PAYMENTS_MIT_CAP_PER_MINUTE: '5', PAYMENTS_MIT_BATCH_CAP_PER_MINUTE: '0' });
    assert.equal(set.mitCapPerMinute, 5);
    assert.equal(set.mitBatchCapPerMinute, 0);
    assert.equal(loadConfig({ PAYMENTS_MIT_CAP_PER_MINUTE: '1000000000' }).mitCapPerMinute, 1_000_000_000);
    expectConfigError({ PAYMENTS_MIT_CAP_PER_MINUTE: '-1' }, 'PAYMENTS_MIT_CAP_PER_MINUTE');
    expectConfigError({ PAYMENTS_MIT_BATCH_CAP_PER_MINUTE: '1000000001' }, 'PAYMENTS_MIT_BATCH_CAP_PER_MINUTE');
    expectConfigError({ PAYMENTS_MIT_BATCH_CAP_PER_MINUTE: '1e3' }, 'PAYMENTS_MIT_BATCH_CAP_PER_MINUTE');
  });

  test('valid values of every variable', () => {
    const key = 'ab'.repeat(32);
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u:p@db.internal:5432/payments',
      PAYMENTS_OPERATOR_KEY: 'op_0123456789abcdef',
      PAYMENTS_SANDBOX: '0',
      PAYMENTS_SANDBOX_LATENCY_MS: '0',
      PAYMENTS_RATE_LIMITS: 'off',
      PAYMENTS_ALLOW_PRIVATE_URLS: 'true',
      PAYMENTS_VAULT_KEY: key,
      PAYMENTS_PUBLIC_URL: 'https://pay.example.com/',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.host, '0.0.0.0');
    assert.deepEqual(config.database, { kind: 'postgres', url: 'postgres://u:p@db.internal:5432/payments' });
    assert.equal(config.operatorKey, 'op_0123456789abcdef');
    assert.equal(config.sandbox, false);
    assert.equal(config.sandboxLatencyMs, 0);
    assert.equal(config.rateLimits, 'off');
    assert.equal(config.allowPrivateUrls, true);
    assert.deepEqual(config.vaultKey, Buffer.from(key, 'hex'));
    assert.equal(config.publicUrl, 'https://pay.example.com', 'trailing slash dropped');
    assert.equal(loadConfig({ PAYMENTS_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') }).vaultKey?.length, 32, 'base64 key');
    assert.equal(loadConfig({ HOST: '::1', PORT: '81' }).publicUrl, 'http://[::1]:81');
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/payments/p.db' }).database, { kind: 'sqlite', path: '/var/lib/payments/p.db' });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/p.db' }).database, { kind: 'sqlite', path: '/var/lib/p.db' });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'postgresql://localhost/x' }).database.kind, 'postgres');
    assert.equal(loadConfig({ DATABASE_URL: './x/y.db' }).dataDir, path.resolve('x'));
  });

  const bad: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['HOST', 'http://localhost'],
    ['HOST', 'localhost:8080'],
    ['HOST', 'two words'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', 'postgres://exa mple/x'],
    ['PAYMENTS_OPERATOR_KEY', 'short'],
    ['PAYMENTS_OPERATOR_KEY', 'has a space in it, sadly'],
    ['PAYMENTS_SANDBOX', 'maybe'],
    ['PAYMENTS_SANDBOX_LATENCY_MS', 'fast'],
    ['PAYMENTS_SANDBOX_LATENCY_MS', '-5'],
    ['PAYMENTS_RATE_LIMITS', 'strict'],
    ['PAYMENTS_ALLOW_PRIVATE_URLS', '2'],
    ['PAYMENTS_VAULT_KEY', 'too-short'],
    ['PAYMENTS_VAULT_KEY', 'ab'.repeat(31)],
    ['PAYMENTS_PUBLIC_URL', 'not a url'],
    ['PAYMENTS_PUBLIC_URL', 'ftp://example.com'],
    ['LOG_LEVEL', 'loud'],
    ['PAYMENTS_WORKERS', 'sometimes'],
    ['PAYMENTS_SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['PAYMENTS_MAX_BACKLOG', 'lots'],
    ['PAYMENTS_MAX_BACKLOG', '-1'],
    ['PAYMENTS_MAX_BACKLOG', '2.5'],
    ['PAYMENTS_MAX_BACKLOG', '5e4'],
    ['PAYMENTS_MAX_BACKLOG', '1000001'],
  ];
  for (const [variable, value] of bad) {
    test(`${variable}=${JSON.stringify(value)} → ConfigError naming ${variable}`, () => {
      const err = expectConfigError({ [variable]: value }, variable);
      assert.ok(!err.message.includes('\n'), 'one line');
    });
  }

  test('an empty value means the default', () => {
    assert.equal(loadConfig({ PORT: '', PAYMENTS_SANDBOX: '', PAYMENTS_RATE_LIMITS: '' }).port, 8080);
  });
});

function run(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, SERVICE_MAIN, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('Clearhaus settings (INTERFACE §12.2)', () => {
  const keyId = '4390aec7-f76a-4c2f-8597-c87c2d06cb4f';
  test('none without a signing key; the test host in a sandbox, the live host otherwise; 40 s and 32 by default', () => {
    assert.equal(loadConfig({}).clearhaus, null);
    const sandbox = loadConfig({ CLEARHAUS_SIGNING_KEY_ID: keyId, CLEARHAUS_SIGNING_KEY_FILE: 'k.pem' }).clearhaus!;
    assert.deepEqual(sandbox, {
      url: 'https://gateway.test.clearhaus.com',
      signingKeyId: keyId,
      signingKeyFile: path.resolve('k.pem'),
      timeoutMs: 40_000,
      maxInFlight: 32,
    });
    assert.equal(
      loadConfig({ PAYMENTS_SANDBOX: '0', CLEARHAUS_SIGNING_KEY_ID: keyId, CLEARHAUS_SIGNING_KEY_FILE: 'k.pem' }).clearhaus!.url,
      'https://gateway.clearhaus.com',
    );
    const set = loadConfig({
      CLEARHAUS_SIGNING_KEY_ID: keyId,
      CLEARHAUS_SIGNING_KEY_FILE: 'k.pem',
      CLEARHAUS_URL: 'http://127.0.0.1:9999/',
      CLEARHAUS_TIMEOUT_MS: '1500',
      CLEARHAUS_MAX_IN_FLIGHT: '4',
    }).clearhaus!;
    assert.deepEqual([set.url, set.timeoutMs, set.maxInFlight], ['http://127.0.0.1:9999', 1500, 4]);
  });

  test('each bad value names its variable', () => {
    expectConfigError({ CLEARHAUS_SIGNING_KEY_ID: keyId }, 'CLEARHAUS_SIGNING_KEY_FILE');
    expectConfigError({ CLEARHAUS_SIGNING_KEY_FILE: 'k.pem' }, 'CLEARHAUS_SIGNING_KEY_ID');
    expectConfigError({ CLEARHAUS_SIGNING_KEY_ID: 'not-a-uuid', CLEARHAUS_SIGNING_KEY_FILE: 'k.pem' }, 'CLEARHAUS_SIGNING_KEY_ID');
    const both = { CLEARHAUS_SIGNING_KEY_ID: keyId, CLEARHAUS_SIGNING_KEY_FILE: 'k.pem' };
    expectConfigError({ ...both, CLEARHAUS_URL: 'ftp://x' }, 'CLEARHAUS_URL');
    expectConfigError({ ...both, CLEARHAUS_TIMEOUT_MS: '0' }, 'CLEARHAUS_TIMEOUT_MS');
    expectConfigError({ ...both, CLEARHAUS_MAX_IN_FLIGHT: 'many' }, 'CLEARHAUS_MAX_IN_FLIGHT');
  });

  test('a key file that is missing or not an RSA private key stops the start naming the variable, never quoting the file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ch-config-'));
    const notAKey = path.join(dir, 'not-a-key.pem');
    fs.writeFileSync(notAKey, 'SECRET-LOOKING-CONTENT-1234\n');
    for (const file of [path.join(dir, 'missing.pem'), notAKey]) {
      const { code, stderr } = await run({
        CLEARHAUS_SIGNING_KEY_ID: keyId,
        CLEARHAUS_SIGNING_KEY_FILE: file,
        DATABASE_URL: path.join(dir, 'p.db'),
        PORT: '0',
      });
      assert.notEqual(code, 0);
      assert.match(stderr, /CLEARHAUS_SIGNING_KEY_FILE/);
      assert.doesNotMatch(stderr, /SECRET-LOOKING-CONTENT/);
      assert.doesNotMatch(stderr, /\bat .+:\d+:\d+/, 'no stack trace');
    }
  });
});

describe('the entry point with a bad value', () => {
  test('PORT=banana: exit non-zero with exactly one clear stderr line and no stack trace', async () => {
    const { code, stdout, stderr } = await run({ PORT: 'banana', DATABASE_URL: '/nonexistent-never-opened/p.db' });
    assert.notEqual(code, 0);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, `stderr: ${stderr}`);
    assert.match(lines[0]!, /PORT/);
    assert.match(lines[0]!, /banana/);
    assert.doesNotMatch(stderr, /\bat .+:\d+:\d+/, 'no stack trace');
    assert.equal(stdout, '');
  });
});
