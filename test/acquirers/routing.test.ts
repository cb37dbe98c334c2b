/**
 * Routing by the account's acquirer agreement (INTERFACE §12.1): a payment goes where the agreement
 * says, keeps that agreement for its later operations, and fails MISSING_ACQUIRER_AGREEMENT without
 * any request when nothing takes it (no agreement outside the sandbox).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { capture } from '../lifecycle/fixtures.js';
import { ok, putAgreement } from './support.js';

const card = () => ({ number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' });

async function moto(m: TestMerchant, reference: string) {
  const res = await m.api.post(`${API}/moto`, {
    transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference, instantCapture: 'OFF' },
    card: card(),
  });
  assert.equal(res.status, 200, res.text);
  return res.body.transaction as { id: string; state: string; errorCode: string | null };
}

for (const kind of await availableStores()) {
  describe(`acquirer routing (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('a transaction keeps the agreement that authorized it, through replacement and removal', async () => {
      ok(await putAgreement(t.operator, m.accountId, { acquirer: 'sandbox', mcc: '4816' }), 'PUT');
      const first = (await t.runtime.store.acquirerAgreements.current(m.accountId))!;
      const tx = await moto(m, 'routed-1');
      assert.equal(tx.state, 'SUCCESS');
      const stored = (await t.runtime.store.transactions.findById(m.accountId, tx.id))!;
      assert.equal(stored.acquirerAgreementId, first.id);

      ok(await putAgreement(t.operator, m.accountId, { acquirer: 'sandbox', mcc: '5411' }), 'PUT again');
      assert.equal((await t.operator.request('DELETE', `${API}/partner/accounts/${m.accountId}/acquirer-agreement`)).status, 200);
      const detail = await m.api.get(`${API}/transactions/${tx.id}`);
      assert.deepEqual(detail.body.acquirerAgreement, { acquirer: 'sandbox', mcc: '4816' }, 'the agreement that authorized it, not the current one');
      const res = await capture(m, tx.id, 400);
      assert.equal(res.body.success, true, res.text);
      assert.equal(acquirer.callsOf(tx.id, 'capture').length, 1, 'the capture went to the acquirer of the authorization');

      const later = await moto(m, 'routed-2');
      const laterRow = (await t.runtime.store.transactions.findById(m.accountId, later.id))!;
      assert.equal(laterRow.acquirerAgreementId, null, 'no agreement now: the sandbox simulator without one');
    });
  });

  describe(`no agreement outside the sandbox (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, { sandbox: false }, { acquirer });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('a MOTO payment fails MISSING_ACQUIRER_AGREEMENT with 200, and nothing is sent anywhere', async () => {
      const tx = await moto(m, 'unrouted');
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'MISSING_ACQUIRER_AGREEMENT');
      assert.equal(acquirer.calls.length, 0);
    });

    test('with a sandbox agreement the same payment goes to the simulator', async () => {
      ok(await putAgreement(t.operator, m.accountId, { acquirer: 'sandbox' }), 'PUT');
      const tx = await moto(m, 'routed-sandbox');
      assert.equal(tx.state, 'SUCCESS');
      assert.equal(acquirer.callsOf(tx.id, 'authorize').length, 1);
    });
  });
}
