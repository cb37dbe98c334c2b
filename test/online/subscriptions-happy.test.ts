import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS } from './helpers.js';
import { ok, storedCard } from './cit-flows.js';

const RECORD_KEYS = ['createdAt', 'currency', 'customerId', 'description', 'expiryDate', 'id', 'interval', 'paymentMethodId', 'pointOfSaleId', 'reference', 'state', 'statusReason', 'type'];

for (const kind of await availableStores()) {
  describe(`subscriptions: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let first: Awaited<ReturnType<typeof storedCard>>;
    let second: Awaited<ReturnType<typeof storedCard>>;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      first = await storedCard(t, m, 'cust-1', CARDS.VISA, { type: 'UNSCHEDULED', reference: 'ref-1' });
      second = await storedCard(t, m, 'cust-2', CARDS.MASTERCARD, { type: 'SCHEDULED', interval: { period: 'WEEK', frequency: 2 } });
    });
    after(() => t.close());

    test('GET → {subscription, paymentMethod} with exactly the record fields', async () => {
      const body = ok(await m.api.get(`${API}/subscriptions/${first.subscriptionId}`), 'GET');
      assert.deepEqual(Object.keys(body).sort(), ['paymentMethod', 'subscription']);
      assert.deepEqual(Object.keys(body.subscription).sort(), RECORD_KEYS);
      assert.equal(body.subscription.state, 'ACTIVE');
      assert.equal(body.subscription.type, 'UNSCHEDULED');
      assert.equal(body.subscription.interval, null);
      assert.equal(body.subscription.reference, 'ref-1');
      assert.equal(body.subscription.currency, 'DKK');
      assert.equal(body.subscription.pointOfSaleId, m.onlinePointOfSaleId);
      assert.equal(body.subscription.statusReason, null);
      assert.equal(body.paymentMethod.id, first.paymentMethodId);
      assert.equal(body.paymentMethod.subType, 'Visa');
    });

    test('list: page envelope of {subscription, paymentMethod}, newest first, every filter combinable', async () => {
      const all = ok(await m.api.get(`${API}/subscriptions`), 'list');
      assert.equal(all.total, 2);
      assert.equal(all.perPage, 25);
      assert.deepEqual(all.items.map((i: any) => i.subscription.id), [second.subscriptionId, first.subscriptionId]);
      const q = async (query: string) => ok(await m.api.get(`${API}/subscriptions?${query}`), query).items.map((i: any) => i.subscription.id);
      assert.deepEqual(await q('customerId=cust-1'), [first.subscriptionId]);
      assert.deepEqual(await q('reference=ref-1'), [first.subscriptionId]);
      assert.deepEqual(await q('type=SCHEDULED'), [second.subscriptionId]);
      assert.deepEqual(await q(`paymentMethodId=${second.paymentMethodId}`), [second.subscriptionId]);
      assert.deepEqual(await q(`pointOfSaleId=${m.onlinePointOfSaleId}&currency=DKK&state=ACTIVE`), [second.subscriptionId, first.subscriptionId]);
      assert.deepEqual(await q('currency=EUR'), []);
      assert.deepEqual(await q('state=DISABLED'), []);
      const created = ok(await m.api.get(`${API}/subscriptions/${second.subscriptionId}`), 'GET').subscription.createdAt;
      assert.deepEqual(await q(`createdAfter=${created}`), [second.subscriptionId], 'createdAfter is inclusive');
      assert.deepEqual(await q(`createdBefore=${encodeURIComponent(created)}&type=SCHEDULED`), [second.subscriptionId], 'createdBefore is inclusive');
      const page2 = ok(await m.api.get(`${API}/subscriptions?perPage=1&page=2`), 'page 2');
      assert.equal(page2.lastPage, 2);
      assert.equal(page2.from, 2);
      assert.equal(page2.items[0].subscription.id, first.subscriptionId);
    });

    test('PATCH an ACTIVE subscription: type, interval, expiryDate; the record shows them', async () => {
      const body = ok(await m.api.patch(`${API}/subscriptions/${first.subscriptionId}`, {
        amount: 4900, type: 'SCHEDULED', expiryDate: '2032-12-31', interval: { period: 'MONTH', frequency: 1 },
      }), 'PATCH');
      assert.equal(body.subscription.type, 'SCHEDULED');
      assert.deepEqual(body.subscription.interval, { period: 'MONTH', frequency: 1 });
      assert.equal(body.subscription.expiryDate, '2032-12-31');
      assert.equal(body.subscription.state, 'ACTIVE');
      const back = ok(await m.api.patch(`${API}/subscriptions/${first.subscriptionId}`, { amount: 100, type: 'UNSCHEDULED', expiryDate: null, interval: null }), 'PATCH back');
      assert.equal(back.subscription.interval, null);
      assert.equal(back.subscription.expiryDate, null);
    });

    test('DELETE → 200 with an empty body; DISABLED with a reason; a second DELETE answers the same', async () => {
      const res = await m.api.delete(`${API}/subscriptions/${second.subscriptionId}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
      const got = ok(await m.api.get(`${API}/subscriptions/${second.subscriptionId}`), 'GET').subscription;
      assert.equal(got.state, 'DISABLED');
      assert.equal(got.statusReason, 'DISABLED_BY_MERCHANT');
      assert.equal((await m.api.delete(`${API}/subscriptions/${second.subscriptionId}`)).status, 200);
      const disabled = ok(await m.api.get(`${API}/subscriptions?state=DISABLED`), 'list').items.map((i: any) => i.subscription.id);
      assert.deepEqual(disabled, [second.subscriptionId]);
    });
  });
}
