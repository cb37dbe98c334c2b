/**
 * Payment methods, INTERFACE §11.4, tiers and tenants on both stores: another merchant's method is
 * 404 on GET and on account-updates (and unchanged); the account updater is a sandbox control
 * (operator key only; absent without PAYMENTS_SANDBOX).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { ok, storedCard } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`payment methods and the account updater: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let aMethod: string;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      aMethod = (await storedCard(t, a, 'cust-private')).paymentMethodId;
    });
    after(() => t.close());

    test('no credential → 401; operator key on the merchant routes → 403', async () => {
      assert.equal((await a.api.get(`${API}/payment-methods/${aMethod}`, { token: null })).status, 401);
      assert.equal((await a.api.post(`${API}/payment-methods/${aMethod}/account-updates`, { enabled: true }, { token: null })).status, 401);
      assert.equal((await t.operator.get(`${API}/payment-methods/${aMethod}`)).status, 403);
      assert.equal((await t.operator.post(`${API}/payment-methods/${aMethod}/account-updates`, { enabled: true })).status, 403);
    });

    test("another merchant's payment method → 404 on GET and account-updates, without its data; the owner's is unchanged", async () => {
      for (const res of [
        await b.api.get(`${API}/payment-methods/${aMethod}`),
        await b.api.post(`${API}/payment-methods/${aMethod}/account-updates`, { enabled: true }),
        await b.api.post(`${API}/payment-methods/${aMethod}/account-updates`, { enabled: false }, { idempotencyKey: 'b-key' }),
      ]) {
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.ok(!res.text.includes('cust-private') && !res.text.includes('XXXX'), res.text);
      }
      assert.equal(ok(await a.api.get(`${API}/payment-methods/${aMethod}`), 'owner').paymentMethod.accountUpdatesEnabled, false);
      // The same Idempotency-Key is the owner's own (keys are scoped to the merchant).
      assert.equal(
        ok(await a.api.post(`${API}/payment-methods/${aMethod}/account-updates`, { enabled: true }, { idempotencyKey: 'b-key' }), 'owner enrols').paymentMethod
          .accountUpdatesEnabled,
        true,
      );
    });

    test('the account updater is a sandbox control: a merchant credential is refused, the card kept', async () => {
      const res = await a.api.post(`/sandbox/v1/payment-methods/${aMethod}/account-update`, { expiryMonth: 1, expiryYear: 2033 });
      assert.ok(res.status === 401 || res.status === 403, `${res.status} ${res.text}`);
      assert.equal((await t.client(null).post(`/sandbox/v1/payment-methods/${aMethod}/account-update`, { expiryMonth: 1, expiryYear: 2033 })).status, 401);
      assert.equal(ok(await a.api.get(`${API}/payment-methods/${aMethod}`), 'owner').paymentMethod.expiry, '2030-12-31');
    });
  });

  describe(`payment methods: the account updater outside the sandbox (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { sandbox: false });
    });
    after(() => t.close());

    test('PAYMENTS_SANDBOX=0: POST /sandbox/v1/payment-methods/{id}/account-update → 404', async () => {
      const res = await t.operator.post('/sandbox/v1/payment-methods/00000000-0000-4000-8000-000000000000/account-update', {
        expiryMonth: 1,
        expiryYear: 2033,
      });
      assert.equal(res.status, 404, res.text);
    });
  });
}
