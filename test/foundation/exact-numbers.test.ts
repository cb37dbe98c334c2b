/**
 * Exact numbers only (INTERFACE §3): no JSON value other than an integer in range reaches an
 * integer field, query-string numbers are read from decimal digits only, currencies are ISO 4217
 * codes the service knows, and the sandbox clock takes only a bounded move. Every refusal is a 422
 * on the field with its rule, and changes nothing (reproductions of issue 9, point 1).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

const CARD = { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' };
/** Every JSON value an integer amount field must refuse, written as raw JSON text. */
const NOT_AN_AMOUNT = [
  '"100"',
  '"Infinity"',
  '"-Infinity"',
  '"1e999"',
  '1e999',
  '-1e999',
  'true',
  'false',
  '"0x10"',
  '"0b11"',
  '[12]',
  'null',
  '1.5',
  '-1',
  '1000000000',
  '{}',
  '" 5"',
  '""',
];

function assertFieldRefusal(res: TestResponse, field: string, what: string): void {
  assert.equal(res.status, 422, `${what}: ${res.text}`);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR', what);
  const messages = res.body.errors?.[field] as string[] | undefined;
  assert.ok(messages?.length, `${what}: an error on ${field}, got ${JSON.stringify(res.body.errors)}`);
  for (const message of messages) assert.match(message, FIELD_RULE_PATTERN, what);
}

for (const kind of await availableStores()) {
  describe(`exact numbers (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    const transactionIds = async (): Promise<string[]> => {
      const res = await m.api.get(`${API}/transactions?perPage=500`);
      assert.equal(res.status, 200, res.text);
      return res.body.items.map((item: { transaction: { id: string } }) => item.transaction.id).sort();
    };
    const rawPost = (url: string, json: string) => m.api.request('POST', url, { raw: json, contentType: 'application/json' });

    test('a MOTO amount that is not a JSON integer in range is a 422 on transaction.amount and creates nothing', async () => {
      const before = await transactionIds();
      for (const amount of NOT_AN_AMOUNT) {
        const json = `{"transaction":{"pointOfSaleId":"${m.onlinePointOfSaleId}","amount":${amount},"currency":"DKK"},"card":${JSON.stringify(CARD)}}`;
        assertFieldRefusal(await rawPost(`${API}/moto`, json), 'transaction.amount', `amount ${amount}`);
      }
      assert.deepEqual(await transactionIds(), before, 'no transaction was created');
      const ok = await m.api.post(`${API}/moto`, { transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 999999999, currency: 'DKK' }, card: CARD });
      assert.equal(ok.status, 200, 'the largest amount is still accepted');
    });

    test('captures and refunds of non-integers leave the aggregates as they were', async () => {
      const moto = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', instantCapture: 'OFF' },
        card: CARD,
      });
      assert.equal(moto.status, 200, moto.text);
      const id = moto.body.transaction.id as string;
      for (const amount of NOT_AN_AMOUNT) {
        assertFieldRefusal(await rawPost(`${API}/transactions/${id}/capture`, `{"amount":${amount}}`), 'amount', `capture ${amount}`);
      }
      assert.equal((await m.api.post(`${API}/transactions/${id}/capture`, { amount: 1000 })).body.success, true);
      for (const amount of NOT_AN_AMOUNT) {
        assertFieldRefusal(await rawPost(`${API}/transactions/${id}/refund`, `{"amount":${amount}}`), 'amount', `refund ${amount}`);
      }
      const detail = await m.api.get(`${API}/transactions/${id}`);
      assert.deepEqual(
        { captured: detail.body.aggregates.captured, refunded: detail.body.aggregates.refunded, remaining: detail.body.aggregates.remaining },
        { captured: 1000, refunded: 0, remaining: 0 },
      );
      const tooMuch = await m.api.post(`${API}/transactions/${id}/refund`, { amount: 1001 });
      assert.equal(tooMuch.body.success, false, 'refunds stay bounded by the capture');
    });

    test('MIT amounts, batch entries and billing plan counts refuse coercible values', async () => {
      const subscriptionId = '00000000-0000-4000-8000-000000000000';
      assertFieldRefusal(
        await rawPost(`${API}/mit`, `{"subscriptionId":"${subscriptionId}","amount":"100","notificationUrl":"http://localhost/cb"}`),
        'amount',
        'mit',
      );
      const batch = await rawPost(
        `${API}/mit/batch`,
        `{"transactions":[{"subscriptionId":"${subscriptionId}","amount":true,"notificationUrl":"http://localhost/cb"}]}`,
      );
      assert.notEqual(batch.status, 500, batch.text);
      const entryError = batch.status === 422 ? batch.body.errors : batch.body.transactions?.[0]?.error?.errors;
      assert.ok(
        Object.keys(entryError ?? {}).some((field) => field.endsWith('amount')),
        `the entry's amount is refused: ${batch.text}`,
      );
      for (const maxAttempts of ['"3"', 'true', '3.5', '[3]']) {
        const res = await rawPost(
          `${API}/subscriptions/billing/plans`,
          `{"name":"Plan","amount":100,"currency":"DKK","maxAttempts":${maxAttempts},"interval":{"period":"MONTH","frequency":1}}`,
        );
        assertFieldRefusal(res, 'maxAttempts', `maxAttempts ${maxAttempts}`);
      }
    });

    test('currencies are ISO 4217 codes the service knows, in bodies and filters', async () => {
      for (const currency of ['XYZ', 'dkk', 'DK', 'AAA']) {
        const res = await m.api.post(`${API}/moto`, { transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency }, card: CARD });
        assertFieldRefusal(res, 'transaction.currency', `currency ${currency}`);
      }
      assertFieldRefusal(await m.api.get(`${API}/transactions?currency=XYZ`), 'currency', 'filter XYZ');
      for (const currency of ['JPY', 'KWD', 'EUR']) {
        const res = await m.api.post(`${API}/moto`, { transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency }, card: CARD });
        assert.equal(res.status, 200, `${currency}: ${res.text}`);
      }
    });

    test('query-string numbers are read from decimal digits only', async () => {
      for (const perPage of ['0x10', '1e1', '%2010', '+10', 'Infinity', '10.0', '', 'ten']) {
        assertFieldRefusal(await m.api.get(`${API}/transactions?perPage=${perPage}`), 'perPage', `perPage=${perPage}`);
      }
      assertFieldRefusal(await m.api.get(`${API}/transactions?amountMode=EQUAL&amount=0b11`), 'amount', 'amount=0b11');
      assertFieldRefusal(await m.api.get(`${API}/transactions/operations?page=1e3`), 'page', 'page=1e3');
      const ok = await m.api.get(`${API}/transactions?perPage=10&amountMode=EQUAL&amount=100`);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.perPage, 10);
    });

    test('the sandbox clock takes a finite, bounded move and keeps working after a refused one', async () => {
      const start = (await t.operator.get('/sandbox/v1/clock')).body.now as string;
      for (const advance of ['"Infinity"', '1e999', '"60"', 'true', '1.5', '-1', '99999999999999']) {
        const res = await t.operator.request('POST', '/sandbox/v1/clock', { raw: `{"advanceSeconds":${advance}}`, contentType: 'application/json' });
        assert.equal(res.status, 422, `advanceSeconds ${advance}: ${res.text}`);
      }
      for (const now of ['9999-12-31T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', 'Infinity']) {
        const res = await t.operator.post('/sandbox/v1/clock', { now });
        assertFieldRefusal(res, 'now', `now ${now}`);
      }
      const after = Date.parse((await t.operator.get('/sandbox/v1/clock')).body.now);
      assert.ok(after - Date.parse(start) < 5_000, 'the clock did not jump (only real time passed)');
      const moved = await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 60 });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(Date.parse(moved.body.now) - Date.parse(start) >= 60_000, true);
      assert.equal((await m.api.get(`${API}/transactions`)).status, 200, 'merchant requests still work');
    });
  });
}
