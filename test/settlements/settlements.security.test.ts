/** Tiers and tenants: merchants see only their own settlements; the run is the operator's (sandbox). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { authorize, capture, runSettlements, walk } from './support.js';

for (const kind of await availableStores()) {
  describe(`settlements security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let aTransfer: any;
    let bTransfer: any;

    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      await capture(a, await authorize(a, 1000), 1000);
      await capture(b, await authorize(b, 2000), 2000);
      const transfers = await runSettlements(t);
      assert.equal(transfers.length, 2);
      aTransfer = transfers.find((tr) => tr.netAmount === '9.77');
      bTransfer = transfers.find((tr) => tr !== aTransfer);
      assert.ok(aTransfer && bTransfer, JSON.stringify(transfers));
    });
    after(() => t?.close());

    test("another merchant's transfer and its transactions → 404 with no data", async () => {
      for (const path of [`/settlements/transfers/${aTransfer.id}`, `/settlements/transfers/${aTransfer.id}/transactions`]) {
        const res = await b.api.get(`${API}${path}`);
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.ok(!res.text.includes(aTransfer.acquirerReference));
      }
    });

    test('each merchant lists only its own transfers', async () => {
      assert.deepEqual(
        (await walk(a.api, '/settlements/transfers', 25)).map((i) => i.settlementTransfer.id),
        [aTransfer.id],
      );
      assert.deepEqual(
        (await walk(b.api, '/settlements/transfers', 25)).map((i) => i.settlementTransfer.id),
        [bTransfer.id],
      );
    });

    test('no credential → 401; the operator key on merchant routes → 403; a merchant cannot run settlements', async () => {
      assert.equal((await t.client(null).get(`${API}/settlements/transfers`)).status, 401);
      assert.equal((await t.operator.get(`${API}/settlements/transfers`)).status, 403);
      const run = await a.api.post('/sandbox/v1/settlements/run', {});
      assert.ok([401, 403].includes(run.status), run.text);
      assert.deepEqual(await runSettlements(t), [], "the merchant's attempt settled nothing (nothing new either)");
    });
  });

  describe(`settlements without sandbox (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { sandbox: false });
    });
    after(() => t?.close());

    test('POST /sandbox/v1/settlements/run is 404 when PAYMENTS_SANDBOX is off', async () => {
      assert.equal((await t.operator.post('/sandbox/v1/settlements/run', {})).status, 404);
    });
  });
}
