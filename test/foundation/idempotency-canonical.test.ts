/**
 * Idempotency on the canonical route (issue 9, point 6): the scope is (merchant, method, matched
 * route with its decoded parameters), so every spelling of one request replays the first answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

const CARD = { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' };
const percentEncodeAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');

for (const kind of await availableStores()) {
  describe(`idempotency scope is the canonical route (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('one key and one body on /moto, /mot%6F and /%6Doto create one transaction', async () => {
      const body = { transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1234, currency: 'DKK', instantCapture: 'OFF' }, card: CARD };
      const answers = [];
      for (const path of ['/moto', '/mot%6F', '/%6Doto', '/%6D%6F%74%6F']) {
        answers.push(await m.api.post(`${API}${path}`, body, { idempotencyKey: 'moto-spellings' }));
      }
      for (const res of answers) assert.equal(res.status, 200, res.text);
      const ids = new Set(answers.map((res) => res.body.transaction.id));
      assert.equal(ids.size, 1, `one transaction, got ${[...ids].join(', ')}`);
      assert.deepEqual(
        answers.map((res) => res.headers['idempotent-replayed'] ?? null),
        [null, 'true', 'true', 'true'],
      );
      const list = await m.api.get(`${API}/transactions?amountMode=EQUAL&amount=1234`);
      assert.equal(list.body.items.length, 1);
    });

    test('a capture on a percent-encoded transaction id is the same request as on the plain id', async () => {
      const moto = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', instantCapture: 'OFF' },
        card: CARD,
      });
      assert.equal(moto.status, 200, moto.text);
      const id = moto.body.transaction.id as string;
      const first = await m.api.post(`${API}/transactions/${id}/capture`, { amount: 400 }, { idempotencyKey: 'capture-spellings' });
      const second = await m.api.post(`${API}/transactions/${percentEncodeAll(id)}/capture`, { amount: 400 }, { idempotencyKey: 'capture-spellings' });
      const third = await m.api.post(
        `${API}/transactions/${id.slice(0, 5)}${percentEncodeAll(id.slice(5))}/%63apture`,
        { amount: 400 },
        { idempotencyKey: 'capture-spellings' },
      );
      assert.equal(first.body.success, true, first.text);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(third.headers['idempotent-replayed'], 'true');
      assert.equal(second.body.operationId, first.body.operationId);
      const detail = await m.api.get(`${API}/transactions/${id}`);
      assert.equal(detail.body.aggregates.captured, 400, 'captured once');
    });

    test('the same key on another route or another transaction is another request', async () => {
      const a = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 500, currency: 'DKK', instantCapture: 'OFF' },
        card: CARD,
      });
      const b = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 500, currency: 'DKK', instantCapture: 'OFF' },
        card: CARD,
      });
      const onA = await m.api.post(`${API}/transactions/${a.body.transaction.id}/capture`, { amount: 100 }, { idempotencyKey: 'shared-key' });
      const onB = await m.api.post(`${API}/transactions/${b.body.transaction.id}/capture`, { amount: 100 }, { idempotencyKey: 'shared-key' });
      assert.equal(onA.body.success, true);
      assert.equal(onB.body.success, true);
      assert.equal(onB.headers['idempotent-replayed'], undefined);
      assert.notEqual(onB.body.operationId, onA.body.operationId);
    });
  });
}
