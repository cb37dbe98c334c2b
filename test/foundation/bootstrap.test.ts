/**
 * First run (src/bootstrap.ts): the sandbox merchant with ONLINE and PHYSICAL points of sale and a
 * terminal; a second start on the same data reuses the same API key and the generated operator key.
 * The generated key files are owner-only (0600), and the real service prints where everything is.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { startBanner } from '../../src/banner.js';
import { ensureSandboxAccount } from '../../src/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { loadOrCreateSecretFile, SecretBox } from '../../src/security/secret-box.js';
import { availableStores, createTestDatabase } from '../support/stores.js';
import { API, testConfig } from '../support/harness.js';
import { client, freshDatabase, startService } from '../e2e/service.js';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

for (const kind of await availableStores()) {
  describe(`first run (${kind})`, () => {
    test('creates the sandbox merchant once; a second start reuses its key and the operator key', async () => {
      const database = await createTestDatabase(kind);
      // No PAYMENTS_OPERATOR_KEY: it is generated and kept beside the data.
      const config = testConfig(database, { operatorKey: null });
      const start = async (): Promise<Runtime> => {
        const runtime = await createRuntime(config, {
          logger: createLogger('silent'),
          connectOptions: database.schema ? { schema: database.schema } : {},
          startWorkers: false,
        });
        await runtime.app.ready();
        return runtime;
      };
      const get = async (runtime: Runtime, url: string, token: string) => {
        const res = await runtime.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        return res.json();
      };
      try {
        const first = await start();
        assert.equal(first.operatorKeyGenerated, true);
        const sandbox = await ensureSandboxAccount(first);
        assert.equal(sandbox.created, true);
        const pos = await get(first, `${API}/management/point-of-sales`, sandbox.apiKey);
        const byType = Object.fromEntries(pos.items.map((i: { pointOfSale: { type: string; id: string } }) => [i.pointOfSale.type, i.pointOfSale.id]));
        assert.deepEqual(byType, { ONLINE: sandbox.onlinePointOfSaleId, PHYSICAL: sandbox.physicalPointOfSaleId });
        const terminals = await get(first, `${API}/terminals?pointOfSaleId=${sandbox.physicalPointOfSaleId}`, sandbox.apiKey);
        assert.equal(terminals.total, 1);
        assert.equal(terminals.items[0].terminal.id, sandbox.terminalId);
        assert.equal(terminals.items[0].terminal.fallback, true);
        const account = (await get(first, `${API}/partner/accounts/${sandbox.accountId}`, first.operatorKey)).account;
        assert.equal(account.status, 'ACTIVE');
        assert.deepEqual(account.capabilities, { moto: true, syncPayout: true });
        // The callback credentials, as GET shows them to the merchant, are printed by the banner.
        for (const [id, secret] of [
          [sandbox.onlinePointOfSaleId, sandbox.onlineSigningSecret],
          [sandbox.physicalPointOfSaleId, sandbox.physicalSigningSecret],
        ]) {
          const detail = (await get(first, `${API}/management/point-of-sales/${id}`, sandbox.apiKey)).pointOfSale;
          assert.equal(detail.webhookAuthentication, sandbox.webhookAuthentication);
          assert.equal(detail.signingSecret, secret);
        }
        assert.equal(sandbox.webhookAuthentication, 'Bearer sandbox-callback-secret');
        const banner = startBanner({ config, operatorKey: first.operatorKey, operatorKeyGenerated: true, sandbox });
        for (const shown of [sandbox.apiKey, sandbox.webhookAuthentication, sandbox.onlineSigningSecret, sandbox.physicalSigningSecret]) {
          assert.ok(banner.includes(shown), `the banner shows ${shown}:\n${banner}`);
        }
        const again = await ensureSandboxAccount(first);
        assert.deepEqual(again, { ...sandbox, created: false }, 'idempotent within one start');
        const operatorKey = first.operatorKey;
        await first.close();

        const second = await start();
        try {
          assert.equal(second.operatorKeyGenerated, false);
          assert.equal(second.operatorKey, operatorKey, 'the generated operator key is kept');
          const reused = await ensureSandboxAccount(second);
          assert.deepEqual(reused, { ...sandbox, created: false });
          await get(second, `${API}/transactions`, reused.apiKey);
          const accounts = await get(second, `${API}/partner/accounts`, second.operatorKey);
          assert.equal(accounts.total, 1, 'no second sandbox merchant');
        } finally {
          await second.close();
        }
      } finally {
        await database.drop();
      }
    });

    test('two processes starting at once on an empty database end up with one sandbox merchant', async () => {
      const database = await createTestDatabase(kind);
      const config = testConfig(database);
      const open = () =>
        createRuntime(config, { logger: createLogger('silent'), connectOptions: database.schema ? { schema: database.schema } : {}, startWorkers: false });
      // Opened one after the other: two SQLite connections of one process would block each other's migration.
      const a = await open();
      const b = await open();
      try {
        const [x, y] = await Promise.all([ensureSandboxAccount(a), ensureSandboxAccount(b)]);
        assert.equal(x.accountId, y.accountId);
        assert.equal(x.apiKey, y.apiKey);
        assert.equal([x.created, y.created].filter(Boolean).length <= 1, true, 'at most one says it created it');
        const live = await a.store.db.selectFrom('accounts').select('id').where('name', '=', 'Sandbox merchant').where('status', '!=', 'CLOSED').execute();
        assert.deepEqual(
          live.map((r) => r.id),
          [x.accountId],
          'the loser closed its own merchant',
        );
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    });

    test('the generated operator key and vault key files are owner-only (0600) and hold the keys in use', async () => {
      const database = await createTestDatabase(kind);
      assert.deepEqual(
        fs.readdirSync(database.dataDir).filter((f) => f.endsWith('.key')),
        [],
        'an empty data directory',
      );
      const config = testConfig(database, { operatorKey: null, vaultKey: null });
      const runtime = await createRuntime(config, {
        logger: createLogger('silent'),
        connectOptions: database.schema ? { schema: database.schema } : {},
        startWorkers: false,
      });
      try {
        const operatorFile = path.join(database.dataDir, 'operator.key');
        const vaultFile = path.join(database.dataDir, 'vault.key');
        assert.equal(modeOf(operatorFile).toString(8), '600');
        assert.equal(modeOf(vaultFile).toString(8), '600');
        assert.equal(fs.readFileSync(operatorFile, 'utf8').trim(), runtime.operatorKey);
        const vaultKey = fs.readFileSync(vaultFile, 'utf8').trim();
        assert.match(vaultKey, /^[0-9a-f]{64}$/);
        const sealed = runtime.sealer.seal('vault check');
        assert.equal(new SecretBox(Buffer.from(vaultKey, 'hex')).open(sealed), 'vault check', 'the file holds the key the service seals with');
      } finally {
        await runtime.close();
        await database.drop();
      }
    });
  });
}

test('loadOrCreateSecretFile: creates the data directory (0700) and the file (0600) once, then reads it back', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-secret-'));
  try {
    const dir = path.join(root, 'nested', 'data');
    let generated = 0;
    const generate = () => `secret-${++generated}`;
    const first = loadOrCreateSecretFile(dir, 'test.key', generate);
    assert.deepEqual(first, { value: 'secret-1', created: true });
    assert.equal(modeOf(dir).toString(8), '700');
    assert.equal(modeOf(path.join(dir, 'test.key')).toString(8), '600');
    assert.equal(fs.readFileSync(path.join(dir, 'test.key'), 'utf8'), 'secret-1\n');
    assert.deepEqual(loadOrCreateSecretFile(dir, 'test.key', generate), { value: 'secret-1', created: false });
    assert.equal(generated, 1, 'generated once');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the real service on an empty data directory prints the API, docs and health URLs, the operator key and a working sandbox API key', async () => {
  const db = await freshDatabase('sqlite', 'first-run');
  // No operator key and no vault key: both are generated into the data directory (beside the SQLite file).
  const service = await startService({
    databaseUrl: db.url,
    dir: db.dir,
    operatorKey: '',
    vaultKey: '',
    label: 'first-run',
    env: { PAYMENTS_OPERATOR_KEY: '', PAYMENTS_VAULT_KEY: '', PAYMENTS_PUBLIC_URL: '', LOG_LEVEL: 'silent' },
  });
  try {
    const deadline = Date.now() + 5000;
    let out = fs.readFileSync(service.logPath, 'utf8');
    while (!out.includes('Try: curl') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      out = fs.readFileSync(service.logPath, 'utf8');
    }
    const base = service.baseUrl; // the default public URL is http://HOST:PORT
    const line = (label: RegExp) => {
      const found = out.split('\n').find((l) => label.test(l));
      assert.ok(found, `a line matching ${label} in:\n${out}`);
      return found!;
    };
    assert.ok(line(/^Payments service listening on /).includes(`listening on ${base}  (store: sqlite, sandbox)`));
    assert.equal(
      line(/^ {2}API {2}/)
        .trim()
        .split(/\s+/)[1],
      `${base}/public/api/v1`,
    );
    assert.deepEqual(
      line(/^ {2}API docs/)
        .trim()
        .split(/\s+/)
        .slice(2),
      [`${base}/docs`, 'OpenAPI:', `${base}/openapi.json`],
    );
    assert.deepEqual(
      line(/^ {2}Health/)
        .trim()
        .split(/\s+/)
        .slice(1),
      [`${base}/healthz`, 'Ready:', `${base}/readyz`, 'Metrics:', `${base}/metrics`],
    );

    const operatorFile = path.join(db.dir, 'operator.key');
    const operatorKey = fs.readFileSync(operatorFile, 'utf8').trim();
    assert.equal(line(/^ {2}Operator key /), `  Operator key ${operatorKey}  (kept in ${operatorFile})`);
    assert.equal(modeOf(operatorFile).toString(8), '600');
    assert.equal(modeOf(path.join(db.dir, 'vault.key')).toString(8), '600');
    assert.match(line(/^ {2}Sandbox merchant /), /\(created now\)$/);
    const apiKey = line(/^ {4}API key /)
      .trim()
      .split(/\s+/)[2]!;
    assert.match(apiKey, /^sk_/);
    assert.ok(line(/^ {2}Try: curl/).includes(`Bearer ${apiKey}`));

    // The printed URLs and keys work.
    for (const url of [`${base}/healthz`, `${base}/readyz`, `${base}/docs`, `${base}/openapi.json`, `${base}/metrics`]) {
      const res = await fetch(url);
      await res.arrayBuffer();
      assert.equal(res.status, 200, url);
    }
    assert.equal((await client(base, apiKey).get(`${API}/transactions`)).status, 200, 'the printed API key authenticates');
    const accounts = await client(base, operatorKey).get(`${API}/partner/accounts`);
    assert.equal(accounts.status, 200, 'the printed operator key authenticates');
    assert.equal(accounts.body.total, 1);
  } finally {
    await service.stop();
    await db.drop();
  }
});
