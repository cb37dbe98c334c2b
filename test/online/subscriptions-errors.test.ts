import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { storedCard } from './cit-flows.js';

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
  describe(`subscriptions: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let id: string;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      id = (await storedCard(t, m, 'cust-err')).subscriptionId;
    });
    after(() => t.close());
    const patch = (body: unknown, sub = id) => m.api.patch(`${API}/subscriptions/${sub}`, body);

    test('PATCH body rules: amount ≥ 1, type required and from the list, SCHEDULED needs an interval', async () => {
      expect422(await patch({ amount: 0, type: 'UNSCHEDULED' }), 'amount', 'min:1');
      expect422(await patch({ type: 'UNSCHEDULED' }), 'amount', 'required');
      expect422(await patch({ amount: 100 }), 'type', 'required');
      expect422(await patch({ amount: 100, type: 'MONTHLY' }), 'type', 'in:');
      expect422(await patch({ amount: 100, type: 'SCHEDULED' }), 'interval', 'required');
      expect422(await patch({ amount: 100, type: 'SCHEDULED', interval: { period: 'DAY', frequency: 0 } }), 'interval.frequency', 'min:1');
      expect422(await patch({ amount: 100, type: 'UNSCHEDULED', expiryDate: '31-12-2030' }), 'expiryDate', 'date');
    });

    test('PATCH a DISABLED subscription → 422 on subscriptionId; it stays DISABLED', async () => {
      const other = (await storedCard(t, m, 'cust-err-2')).subscriptionId;
      assert.equal((await m.api.delete(`${API}/subscriptions/${other}`)).status, 200);
      const res = await patch({ amount: 100, type: 'UNSCHEDULED' }, other);
      expect422(res, 'subscriptionId', 'in:ACTIVE');
      assert.match(res.body.errors.subscriptionId[0], /DISABLED/);
      assert.equal((await m.api.get(`${API}/subscriptions/${other}`)).body.subscription.state, 'DISABLED');
    });

    test('ids and list queries: not a UUID → 422; unknown → 404; bad filters → 422', async () => {
      expect422(await m.api.get(`${API}/subscriptions/nope`), 'subscriptionId', 'uuid');
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await m.api.get(`${API}/subscriptions/${unknown}`),
        await m.api.delete(`${API}/subscriptions/${unknown}`),
        await patch({ amount: 1, type: 'UNSCHEDULED' }, unknown),
      ]) {
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
      }
      expect422(await m.api.get(`${API}/subscriptions?perPage=0`), 'perPage', 'min:1');
      expect422(await m.api.get(`${API}/subscriptions?perPage=501`), 'perPage', 'max:500');
      expect422(await m.api.get(`${API}/subscriptions?state=GONE`), 'state', 'in:');
      expect422(await m.api.get(`${API}/subscriptions?paymentMethodId=x`), 'paymentMethodId', 'uuid');
      expect422(await m.api.get(`${API}/subscriptions?createdAfter=2030-01-02T00:00:00Z&createdBefore=2030-01-01T00:00:00Z`), 'createdAfter');
      const past = (await m.api.get(`${API}/subscriptions?page=9`)).body;
      assert.deepEqual([past.items, past.from, past.to], [[], null, null]);
    });
  });
}
