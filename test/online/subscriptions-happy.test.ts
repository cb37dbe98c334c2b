import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestClient, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { card, CARDS, sleep, startReceiver, waitFor } from './helpers.js';
import { citBody, complete, mitBody, ok, storedCard } from './cit-flows.js';
import { storedEvents } from '../support/events.js';

/** A CIT session that stores a card expiring at the end of `expiryMonth`/`expiryYear`; returns its subscription. */
async function storedCardExpiring(t: TestRuntime, api: TestClient, m: TestMerchant, customerId: string, expiryMonth: number, expiryYear: number) {
  const init = ok(await api.post(`${API}/cit`, citBody(m, { amount: 100, customerId, subscription: { type: 'UNSCHEDULED' } })), 'POST /cit');
  ok(await complete(t, init.session.id, { card: card(CARDS.VISA, { expiryMonth, expiryYear }) }), 'complete');
  const session = await waitFor(async () => {
    const s = (await api.get(`${API}/sessions/${init.session.id}`)).body?.session;
    return s?.state === 'COMPLETED' ? s : null;
  }, 'session COMPLETED');
  return { subscriptionId: session.subscriptionId as string, paymentMethodId: session.paymentMethodId as string };
}

/** 422 VALIDATION_ERROR naming subscriptionId with the in:ACTIVE rule and a message matching `reason`. */
function expectNotChargeable(res: TestResponse, reason: RegExp) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  assert.deepEqual(Object.keys(res.body.errors), ['subscriptionId'], res.text);
  assert.ok(res.body.errors.subscriptionId[0].startsWith('[in:ACTIVE]'), res.text);
  assert.match(res.body.errors.subscriptionId[0], reason);
}

const RECORD_KEYS = [
  'createdAt',
  'currency',
  'customerId',
  'description',
  'expiryDate',
  'id',
  'interval',
  'paymentMethodId',
  'pointOfSaleId',
  'reference',
  'state',
  'statusReason',
  'type',
];

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
      assert.deepEqual(
        all.items.map((i: any) => i.subscription.id),
        [second.subscriptionId, first.subscriptionId],
      );
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
      const body = ok(
        await m.api.patch(`${API}/subscriptions/${first.subscriptionId}`, {
          amount: 4900,
          type: 'SCHEDULED',
          expiryDate: '2032-12-31',
          interval: { period: 'MONTH', frequency: 1 },
        }),
        'PATCH',
      );
      assert.equal(body.subscription.type, 'SCHEDULED');
      assert.deepEqual(body.subscription.interval, { period: 'MONTH', frequency: 1 });
      assert.equal(body.subscription.expiryDate, '2032-12-31');
      assert.equal(body.subscription.state, 'ACTIVE');
      const back = ok(
        await m.api.patch(`${API}/subscriptions/${first.subscriptionId}`, { amount: 100, type: 'UNSCHEDULED', expiryDate: null, interval: null }),
        'PATCH back',
      );
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

    test('DELETE appends one subscription.disabled.v1 to the outbox in its commit; a registered webhook receives it', async () => {
      const rx = await startReceiver();
      try {
        const path = rx.newPath('sub-disabled');
        const secret = 'whsec-subscription-disabled';
        ok(await m.api.post(`${API}/webhooks`, { url: rx.url(path), events: ['subscription.disabled.v1'], secret }), 'register webhook');
        const third = await storedCard(t, m, 'cust-3');
        const eventsOf = async () =>
          (await storedEvents(t.runtime.store)).filter(
            (e) => e.event === 'subscription.disabled.v1' && (e.data as { subscription?: { id: string } }).subscription?.id === third.subscriptionId,
          );
        assert.deepEqual(await eventsOf(), [], 'no event while ACTIVE');

        assert.equal((await m.api.delete(`${API}/subscriptions/${third.subscriptionId}`)).status, 200);
        const events = await eventsOf();
        assert.equal(events.length, 1, 'the event is in the outbox as soon as DELETE answered');
        assert.equal(events[0]!.accountId, m.accountId);
        const data = events[0]!.data as { subscription: Record<string, unknown> };
        assert.deepEqual(Object.keys(data), ['subscription']);
        assert.deepEqual(Object.keys(data.subscription).sort(), RECORD_KEYS);
        assert.equal(data.subscription.state, 'DISABLED');
        assert.equal(data.subscription.statusReason, 'DISABLED_BY_MERCHANT');
        assert.equal(data.subscription.paymentMethodId, third.paymentMethodId);
        assert.equal(data.subscription.customerId, 'cust-3');

        assert.equal((await m.api.delete(`${API}/subscriptions/${third.subscriptionId}`)).status, 200);
        assert.equal((await eventsOf()).length, 1, 'a second DELETE of a DISABLED subscription writes no second event');

        const mine = () => rx.at(path).filter((h) => h.body?.data?.subscription?.id === third.subscriptionId);
        const hit = await waitFor(() => mine()[0], 'the webhook delivery');
        assert.equal(hit.headers.authorization, secret);
        assert.deepEqual(hit.body, { event: 'subscription.disabled.v1', data: events[0]!.data });
        await sleep(300);
        assert.equal(mine().length, 1, 'delivered once');
      } finally {
        await rx.close();
      }
    });
  });

  describe(`subscriptions: INVALID when the payment method is deleted or expires (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    // An API key, not the 8-hour access token: the expiry test moves the service clock by days.
    let api: TestClient;
    const cb = 'http://localhost:9/cb';
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant({ physical: false });
      api = t.client(ok(await m.api.post(`${API}/management/api-keys`, { name: 'subscriptions' }), 'api key').key);
    });
    after(() => t.close());
    const storedRow = (id: string) =>
      t.runtime.store.db.selectFrom('subscriptions').select(['state', 'statusReason']).where('id', '=', id).executeTakeFirstOrThrow();

    test('DELETE /payment-methods/{id} makes its subscription INVALID (PAYMENT_METHOD_DELETED) in that commit; MIT on it → 422 on subscriptionId', async () => {
      const gone = await storedCard(t, m, 'cust-gone');
      const kept = await storedCard(t, m, 'cust-kept');
      assert.equal(ok(await api.get(`${API}/subscriptions/${gone.subscriptionId}`), 'GET').subscription.state, 'ACTIVE');

      const del = await api.delete(`${API}/payment-methods/${gone.paymentMethodId}`);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(
        { ...(await storedRow(gone.subscriptionId)) },
        { state: 'INVALID', statusReason: 'PAYMENT_METHOD_DELETED' },
        'stored by the delete itself, before any read',
      );

      const got = ok(await api.get(`${API}/subscriptions/${gone.subscriptionId}`), 'GET');
      assert.equal(got.subscription.state, 'INVALID');
      assert.equal(got.subscription.statusReason, 'PAYMENT_METHOD_DELETED');
      assert.equal(got.subscription.paymentMethodId, gone.paymentMethodId);
      assert.equal(got.paymentMethod, null, 'a deleted payment method is not shown');
      const invalid = ok(await api.get(`${API}/subscriptions?state=INVALID`), 'list').items.map((i: any) => i.subscription.id);
      assert.deepEqual(invalid, [gone.subscriptionId]);

      expectNotChargeable(await api.post(`${API}/mit`, mitBody(gone.subscriptionId, cb)), /INVALID \(PAYMENT_METHOD_DELETED\)/);
      const charged = ok(await api.get(`${API}/transactions?subscriptionId=${gone.subscriptionId}`), 'list').items;
      assert.equal(charged.length, 1, 'only the CIT payment: the refused MIT created nothing');

      assert.equal(ok(await api.get(`${API}/subscriptions/${kept.subscriptionId}`), 'GET').subscription.state, 'ACTIVE', 'other payment methods are untouched');
      assert.equal((await api.post(`${API}/mit`, mitBody(kept.subscriptionId, cb))).status, 200);
    });

    // Last: it moves this runtime's clock into the next month.
    test('a card past its expiry on the service clock → INVALID (PAYMENT_METHOD_EXPIRED) by the daily sweep; MIT on it → 422 on subscriptionId', async () => {
      const now = new Date(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
      const [year, month] = [now.getUTCFullYear(), now.getUTCMonth() + 1];
      const expiring = await storedCardExpiring(t, api, m, 'cust-expiring', month, year);
      const lasting = await storedCard(t, m, 'cust-lasting');
      const lastDay = new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
      assert.equal(ok(await api.get(`${API}/payment-methods/${expiring.paymentMethodId}`), 'GET pm').paymentMethod.expiry, lastDay);
      assert.equal(ok(await api.get(`${API}/subscriptions/${expiring.subscriptionId}`), 'GET').subscription.state, 'ACTIVE', 'usable through its expiry month');

      // The first day after the expiry month, at noon: the card's expiry day is now in the past.
      const after = new Date(Date.UTC(year, month, 1, 12)).toISOString();
      ok(await t.operator.post('/sandbox/v1/clock', { now: after }), 'move the clock');
      // Nothing reads the subscription here: the daily payment-method-expiry job changes the stored row.
      const row = await waitFor(async () => {
        const r = await storedRow(expiring.subscriptionId);
        return r.state === 'INVALID' ? r : null;
      }, 'the expiry sweep');
      assert.equal(row.statusReason, 'PAYMENT_METHOD_EXPIRED');

      const got = ok(await api.get(`${API}/subscriptions/${expiring.subscriptionId}`), 'GET');
      assert.equal(got.subscription.state, 'INVALID');
      assert.equal(got.subscription.statusReason, 'PAYMENT_METHOD_EXPIRED');
      assert.equal(got.paymentMethod.id, expiring.paymentMethodId, 'an expired payment method is still shown');
      expectNotChargeable(await api.post(`${API}/mit`, mitBody(expiring.subscriptionId, cb)), /INVALID \(PAYMENT_METHOD_EXPIRED\)/);

      assert.deepEqual({ ...(await storedRow(lasting.subscriptionId)) }, { state: 'ACTIVE', statusReason: null }, 'a card valid until 2030 is untouched');
      assert.equal((await api.post(`${API}/mit`, mitBody(lasting.subscriptionId, cb))).status, 200);
    });
  });
}
