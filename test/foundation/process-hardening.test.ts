/**
 * Clean stop, quiet secrets and bounded requests (issue 9, points 7 and 8): SIGTERM to `npm start`
 * stops the service; production mode prints no secret but a generated operator key, once; a
 * request whose body stalls is dropped; header values sent on refuse control characters.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBanner } from '../../src/banner.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { API, startTestRuntime, testConfig, type TestRuntime } from '../support/harness.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';
import { ROOT, SERVICE_MAIN, sleep } from '../e2e/service.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts a command, resolves once its stdout contains `ready`; the output so far is kept. */
function start(command: string, args: string[], env: Record<string, string>, ready: string) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = (async () => {
    const deadline = Date.now() + 30_000;
    while (!out.includes(ready)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${command} did not start:\n${out}`);
      await sleep(50);
    }
  })();
  return { child, exited, started, output: () => out };
}

describe('npm start stops on SIGTERM', () => {
  test('SIGTERM to the npm process stops the service it started (no orphan keeps serving)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-npm-stop-'));
    const run = start(
      'npm',
      ['start', '--silent'],
      { DATABASE_URL: path.join(dir, 'payments.db'), PAYMENTS_OPERATOR_KEY: '', PAYMENTS_VAULT_KEY: '' },
      'Try: curl',
    );
    try {
      await run.started;
      const children = fs.readFileSync(`/proc/${run.child.pid}/task/${run.child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
      assert.ok(children.length > 0, 'npm runs the service as its child');
      run.child.kill('SIGTERM');
      await run.exited;
      const deadline = Date.now() + 15_000;
      while (children.some(alive) && Date.now() < deadline) await sleep(100);
      assert.deepEqual(children.filter(alive), [], `no process of the service is left running:\n${run.output()}`);
      assert.match(run.output(), /shutting down/, 'the service shut down gracefully');
    } finally {
      run.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('production mode prints no secret', () => {
  test('the banner shows a generated operator key only at its creation, with its file; never a key from the environment', () => {
    const base = { publicUrl: 'http://127.0.0.1:8080', database: { kind: 'sqlite' as const, path: '/srv/p.db' }, dataDir: '/srv', allowPrivateUrls: false };
    const key = 'op_secretsecretsecret';
    const show = (sandbox: boolean, operatorKey: string | null, generated: boolean) =>
      startBanner({ config: { ...base, sandbox, operatorKey }, operatorKey: key, operatorKeyGenerated: generated, sandbox: null });
    assert.ok(show(false, null, true).includes(`${key}  (generated now and written to /srv/operator.key; it is not shown again)`));
    assert.ok(!show(false, null, false).includes(key), 'a later start does not print it');
    assert.ok(show(false, null, false).includes('kept in /srv/operator.key (not shown)'));
    assert.ok(!show(false, key, false).includes(key), 'a key from PAYMENTS_OPERATOR_KEY is never printed');
    assert.ok(show(true, null, false).includes(key), 'the sandbox prints it for the developer');
  });

  test('the real service with PAYMENTS_SANDBOX=0 prints the generated key once; the second start prints no secret', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-quiet-'));
    const env = { DATABASE_URL: path.join(dir, 'payments.db'), PAYMENTS_SANDBOX: '0', PAYMENTS_OPERATOR_KEY: '', PAYMENTS_VAULT_KEY: '' };
    try {
      const outputs: string[] = [];
      for (let i = 0; i < 2; i++) {
        const run = start(process.execPath, SERVICE_MAIN, env, 'Operator key');
        await run.started;
        await sleep(200);
        run.child.kill('SIGTERM');
        await run.exited;
        outputs.push(run.output());
      }
      const operatorKey = fs.readFileSync(path.join(dir, 'operator.key'), 'utf8').trim();
      const vaultKey = fs.readFileSync(path.join(dir, 'vault.key'), 'utf8').trim();
      assert.ok(outputs[0]!.includes(`${operatorKey}  (generated now and written to ${path.join(dir, 'operator.key')}`), outputs[0]);
      assert.ok(!outputs[1]!.includes(operatorKey), `the second start prints no operator key:\n${outputs[1]}`);
      for (const out of outputs) assert.ok(!out.includes(vaultKey), 'the vault key is never printed');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bounded requests', () => {
  let database: TestDatabase;
  let runtime: Runtime;
  let port: number;
  before(async () => {
    database = await createTestDatabase('sqlite');
    runtime = await createRuntime(testConfig(database), { logger: createLogger('silent'), startWorkers: false, requestTimeoutMs: 1_000 });
    await runtime.app.listen({ port: 0, host: '127.0.0.1' });
    port = (runtime.app.server.address() as net.AddressInfo).port;
  });
  after(async () => {
    await runtime.close();
    await database.drop();
  });

  /** Sends `head` and a part of the announced body, then waits for the server to close the socket. */
  const stall = (head: string, timeoutMs: number) =>
    new Promise<{ closedAfterMs: number | null; response: string }>((resolve) => {
      const startedAt = Date.now();
      const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
      let response = '';
      socket.on('data', (chunk) => (response += chunk.toString()));
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ closedAfterMs: null, response });
      }, timeoutMs);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ closedAfterMs: Date.now() - startedAt, response });
      });
      socket.on('error', () => undefined);
    });

  test('a body that stops arriving is dropped after the request timeout', async () => {
    const head = `POST ${API}/partner/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${runtime.operatorKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"transact`;
    const { closedAfterMs, response } = await stall(head, 12_000);
    assert.notEqual(closedAfterMs, null, 'the server closed the connection');
    assert.match(response, /^HTTP\/1\.1 408/, 'answered 408 Request Timeout');
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
    assert.equal(body.errorCode, 'REQUEST_TIMEOUT', 'with the API error body');
    assert.equal(body.success, false);
  });

  test('a request refused before its body arrived (401) does not keep its connection open', async () => {
    const head = `POST ${API}/moto HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`;
    const { closedAfterMs, response } = await stall(head, 12_000);
    assert.match(response, /^HTTP\/1\.1 401/);
    assert.match(response, /connection: close/i);
    assert.notEqual(closedAfterMs, null);
    assert.ok(closedAfterMs! < 5_000, `closed after ${closedAfterMs} ms`);
  });
});

describe('header values sent on refuse control characters', () => {
  let t: TestRuntime;
  before(async () => {
    t = await startTestRuntime('sqlite', {}, { startWorkers: false });
  });
  after(() => t.close());

  test('webhookAuthentication and webhook secrets with CR, LF or other control characters are a 422 on the field', async () => {
    const m = await t.createMerchant({ physical: false });
    for (const value of ['Bearer a\r\nX-Injected: 1', 'Bearer a\nb', 'tab\there', 'nul\u0001']) {
      const pos = await m.api.post(`${API}/management/point-of-sales`, { name: 'Shop', domain: 'localhost', webhookAuthentication: value, type: 'ONLINE' });
      assert.equal(pos.status, 422, pos.text);
      assert.ok(pos.body.errors.webhookAuthentication, pos.text);
      const webhook = await m.api.post(`${API}/webhooks`, { url: 'http://localhost/hook', events: ['transaction.success.v1'], secret: value });
      assert.equal(webhook.status, 422, webhook.text);
      assert.ok(webhook.body.errors.secret, webhook.text);
    }
    const ok = await m.api.post(`${API}/management/point-of-sales`, {
      name: 'Shop',
      domain: 'localhost',
      webhookAuthentication: 'Basic dXNlcjpwYXNz',
      type: 'ONLINE',
    });
    assert.equal(ok.status, 200, ok.text);
  });
});
