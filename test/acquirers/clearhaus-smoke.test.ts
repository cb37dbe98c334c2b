import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type ClearhausSetup, startClearhaus } from './clearhaus-support.js';

for (const kind of await availableStores()) {
  describe(`clearhaus smoke (${kind})`, () => {
    let s: ClearhausSetup;
    before(async () => {
      s = await startClearhaus(kind);
    });
    after(() => s.close());

    test('MOTO through Clearhaus, then capture and refund', async () => {
      const m = await s.merchant();
      const res = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'ch-smoke', instantCapture: 'OFF' },
        card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.state, 'SUCCESS', res.text);
      const id = res.body.transaction.id;
      const cap = await m.api.post(`${API}/transactions/${id}/capture`, { amount: 600 });
      assert.equal(cap.body.success, true, cap.text);
      const ref = await m.api.post(`${API}/transactions/${id}/refund`, { amount: 200 });
      assert.equal(ref.body.success, true, ref.text);
      const auth = s.fake.requestsTo('/authorizations')[0]!;
      assert.equal(auth.signature, 'valid');
      assert.equal(auth.form['moto[pan]'], '4111111111111111');
      const detail = await m.api.get(`${API}/transactions/${id}`);
      assert.deepEqual(detail.body.acquirerAgreement, { acquirer: 'clearhaus', mcc: '5734' });
    });
  });
}
