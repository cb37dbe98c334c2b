import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock, type CallbackReceiver, CARDS, motoBody, sleep, startOnlineSuite, stopOnlineSuite, storedCardId, waitFor } from './helpers.js';

const NOTIFICATION_KEYS = ['acquirerAgreement', 'aggregates', 'card', 'operations', 'sca', 'session', 'subscription', 'transaction'];
const CARD_KEYS = ['Country', 'Funding', 'Issuer', 'Scheme', 'Segment', 'expireMonth', 'expireYear', 'pan', 'par'];

for (const kind of await availableStores()) {
  describe(`online payments, happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    test('MOTO with 4111… → NotificationWebhook: SUCCESS, type MOTO, masked card, authorized aggregate', async () => {
      const res = await m.api.post(`${API}/moto`, motoBody(m, { amount: 1999 }));
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.deepEqual(Object.keys(body).sort(), NOTIFICATION_KEYS);
      assert.equal(body.transaction.state, 'SUCCESS');
      assert.equal(body.transaction.type, 'MOTO');
      assert.equal(body.transaction.amount, 1999);
      assert.equal(body.transaction.paymentMethodSubType, 'Visa');
      assert.equal(body.transaction.paymentMethodDisplayText, '41111111XXXX1111');
      assert.equal(body.transaction.paymentMethodExpiry, '2030-12-31');
      assert.equal(body.transaction.externalStatusCodes.acquirer, '00');
      assert.deepEqual(Object.keys(body.card).sort(), CARD_KEYS);
      assert.equal(body.card.pan, '41111111XXXX1111');
      assert.deepEqual([body.card.expireMonth, body.card.expireYear], ['12', '30']);
      assert.equal(body.card.Scheme, 'VISA');
      assert.deepEqual(body.aggregates, { authorized: 1999, captured: 0, refunded: 0, voided: 0, remaining: 1999, paidOut: 0 });
      assert.deepEqual(
        body.operations.map((o: any) => [o.type, o.state]),
        [['AUTHORIZATION', 'SUCCESS']],
      );
      assert.deepEqual(body.sca, { rejected: false, type: 'UNKNOWN', verification: 'NONE' });
      const detail = await m.api.get(`${API}/transactions/${body.transaction.id}`);
      assert.equal(detail.body.transaction.state, 'SUCCESS');
    });

    test('Mastercard is detected as its brand', async () => {
      const res = await m.api.post(`${API}/moto`, motoBody(m, { number: CARDS.MASTERCARD }));
      assert.equal(res.body.transaction.paymentMethodSubType, 'Mastercard');
      assert.equal(res.body.card.pan, '55555555XXXX4444');
    });

    /** Outbox events naming a transaction, by name (two commits can share a millisecond, so not by time). */
    const eventsOf = async (transactionId: string) =>
      (await t.runtime.store.db.selectFrom('events').select(['event', 'data']).where('accountId', '=', m.accountId).execute())
        .filter((e) => JSON.parse(e.data).transaction?.id === transactionId)
        .map((e) => e.event)
        .sort();

    test('instantCapture NO_VOID captures at once; with 4000…0259 the failed capture keeps the authorization', async () => {
      const ok = (await m.api.post(`${API}/moto`, motoBody(m, { amount: 700, instantCapture: 'NO_VOID' }))).body;
      assert.deepEqual([ok.aggregates.authorized, ok.aggregates.captured, ok.aggregates.remaining], [700, 700, 0]);
      const failed = (await m.api.post(`${API}/moto`, motoBody(m, { amount: 700, number: CARDS.CAPTURE_DECLINED, instantCapture: 'NO_VOID' }))).body;
      assert.equal(failed.transaction.state, 'SUCCESS');
      assert.deepEqual(
        failed.operations.map((o: any) => [o.type, o.state]),
        [
          ['AUTHORIZATION', 'SUCCESS'],
          ['CAPTURE', 'FAILED'],
        ],
      );
      assert.equal(failed.operations[1].errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.deepEqual([failed.aggregates.captured, failed.aggregates.voided, failed.aggregates.remaining], [0, 0, 700]);
    });

    test('instantCapture VOID: a declined capture voids the authorization', async () => {
      const body = (await m.api.post(`${API}/moto`, motoBody(m, { amount: 800, number: CARDS.CAPTURE_DECLINED, instantCapture: 'VOID' }))).body;
      assert.deepEqual(
        body.operations.map((o: any) => [o.type, o.state]),
        [
          ['AUTHORIZATION', 'SUCCESS'],
          ['CAPTURE', 'FAILED'],
          ['VOID', 'SUCCESS'],
        ],
      );
      assert.deepEqual([body.aggregates.authorized, body.aggregates.captured, body.aggregates.voided, body.aggregates.remaining], [800, 0, 800, 0]);
      assert.deepEqual(await eventsOf(body.transaction.id), ['transaction.success.v1', 'transaction.voided.v1'].sort());
    });

    test('an instant capture writes transaction.captured.v1 besides transaction.success.v1, with the captured aggregate', async () => {
      const body = (await m.api.post(`${API}/moto`, motoBody(m, { amount: 900, instantCapture: 'NO_VOID' }))).body;
      assert.deepEqual(await eventsOf(body.transaction.id), ['transaction.captured.v1', 'transaction.success.v1']);
      const [captured] = await t.runtime.store.db
        .selectFrom('events')
        .select('data')
        .where('event', '=', 'transaction.captured.v1')
        .where('data', 'like', `%${body.transaction.id}%`)
        .execute();
      const data = JSON.parse(captured!.data);
      assert.equal(data.aggregates.captured, 900);
      assert.equal(data.operation.type, 'CAPTURE');
    });

    test('4000…0119 times out first: the MOTO answer is PROCESSING, the retry approves it and one callback follows', async () => {
      const path = rx.newPath('timeout');
      const res = await m.api.post(`${API}/moto`, motoBody(m, { number: CARDS.TIMEOUT_THEN_APPROVED, notificationUrl: rx.url(path) }));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.state, 'PROCESSING', 'a timeout is not a decline');
      assert.equal(res.body.transaction.errorCode, null);
      await advanceClock(t, 10);
      const hit = await waitFor(() => rx.at(path)[0], 'callback after the retry');
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      const detail = (await m.api.get(`${API}/transactions/${res.body.transaction.id}`)).body;
      assert.equal(detail.transaction.state, 'SUCCESS');
      assert.equal(detail.aggregates.authorized, 1000);
      await sleep(300);
      assert.equal(rx.at(path).length, 1);
    });

    test('POST /payout → PENDING PAYOUT transaction, then one callback with the POS Authorization and X-Delivery-Id', async () => {
      const paymentMethodId = await storedCardId(m);
      const path = rx.newPath('payout');
      const res = await m.api.post(`${API}/payout`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 750,
        currency: 'DKK',
        paymentMethodId,
        notificationUrl: rx.url(path),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.type, 'PAYOUT');
      assert.ok(['PENDING', 'PROCESSING'].includes(res.body.transaction.state));
      const hit = await waitFor(() => rx.at(path)[0], 'payout callback');
      assert.match(String(hit.headers.authorization), /^Bearer cb-/);
      assert.match(String(hit.headers['content-type']), /^application\/json/);
      assert.ok(hit.headers['x-delivery-id']);
      assert.equal(hit.body.transaction.id, res.body.transaction.id);
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.equal(hit.body.aggregates.paidOut, 750);
      const list = await waitFor(async () => {
        const r = await m.api.get(`${API}/transactions/${res.body.transaction.id}/notifications`);
        return r.body.notifications[0]?.state === 'DELIVERED' ? r.body : null;
      }, 'notification DELIVERED');
      assert.equal(list.notifications.length, 1);
      assert.equal(list.notifications[0].id, hit.headers['x-delivery-id']);
      assert.deepEqual(
        list.notifications[0].attempts.map((a: any) => a.statusCode),
        [200],
      );
    });

    test('POST /payout-sync → NotificationWebhook with paidOut', async () => {
      const paymentMethodId = await storedCardId(m);
      const res = await m.api.post(`${API}/payout-sync`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 640, currency: 'DKK', paymentMethodId });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.type, 'PAYOUT');
      assert.equal(res.body.transaction.state, 'SUCCESS');
      assert.equal(res.body.aggregates.paidOut, 640);
      assert.deepEqual(
        res.body.operations.map((o: any) => o.type),
        ['PAYOUT'],
      );
    });

    test('a failing callback is retried on the schedule with one X-Delivery-Id; every attempt is recorded; resend sends it again', async () => {
      const path = rx.newPath('retry');
      rx.respond(path, [500, 500]);
      const res = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url(path) }));
      await waitFor(() => rx.at(path).length >= 2, 'attempts 1 and 2 (at once)');
      await sleep(300);
      assert.equal(rx.at(path).length, 2, 'attempt 3 waits 2^3 s');
      await waitFor(async () => {
        if (rx.at(path).length >= 3) return true;
        await advanceClock(t, 9);
        return null;
      }, 'attempt 3');
      const hits = rx.at(path);
      assert.deepEqual(
        hits.map((h) => h.status),
        [500, 500, 200],
      );
      assert.equal(new Set(hits.map((h) => h.headers['x-delivery-id'])).size, 1, 'stable X-Delivery-Id');
      assert.equal(new Set(hits.map((h) => h.text)).size, 1, 'the same body on every attempt');
      const txId = res.body.transaction.id;
      // The receiver sees attempt 3 before the service has recorded its answer: wait for that commit.
      const notifications = await waitFor(async () => {
        const list = (await m.api.get(`${API}/transactions/${txId}/notifications`)).body.notifications;
        return list?.[0]?.state === 'DELIVERED' ? list : null;
      }, 'the delivery recorded as DELIVERED');
      assert.equal(notifications.length, 1);
      assert.deepEqual(
        notifications[0].attempts.map((a: any) => a.statusCode),
        [500, 500, 200],
      );
      await advanceClock(t, 3600);
      await sleep(300);
      assert.equal(rx.at(path).length, 3, 'nothing after a 2xx');
      const resend = await m.api.post(`${API}/transactions/${txId}/notifications/${notifications[0].id}/resend`);
      assert.equal(resend.status, 200, resend.text);
      await waitFor(() => rx.at(path).length === 4, 'the resent callback');
      assert.equal(rx.at(path)[3]!.headers['x-delivery-id'], notifications[0].id);
    });

    test('payment methods: get (masked), list by customer, delete → 404', async () => {
      const customerId = `cust-${Date.now()}`;
      const id = await storedCardId(m, CARDS.VISA, customerId);
      const got = await m.api.get(`${API}/payment-methods/${id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(Object.keys(got.body).sort(), ['card', 'paymentMethod']);
      assert.deepEqual(Object.keys(got.body.paymentMethod).sort(), [
        'accountUpdatesEnabled',
        'createdAt',
        'customerId',
        'displayText',
        'expiry',
        'holderName',
        'id',
        'subType',
        'type',
      ]);
      assert.equal(got.body.paymentMethod.displayText, '41111111XXXX1111');
      assert.equal(got.body.paymentMethod.accountUpdatesEnabled, false);
      assert.equal(got.body.card.pan, '41111111XXXX1111');
      assert.equal(got.body.paymentMethod.type, 'CARD');
      assert.equal(got.body.paymentMethod.customerId, customerId);
      const list = await m.api.get(`${API}/payment-methods?customerId=${customerId}`);
      assert.equal(list.body.total, 1);
      assert.equal(list.body.items[0].paymentMethod.id, id);
      const del = await m.api.delete(`${API}/payment-methods/${id}`);
      assert.equal(del.status, 200);
      assert.equal(del.text, '');
      assert.equal((await m.api.get(`${API}/payment-methods/${id}`)).status, 404);
      assert.equal((await m.api.get(`${API}/payment-methods?customerId=${customerId}`)).body.total, 0);
    });
  });
}
