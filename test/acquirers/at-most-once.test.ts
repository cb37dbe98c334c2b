/**
 * At most once on the wire, in doubt until resolved (INTERFACE §12.4), through the public API, with
 * a scripted acquirer that — like Clearhaus — takes no request twice (only voids are repeatable).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { capture, detail, eventually, ok, refusedWith, seedAuthorized, stored } from '../lifecycle/fixtures.js';

const IN_DOUBT = '/public/api/v1/partner/payments-in-doubt';

for (const kind of await availableStores()) {
  describe(`at most once, in doubt until resolved (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    acquirer.repeatable = new Set(['void']);
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      m = await t.createMerchant();
    });
    after(() => t.close());

    const advance = (seconds: number) => t.operator.post('/sandbox/v1/clock', { advanceSeconds: seconds });
    const moto = async (reference: string) => {
      const res = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference, instantCapture: 'OFF' },
        card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.transaction as { id: string; state: string; errorCode: string | null };
    };

    test('an authorization in doubt fails ACQUIRER_TIMEOUT and is never sent again', async () => {
      acquirer.scriptAny('authorize', ['timeout', 'approve']);
      const tx = await moto('doubt-auth');
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'ACQUIRER_TIMEOUT');
      await advance(120);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(acquirer.callsOf(tx.id, 'authorize').length, 1, 'one request, whatever the jobs do later');
      const ops = (await detail(m, tx.id)).operations;
      const request = await t.runtime.store.acquirerRequests.find(ops[0]!.id);
      assert.ok(request?.inDoubtAt, 'the request is recorded in doubt');
      assert.equal(request.resolution, 'FAILED', 'settled as failed by rule: not on the operator list');
      assert.equal(acquirer.callsOf(tx.id, 'void').length, 0, 'no id was named: nothing to void');
      acquirer.scriptAny('authorize', []);
    });

    test('an authorization in doubt whose id the acquirer named fails ACQUIRER_DOWN and is voided there', async () => {
      acquirer.scriptAny('authorize', ['in_doubt_named']);
      const tx = await moto('doubt-named');
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'ACQUIRER_DOWN');
      const voids = await eventually(async () => (acquirer.callsOf(tx.id, 'void').length > 0 ? acquirer.callsOf(tx.id, 'void') : null), 'the release job');
      assert.equal(voids.length, 1);
      assert.match(voids[0]!.authorizationReference ?? '', /^REF-/, 'the void goes against the id the acquirer named');
      assert.equal(acquirer.callsOf(tx.id, 'authorize').length, 1);
      acquirer.scriptAny('authorize', []);
    });

    test('a request that provably never left is sent again on the usual schedule', async () => {
      acquirer.scriptAny('authorize', ['unsent', 'approve']);
      const tx = await moto('unsent-then-approved');
      assert.equal(tx.state, 'PROCESSING', 'not sent yet: the outcome waits for the next try');
      await advance(6);
      await eventually(async () => ((await detail(m, tx.id)).transaction.state === 'SUCCESS' ? true : null), 'the drive job');
      assert.equal(acquirer.callsOf(tx.id, 'authorize').length, 2);
      acquirer.scriptAny('authorize', []);
    });

    test('a capture in doubt stays PROCESSING with its reservation, is listed, and the operator resolves it', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      acquirer.script(tx.id, 'capture', ['timeout', 'approve']);
      const body = refusedWith(await capture(m, tx.id, 300), 'ACQUIRER_TIMEOUT');
      assert.equal(body.state, 'PROCESSING');
      assert.match(body.errorCode.message, /in doubt/);
      await advance(120);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(acquirer.callsOf(tx.id, 'capture').length, 1, 'never sent twice');
      assert.equal((await stored(t, tx.id)).pending, 300, 'the amount stays held');
      const held = (await detail(m, tx.id)).operations.find((op: { id: string }) => op.id === body.operationId);
      assert.deepEqual([held?.state, held?.errorCode], ['PROCESSING', 'ACQUIRER_TIMEOUT'], 'the transaction says the capture is in doubt');

      const list = await t.operator.get(`${IN_DOUBT}?accountId=${m.accountId}`);
      assert.equal(list.status, 200, list.text);
      const item = list.body.items.find((i: { operationId: string }) => i.operationId === body.operationId);
      assert.ok(item, 'listed for the operator');
      assert.deepEqual([item.call, item.amount, item.currency, item.transactionId], ['capture', 300, 'DKK', tx.id]);
      assert.equal((await m.api.get(`${IN_DOUBT}`)).status, 403, 'operator key only');

      const resolved = await t.operator.post(`${IN_DOUBT}/${body.operationId}/resolve`, { outcome: 'SUCCEEDED' });
      assert.equal(resolved.status, 200, resolved.text);
      assert.equal(resolved.body.state, 'SUCCESS');
      const d = await detail(m, tx.id);
      assert.equal(d.aggregates.captured, 300);
      const settled = d.operations.find((op: { id: string }) => op.id === body.operationId);
      assert.deepEqual([settled?.state, settled?.errorCode], ['SUCCESS', null]);
      assert.equal((await stored(t, tx.id)).pending, 0);
      assert.equal((await t.operator.post(`${IN_DOUBT}/${body.operationId}/resolve`, { outcome: 'FAILED' })).status, 404, 'resolved once');
      const after = await t.operator.get(`${IN_DOUBT}?accountId=${m.accountId}`);
      assert.equal(
        after.body.items.some((i: { operationId: string }) => i.operationId === body.operationId),
        false,
      );
    });

    test('a capture in doubt resolved as failed releases its reservation', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      acquirer.script(tx.id, 'capture', ['throw']);
      const body = refusedWith(await capture(m, tx.id, 400), 'ACQUIRER_TIMEOUT');
      const resolved = await t.operator.post(`${IN_DOUBT}/${body.operationId}/resolve`, { outcome: 'FAILED' });
      assert.equal(resolved.status, 200, resolved.text);
      assert.equal(resolved.body.state, 'FAILED');
      assert.equal((await stored(t, tx.id)).pending, 0);
      assert.equal((await detail(m, tx.id)).aggregates.captured, 0);
      ok(await capture(m, tx.id, 1000), 'the whole authorization is capturable again');
    });

    test('the safety net finds the request on its way and waits for its sender: one request, one answer', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      acquirer.latencyMs = 1500;
      try {
        const pending = capture(m, tx.id, 200);
        // The synchronous capture's safety net comes due while its request is still out.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await advance(6);
        const body = ok(await pending);
        assert.equal(body.state, 'SUCCESS');
      } finally {
        acquirer.latencyMs = 0;
      }
      await advance(60);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(acquirer.callsOf(tx.id, 'capture').length, 1);
      assert.equal((await detail(m, tx.id)).aggregates.captured, 200);
    });
  });
}
