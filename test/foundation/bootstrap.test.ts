/**
 * First run (src/bootstrap.ts): the sandbox merchant with ONLINE and PHYSICAL points of sale and a
 * terminal; a second start on the same data reuses the same API key and the generated operator key.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ensureSandboxAccount } from '../../src/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { availableStores, createTestDatabase } from '../support/stores.js';
import { API, testConfig } from '../support/harness.js';

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
  });
}
