import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock, type CallbackReceiver, card, CARDS, startOnlineSuite, stopOnlineSuite, waitFor } from './helpers.js';
import { citBody, complete, formCard, ok, postForm } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`CIT sessions: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    test('POST /cit → PENDING session with the point of sale defaults, a payment window URL, the script and key', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m)), 'POST /cit');
      const s = body.session;
      assert.equal(s.state, 'PENDING');
      assert.equal(s.amount, 2500);
      assert.equal(s.currency, 'DKK');
      assert.equal(s.pointOfSaleId, m.onlinePointOfSaleId);
      assert.equal(s.scaMode, 'SKIP');
      assert.equal(s.instantCapture, 'OFF');
      assert.equal(s.maxAttempts, 3);
      assert.equal(s.timeout, 30);
      assert.equal(Date.parse(s.expiresAt) - Date.parse(s.createdAt), 30 * 60_000, 'expires after the default 30 minutes');
      assert.ok(body.paymentWindowUrl.startsWith('http://127.0.0.1:8080/pay/'), body.paymentWindowUrl);
      assert.ok(body.paymentWindowUrl.endsWith(body.key));
      assert.equal(body.javascript, 'http://127.0.0.1:8080/pay/checkout.js');
      const again = ok(await m.api.get(`${API}/sessions/${s.id}`), 'GET session').session;
      assert.deepEqual(again, s);

      const script = await t.client(null).get('/pay/checkout.js');
      assert.equal(script.status, 200);
      assert.match(String(script.headers['content-type']), /javascript/);
      assert.match(script.text, /PaymentWindow/);
    });

    test('the payment window is an accessible HTML page with merchant, formatted amount and a labelled card form', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { amount: 123456 })), 'POST /cit');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'self' http:\/\/localhost:\*/);
      assert.match(page.text, /<html lang="en">/);
      assert.match(page.text, /Web shop/);
      assert.match(page.text, /1,234\.56 DKK/);
      for (const label of ['Card number', 'Expiry month', 'Expiry year', 'Security code (CVC)', 'Name on card'])
        assert.ok(page.text.includes(`>${label}</label>`), label);
      assert.match(page.text, /autocomplete="cc-number"/);
    });

    test('paying in the window with 4111… → 303 to successUrl; COMPLETED session, ACTIVE subscription, stored card, one callback', async () => {
      const path = rx.newPath('cit');
      const customerId = `cust-${Date.now()}`;
      const body = ok(
        await m.api.post(
          `${API}/cit`,
          citBody(m, {
            customerId,
            notificationUrl: rx.url(path),
            successUrl: 'https://shop.localhost/thanks',
            failureUrl: 'https://shop.localhost/sorry',
            subscription: { type: 'SCHEDULED', reference: 'plan-a', interval: { period: 'MONTH', frequency: 1 }, expiryDate: '2031-01-31' },
          }),
        ),
        'POST /cit',
      );
      const res = await postForm(t, body.paymentWindowUrl, formCard('4111 1111 1111 1111'));
      assert.equal(res.status, 303, res.text);
      assert.equal(res.headers.location, 'https://shop.localhost/thanks');

      const session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET session').session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(session.attempts, 1);
      const tx = ok(await m.api.get(`${API}/transactions/${session.transactionId}`), 'GET tx').transaction;
      assert.equal(tx.state, 'SUCCESS');
      assert.equal(tx.sessionId, session.id);
      assert.equal(tx.subscriptionId, session.subscriptionId);
      assert.equal(tx.paymentMethodId, session.paymentMethodId);

      const sub = ok(await m.api.get(`${API}/subscriptions/${session.subscriptionId}`), 'GET subscription');
      assert.equal(sub.subscription.state, 'ACTIVE');
      assert.equal(sub.subscription.type, 'SCHEDULED');
      assert.deepEqual(sub.subscription.interval, { period: 'MONTH', frequency: 1 });
      assert.equal(sub.subscription.expiryDate, '2031-01-31');
      assert.equal(sub.subscription.reference, 'plan-a');
      assert.equal(sub.subscription.customerId, customerId);
      assert.equal(sub.paymentMethod.id, session.paymentMethodId);
      assert.equal(sub.paymentMethod.displayText, '41111111XXXX1111');

      const hit = await waitFor(() => rx.at(path)[0], 'CIT callback');
      assert.equal(hit.body.session.state, 'COMPLETED');
      assert.equal(hit.body.subscription.id, session.subscriptionId);
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      const window = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(window.text, /the payment is complete/);
    });

    test('a declined card shows a clear message and lets the customer retry; the declined card is not kept', async () => {
      const customerId = `cust-retry-${Date.now()}`;
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { customerId })), 'POST /cit');
      const declined = await postForm(t, body.paymentWindowUrl, formCard(CARDS.INSUFFICIENT_FUNDS));
      assert.equal(declined.status, 200);
      assert.match(declined.text, /role="alert"/);
      assert.match(declined.text, /not enough funds/);
      assert.match(declined.text, /You have 2 attempts/);
      let session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'PENDING');
      assert.equal(session.errorCode, 'INSUFFICIENT_FUNDS');
      const approved = await postForm(t, body.paymentWindowUrl, formCard(CARDS.MASTERCARD));
      assert.equal(approved.status, 200, 'no successUrl: the window itself confirms');
      assert.match(approved.text, /the payment is complete/);
      session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(session.attempts, 2);
      const list = ok(await m.api.get(`${API}/transactions?sessionId=${body.session.id}`), 'list')
        .items.map((i: any) => i.transaction.state)
        .sort();
      assert.deepEqual(list, ['FAILED', 'SUCCESS']);
      const methods = ok(await m.api.get(`${API}/payment-methods?customerId=${customerId}`), 'methods').items;
      assert.deepEqual(
        methods.map((i: any) => i.paymentMethod.subType),
        ['Mastercard'],
      );
    });

    test('after maxAttempts declines the session is EXPIRED and the window sends the customer to failureUrl', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { maxAttempts: 2, failureUrl: 'http://localhost/failed' })), 'POST /cit');
      assert.equal((await postForm(t, body.paymentWindowUrl, formCard(CARDS.DECLINED))).status, 200);
      const last = await postForm(t, body.paymentWindowUrl, formCard(CARDS.DECLINED));
      assert.equal(last.status, 303);
      assert.equal(last.headers.location, 'http://localhost/failed');
      const session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'EXPIRED');
      assert.equal(session.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
    });

    test('amount 0 stores the card for the customer without charging; the subscription is ACTIVE', async () => {
      const customerId = `cust-zero-${Date.now()}`;
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { amount: 0, customerId, subscription: { type: 'UNSCHEDULED' } })), 'POST /cit');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(page.text, /Save card/);
      const done = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'complete');
      assert.equal(done.session.state, 'COMPLETED');
      const detail = ok(await m.api.get(`${API}/transactions/${done.session.transactionId}`), 'GET tx');
      assert.equal(detail.transaction.amount, 0);
      assert.equal(detail.aggregates.authorized, 0);
      assert.equal(detail.aggregates.captured, 0);
      const methods = ok(await m.api.get(`${API}/payment-methods?customerId=${customerId}`), 'methods').items;
      assert.equal(methods.length, 1);
      assert.equal(ok(await m.api.get(`${API}/subscriptions/${done.session.subscriptionId}`), 'sub').subscription.state, 'ACTIVE');
    });

    test('a wallet payment (KLARNA) through the sandbox control', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m)), 'POST /cit');
      const done = ok(await complete(t, body.session.id, { paymentMethodType: 'KLARNA' }), 'complete');
      assert.equal(done.session.state, 'COMPLETED');
      assert.equal(done.transaction.state, 'SUCCESS');
      const tx = ok(await m.api.get(`${API}/transactions/${done.transaction.id}`), 'GET tx').transaction;
      assert.equal(tx.paymentMethodType, 'KLARNA');
    });

    test('an acquirer timeout is not a decline: the session stays PROCESSING until the retry approves it', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m)), 'POST /cit');
      const first = ok(await complete(t, body.session.id, { card: card(CARDS.TIMEOUT_THEN_APPROVED) }), 'complete');
      assert.equal(first.session.state, 'PROCESSING');
      const window = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(window.text, /being processed/);
      const session = await waitFor(async () => {
        await advanceClock(t, 5);
        const s = (await m.api.get(`${API}/sessions/${body.session.id}`)).body.session;
        return s.state === 'COMPLETED' ? s : null;
      }, 'session completed after the retry');
      assert.equal(session.attempts, 1);
    });

    test('the session expires on the service clock: GET shows EXPIRED and paying is refused', async () => {
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { timeout: 1 })), 'POST /cit');
      await advanceClock(t, 61);
      const session = await waitFor(async () => {
        const s = (await m.api.get(`${API}/sessions/${body.session.id}`)).body.session;
        return s.state === 'EXPIRED' ? s : null;
      }, 'session EXPIRED');
      assert.equal(session.errorCode, 'EXPIRED');
      assert.equal((await complete(t, body.session.id, { card: card(CARDS.VISA) })).status, 409);
      const window = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(window.text, /time for this payment ran out/);
    });
  });
}
