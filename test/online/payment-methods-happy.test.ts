/**
 * Payment methods, INTERFACE §11.4, on both stores: GET → {paymentMethod, card}; account-update
 * enrolment (enable, disable, idempotent); the sandbox account updater: a new expiry or a reissued
 * card taken at once and used by the next MIT, sealed like any card; subscriptions made INVALID by
 * the old expiry are ACTIVE again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, card, CARDS, startOnlineSuite, stopOnlineSuite, waitFor } from './helpers.js';
import { citBody, complete, finalTransaction, LATER_MIT_DECLINED, mitBody, ok, storedCard } from './cit-flows.js';

const PM_KEYS = ['accountUpdatesEnabled', 'createdAt', 'customerId', 'displayText', 'expiry', 'holderName', 'id', 'subType', 'type'];

for (const kind of await availableStores()) {
  describe(`payment methods and the account updater: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    const enrol = (id: string, enabled: boolean, idempotencyKey?: string) =>
      m.api.post(`${API}/payment-methods/${id}/account-updates`, { enabled }, idempotencyKey ? { idempotencyKey } : {});
    const accountUpdate = (id: string, body: Record<string, unknown>) => t.operator.post(`/sandbox/v1/payment-methods/${id}/account-update`, body);

    test('GET /payment-methods/{id} → {paymentMethod, card}; a wallet has card null', async () => {
      const stored = await storedCard(t, m, 'cust-get');
      const body = ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET');
      assert.deepEqual(Object.keys(body).sort(), ['card', 'paymentMethod']);
      assert.deepEqual(Object.keys(body.paymentMethod).sort(), PM_KEYS);
      assert.equal(body.paymentMethod.accountUpdatesEnabled, false);
      assert.equal(body.paymentMethod.displayText, '41111111XXXX1111');
      assert.equal(body.paymentMethod.expiry, '2030-12-31');
      assert.deepEqual(Object.keys(body.card).sort(), ['Country', 'Funding', 'Issuer', 'Scheme', 'Segment', 'expireMonth', 'expireYear', 'pan', 'par']);
      assert.equal(body.card.pan, '41111111XXXX1111');
      assert.deepEqual([body.card.expireMonth, body.card.expireYear], ['12', '30']);

      const init = ok(await m.api.post(`${API}/cit`, citBody(m, { customerId: 'cust-wallet', subscription: { type: 'UNSCHEDULED' } })), 'POST /cit');
      const done = ok(await complete(t, init.session.id, { paymentMethodType: 'KLARNA' }), 'complete');
      const walletId = (await finalTransaction(m, done.transaction.id)).paymentMethodId;
      const wallet = ok(await m.api.get(`${API}/payment-methods/${walletId}`), 'GET wallet');
      assert.equal(wallet.paymentMethod.type, 'KLARNA');
      assert.equal(wallet.card, null);
      assert.equal(wallet.paymentMethod.accountUpdatesEnabled, false);
    });

    test('account-updates: enable → true, again → the same (idempotent), with a replayed Idempotency-Key, then disable → false', async () => {
      const stored = await storedCard(t, m, 'cust-enrol');
      const on = ok(await enrol(stored.paymentMethodId, true, 'enrol-1'), 'enable');
      assert.deepEqual(Object.keys(on).sort(), ['card', 'paymentMethod']);
      assert.equal(on.paymentMethod.accountUpdatesEnabled, true);
      assert.equal(on.card.pan, '41111111XXXX1111');
      const replay = await enrol(stored.paymentMethodId, true, 'enrol-1');
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, on);
      assert.equal(ok(await enrol(stored.paymentMethodId, true), 'enable again').paymentMethod.accountUpdatesEnabled, true);
      assert.equal(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET').paymentMethod.accountUpdatesEnabled, true);
      const list = ok(await m.api.get(`${API}/payment-methods?customerId=cust-enrol`), 'list').items;
      assert.equal(list[0].paymentMethod.accountUpdatesEnabled, true);
      const off = ok(await enrol(stored.paymentMethodId, false, 'enrol-2'), 'disable');
      assert.equal(off.paymentMethod.accountUpdatesEnabled, false);
      assert.equal(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET').paymentMethod.accountUpdatesEnabled, false);
      // The subscription view shows the same record.
      assert.equal(ok(await m.api.get(`${API}/subscriptions/${stored.subscriptionId}`), 'GET sub').paymentMethod.accountUpdatesEnabled, false);
    });

    test('account updater, new expiry: taken at once, shown everywhere and used by the next MIT', async () => {
      const stored = await storedCard(t, m, 'cust-expiry');
      ok(await enrol(stored.paymentMethodId, true), 'enable');
      const updated = ok(await accountUpdate(stored.paymentMethodId, { expiryMonth: 3, expiryYear: 2033 }), 'account update');
      assert.equal(updated.paymentMethod.expiry, '2033-03-31');
      assert.deepEqual([updated.card.expireMonth, updated.card.expireYear], ['03', '33']);
      assert.equal(updated.card.pan, '41111111XXXX1111', 'the same card');
      assert.equal(ok(await m.api.get(`${API}/payment-methods/${stored.paymentMethodId}`), 'GET').paymentMethod.expiry, '2033-03-31');

      const path = rx.newPath('mit-expiry');
      const created = ok(await m.api.post(`${API}/mit`, mitBody(stored.subscriptionId, rx.url(path))), 'MIT').transaction;
      assert.equal(created.paymentMethodExpiry, '2033-03-31');
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.deepEqual([hit.body.card.expireMonth, hit.body.card.expireYear], ['03', '33']);
      // The CIT transaction keeps what it was paid with.
      assert.equal(ok(await m.api.get(`${API}/transactions/${stored.transactionId}`), 'GET CIT').transaction.paymentMethodExpiry, '2030-12-31');
    });

    test('account updater, reissued card: the simulator sees the new card (later MITs declined before, approved after); sealed, never in clear', async () => {
      const stored = await storedCard(t, m, 'cust-reissue', LATER_MIT_DECLINED);
      const declined = ok(await m.api.post(`${API}/mit`, mitBody(stored.subscriptionId, rx.url(rx.newPath('mit-old')))), 'MIT').transaction;
      assert.equal((await finalTransaction(m, declined.id)).errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME', 'the old card: later MITs declined');

      ok(await enrol(stored.paymentMethodId, true), 'enable');
      const updated = ok(
        await accountUpdate(stored.paymentMethodId, { card: { number: CARDS.MASTERCARD, expiryMonth: 9, expiryYear: 2034, holderName: 'New Holder' } }),
        'account update',
      );
      assert.equal(updated.paymentMethod.subType, 'Mastercard');
      assert.equal(updated.paymentMethod.displayText, '55555555XXXX4444');
      assert.equal(updated.paymentMethod.holderName, 'New Holder');
      assert.equal(updated.paymentMethod.expiry, '2034-09-30');
      assert.equal(updated.card.pan, '55555555XXXX4444');
      assert.equal(updated.card.Scheme, 'MASTERCARD');
      assert.equal(updated.paymentMethod.accountUpdatesEnabled, true);

      const path = rx.newPath('mit-new');
      const created = ok(await m.api.post(`${API}/mit`, mitBody(stored.subscriptionId, rx.url(path))), 'MIT').transaction;
      assert.equal(created.paymentMethodSubType, 'Mastercard');
      assert.equal(created.paymentMethodDisplayText, '55555555XXXX4444');
      const tx = await finalTransaction(m, created.id);
      assert.equal(tx.state, 'SUCCESS', 'the reissued card is charged');
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.card.pan, '55555555XXXX4444');

      const row = await t.runtime.store.db
        .selectFrom('paymentMethods')
        .select(['panSealed', 'card', 'displayText'])
        .where('id', '=', stored.paymentMethodId)
        .executeTakeFirstOrThrow();
      for (const value of [row.panSealed, row.card, row.displayText]) {
        assert.ok(!String(value).includes(CARDS.MASTERCARD) && !String(value).includes(LATER_MIT_DECLINED), 'no number in clear');
      }
      assert.equal(t.runtime.sealer.open(row.panSealed!), CARDS.MASTERCARD, 'the new number, sealed');
    });

    // Last: it moves this runtime's clock past a card's expiry month.
    test('an expired card updated with a future expiry: its INVALID (PAYMENT_METHOD_EXPIRED) subscription is ACTIVE again and the MIT approves', async () => {
      // An API key: the merchant's access token expires on the service clock this test moves.
      const api = t.client(ok(await m.api.post(`${API}/management/api-keys`, { name: 'account-updater' }), 'api key').key);
      const now = new Date(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
      const [year, month] = [now.getUTCFullYear(), now.getUTCMonth() + 1];
      const init = ok(
        await api.post(`${API}/cit`, citBody(m, { amount: 100, customerId: 'cust-expired', subscription: { type: 'UNSCHEDULED' } })),
        'POST /cit',
      );
      ok(await complete(t, init.session.id, { card: card(CARDS.VISA, { expiryMonth: month, expiryYear: year }) }), 'complete');
      const session = await waitFor(async () => {
        const s = (await api.get(`${API}/sessions/${init.session.id}`)).body?.session;
        return s?.state === 'COMPLETED' ? s : null;
      }, 'session COMPLETED');
      ok(await api.post(`${API}/payment-methods/${session.paymentMethodId}/account-updates`, { enabled: true }), 'enable');

      ok(await t.operator.post('/sandbox/v1/clock', { now: new Date(Date.UTC(year, month, 1, 12)).toISOString() }), 'move the clock');
      const cb = rx.url(rx.newPath('mit-expired'));
      const refused = await api.post(`${API}/mit`, mitBody(session.subscriptionId, cb));
      assert.equal(refused.status, 422, refused.text);
      assert.match(refused.body.errors.subscriptionId[0], /PAYMENT_METHOD_EXPIRED/);

      const next = new Date(Date.UTC(year + 3, 0, 1));
      const updated = ok(await accountUpdate(session.paymentMethodId, { expiryMonth: 1, expiryYear: next.getUTCFullYear() }), 'account update');
      assert.equal(updated.paymentMethod.expiry, `${next.getUTCFullYear()}-01-31`);
      const sub = ok(await api.get(`${API}/subscriptions/${session.subscriptionId}`), 'GET sub').subscription;
      assert.deepEqual([sub.state, sub.statusReason], ['ACTIVE', null]);
      const created = ok(await api.post(`${API}/mit`, mitBody(session.subscriptionId, cb)), 'MIT after the update').transaction;
      const final = await waitFor(async () => {
        const tx = (await api.get(`${API}/transactions/${created.id}`)).body?.transaction;
        return tx && (tx.state === 'SUCCESS' || tx.state === 'FAILED') ? tx : null;
      }, 'the MIT final');
      assert.equal(final.state, 'SUCCESS');
    });
  });
}
