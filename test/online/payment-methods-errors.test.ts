/**
 * Payment methods, INTERFACE §11.4, refusals on both stores: account-updates on a non-card method
 * (422 on `enabled`), unknown or deleted methods (404), a bad body (422, nothing stored under the
 * key); the sandbox account updater on a method not enrolled (409, the card unchanged), bad
 * updates (422) and unknown methods (404).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS } from './helpers.js';
import { citBody, complete, finalTransaction, ok, storedCard } from './cit-flows.js';

function expect422(res: TestResponse, fields: string[]) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), res.text);
}

function expectError(res: TestResponse, status: number, errorCode: string) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
  assert.equal(res.body.errorCode, errorCode);
}

for (const kind of await availableStores()) {
  describe(`payment methods and the account updater: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());

    const enrol = (id: string, body: unknown, idempotencyKey?: string) =>
      m.api.post(`${API}/payment-methods/${id}/account-updates`, body, idempotencyKey ? { idempotencyKey } : {});
    const accountUpdate = (id: string, body: unknown) => t.operator.post(`/sandbox/v1/payment-methods/${id}/account-update`, body);

    test('account-updates on a wallet → 422 on enabled (either value)', async () => {
      const init = ok(await m.api.post(`${API}/cit`, citBody(m, { customerId: 'cust-wallet', subscription: { type: 'UNSCHEDULED' } })), 'POST /cit');
      const done = ok(await complete(t, init.session.id, { paymentMethodType: 'VIABILL' }), 'complete');
      const walletId = (await finalTransaction(m, done.transaction.id)).paymentMethodId;
      for (const enabled of [true, false]) {
        const res = await enrol(walletId, { enabled });
        expect422(res, ['enabled']);
        assert.match(res.body.errors.enabled[0], /^\[in:CARD\]: /);
      }
      expectError(await accountUpdate(walletId, { expiryMonth: 1, expiryYear: 2031 }), 409, 'CONFLICT');
    });

    test('account-updates: unknown, malformed or deleted id → 404; a body that is not {enabled: bool} → 422, the key unused', async () => {
      expectError(await enrol(randomUUID(), { enabled: true }), 404, 'NOT_FOUND');
      assert.equal((await enrol('not-a-uuid', { enabled: true })).status, 422);
      const stored = await storedCard(t, m, 'cust-bad-body');
      expect422(await enrol(stored.paymentMethodId, {}, 'bad-body'), ['enabled']);
      expect422(await enrol(stored.paymentMethodId, { enabled: 'yes' }, 'bad-body'), ['enabled']);
      // Refused before it ran: the same key takes the fixed body.
      assert.equal(ok(await enrol(stored.paymentMethodId, { enabled: true }, 'bad-body'), 'enable').paymentMethod.accountUpdatesEnabled, true);
      // The same key with another body → IDEMPOTENCY_KEY_REUSED.
      expectError(await enrol(stored.paymentMethodId, { enabled: false }, 'bad-body'), 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal((await m.api.delete(`${API}/payment-methods/${stored.paymentMethodId}`)).status, 200);
      expectError(await enrol(stored.paymentMethodId, { enabled: true }), 404, 'NOT_FOUND');
      expectError(await accountUpdate(stored.paymentMethodId, { expiryMonth: 1, expiryYear: 2031 }), 404, 'NOT_FOUND');
    });

    test('account updater on a card not enrolled → 409 CONFLICT, the card kept; after withdrawal → 409 again', async () => {
      const stored = await storedCard(t, m, 'cust-not-enrolled');
      const before = ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET');
      expectError(await accountUpdate(stored.paymentMethodId, { expiryMonth: 5, expiryYear: 2032 }), 409, 'CONFLICT');
      expectError(await accountUpdate(stored.paymentMethodId, { card: { number: CARDS.MASTERCARD, expiryMonth: 5, expiryYear: 2032 } }), 409, 'CONFLICT');
      assert.deepEqual(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET after'), before, 'unchanged');
      ok(await enrol(stored.paymentMethodId, { enabled: true }), 'enable');
      ok(await enrol(stored.paymentMethodId, { enabled: false }), 'disable');
      expectError(await accountUpdate(stored.paymentMethodId, { expiryMonth: 5, expiryYear: 2032 }), 409, 'CONFLICT');
      assert.deepEqual(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET after withdrawal').card, before.card);
    });

    test('account updater: bad updates → 422 (nothing changes); unknown method → 404', async () => {
      const stored = await storedCard(t, m, 'cust-bad-update');
      ok(await enrol(stored.paymentMethodId, { enabled: true }), 'enable');
      expect422(await accountUpdate(stored.paymentMethodId, {}), ['expiryMonth', 'expiryYear']);
      expect422(await accountUpdate(stored.paymentMethodId, { expiryMonth: 13, expiryYear: 2032 }), ['expiryMonth']);
      expect422(await accountUpdate(stored.paymentMethodId, { expiryMonth: 1, expiryYear: 2020 }), ['expiryYear']);
      expect422(await accountUpdate(stored.paymentMethodId, { expiryMonth: 1, expiryYear: 32 }), ['expiryYear']);
      expect422(await accountUpdate(stored.paymentMethodId, { card: { number: '4111111111111112', expiryMonth: 1, expiryYear: 2032 } }), ['card.number']);
      expect422(await accountUpdate(stored.paymentMethodId, { card: { number: CARDS.VISA, expiryMonth: 1, expiryYear: 2032, cvc: '12' } }), ['card.cvc']);
      const res = await accountUpdate(stored.paymentMethodId, { card: { number: '4111111111111112', expiryMonth: 1, expiryYear: 2032 } });
      assert.ok(!res.text.includes('4111111111111112'), 'the refusal never repeats the number');
      assert.equal(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET').paymentMethod.expiry, '2030-12-31');
      expectError(await accountUpdate(randomUUID(), { expiryMonth: 1, expiryYear: 2032 }), 404, 'NOT_FOUND');
    });
  });
}
