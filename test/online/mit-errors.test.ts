import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, ok, storedCard } from './cit-flows.js';

function expect422(res: TestResponse, field: string, rule?: string) {
  assert.equal(res.status, 422, res.text);
  const messages: string[] = res.body.errors?.[field] ?? [];
  assert.ok(messages.length > 0, `errors name ${field}: ${res.text}`);
  if (rule)
    assert.ok(
      messages.some((msg) => msg.startsWith(`[${rule}`)),
      `${field} carries [${rule}…]: ${res.text}`,
    );
}

for (const kind of await availableStores()) {
  describe(`MIT: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let subscriptionId: string;
    const cb = 'http://localhost:9/cb';
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      subscriptionId = (await storedCard(t, m, 'cust-e')).subscriptionId;
    });
    after(() => t.close());
    const mit = (overrides: Record<string, unknown>) => m.api.post(`${API}/mit`, mitBody(subscriptionId, cb, overrides));

    test('schema rules: required, int, min, max, uuid, url, text length', async () => {
      const res = await m.api.post(`${API}/mit`, {});
      for (const field of ['subscriptionId', 'amount', 'notificationUrl']) expect422(res, field, 'required');
      expect422(await mit({ amount: 10.5 }), 'amount', 'int');
      expect422(await mit({ amount: -1 }), 'amount', 'min:0');
      expect422(await mit({ amount: 1_000_000_000 }), 'amount', 'max:999999999');
      expect422(await m.api.post(`${API}/mit`, mitBody('nope', cb)), 'subscriptionId', 'uuid');
      expect422(await mit({ notificationUrl: 'not a url' }), 'notificationUrl', 'url');
      expect422(await mit({ textOnStatement: 'x'.repeat(40) }), 'textOnStatement', 'max:39');
      expect422(await mit({ instantCapture: 'LATER' }), 'instantCapture', 'in:');
    });

    test('business rules: callback off the approved domain, unknown subscription, DISABLED subscription → 422', async () => {
      expect422(await mit({ notificationUrl: 'http://example.com/cb' }), 'notificationUrl', 'url');
      expect422(await m.api.post(`${API}/mit`, mitBody('00000000-0000-4000-8000-000000000000', cb)), 'subscriptionId', 'in:ACTIVE');
      const other = (await storedCard(t, m, 'cust-off')).subscriptionId;
      assert.equal((await m.api.delete(`${API}/subscriptions/${other}`)).status, 200);
      const res = await m.api.post(`${API}/mit`, mitBody(other, cb));
      expect422(res, 'subscriptionId', 'in:ACTIVE');
      assert.match(res.body.errors.subscriptionId[0], /DISABLED/);
      const list = ok(await m.api.get(`${API}/transactions?subscriptionId=${other}`), 'list');
      assert.equal(list.items.length, 1, 'only the CIT payment: the refused MIT created nothing');
    });

    test('a subscription past its expiryDate cannot be charged', async () => {
      const sub = (await storedCard(t, m, 'cust-exp', undefined, { type: 'UNSCHEDULED', expiryDate: '2000-01-01' })).subscriptionId;
      expect422(await m.api.post(`${API}/mit`, mitBody(sub, cb)), 'subscriptionId', 'in:ACTIVE');
    });

    test('batch: empty, over 500 entries, or not an array → 422 on transactions', async () => {
      expect422(await m.api.post(`${API}/mit/batch`, { transactions: [] }), 'transactions', 'min:1');
      const many = Array.from({ length: 501 }, () => mitBody(subscriptionId, cb));
      expect422(await m.api.post(`${API}/mit/batch`, { transactions: many }), 'transactions', 'max:500');
      expect422(await m.api.post(`${API}/mit/batch`, {}), 'transactions', 'required');
    });

    test('batch: every entry is checked on its own with the single request rules', async () => {
      const body = ok(
        await m.api.post(`${API}/mit/batch`, {
          transactions: [
            mitBody(subscriptionId, cb, { amount: 'ten', reference: 'r-1' }),
            mitBody('nope', 'http://example.com/x', { reference: 'r-2' }),
            mitBody(subscriptionId, 'http://example.com/x', { reference: 'r-3' }),
          ],
        }),
        'batch',
      );
      const [a, b, c] = body.transactions;
      assert.deepEqual(Object.keys(a.error.errors), ['amount']);
      assert.ok(a.error.errors.amount[0].startsWith('[int]'));
      assert.deepEqual(Object.keys(b.error.errors).sort(), ['subscriptionId']);
      assert.ok(c.error.errors.notificationUrl[0].startsWith('[url]'));
      assert.deepEqual(
        body.transactions.map((r: any) => r.reference),
        ['r-1', 'r-2', 'r-3'],
      );
      assert.ok(body.transactions.every((r: any) => r.transaction === null));
    });
  });
}
