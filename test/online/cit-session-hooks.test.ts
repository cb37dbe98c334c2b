/**
 * INTERFACE §11.2, the calls a session makes to the merchant:
 * - preAuthUrl: POST {session, transaction PROCESSING} with the point of sale's Authorization value
 *   before the acquirer; 2xx lets the payment proceed; another status or no answer within 5 s ends
 *   the attempt FAILED with REJECTED_BY_MERCHANT (a transaction of the session, with its callback),
 *   and the session may retry; in the window a failed attempt goes to retryUrl.
 * - reportExpired: when the session expires, a NotificationWebhook with session.state EXPIRED goes
 *   to notificationUrl — transaction null without attempts, else the last failed attempt.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock, type CallbackReceiver, card, CARDS, startOnlineSuite, stopOnlineSuite, waitFor } from './helpers.js';
import { citBody, complete, formCard, ok, postForm } from './cit-flows.js';

/** A receiver that never answers in time (holds every request until closed). */
async function startSilentReceiver() {
  const held: http.ServerResponse[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}/slow`,
    requests: () => requests,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const kind of await availableStores()) {
  describe(`CIT sessions: preAuthUrl and reportExpired (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    test('preAuthUrl 2xx: the merchant sees {session, transaction PROCESSING} with its Authorization value; the payment proceeds', async () => {
      const pre = rx.newPath('pre-auth');
      const cb = rx.newPath('cb');
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { preAuthUrl: rx.url(pre), notificationUrl: rx.url(cb) })), 'POST /cit');
      rx.respond(pre, [204]);
      const done = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'complete');
      assert.equal(done.transaction.state, 'SUCCESS');
      assert.equal(done.session.state, 'COMPLETED');
      const [hit] = rx.at(pre);
      assert.ok(hit, 'the pre-authorization call was made');
      assert.equal(rx.at(pre).length, 1);
      assert.equal(hit.body.session.id, body.session.id);
      assert.equal(hit.body.session.state, 'PROCESSING');
      assert.equal(hit.body.transaction.id, done.transaction.id);
      assert.equal(hit.body.transaction.state, 'PROCESSING');
      assert.equal(hit.body.transaction.amount, 2500);
      assert.match(String(hit.headers['content-type']), /application\/json/);
      const callback = await waitFor(() => rx.at(cb)[0], 'the payment callback');
      assert.ok(hit.headers.authorization, 'Authorization sent');
      assert.equal(hit.headers.authorization, callback.headers.authorization, 'the same Authorization value as the callbacks');
      assert.ok(!hit.text.includes(CARDS.VISA), 'no card number in the pre-authorization body');
    });

    test('preAuthUrl non-2xx: the attempt ends FAILED with REJECTED_BY_MERCHANT (callback included); the retry may pay', async () => {
      const pre = rx.newPath('pre-auth');
      const cb = rx.newPath('cb');
      const body = ok(
        await m.api.post(`${API}/cit`, citBody(m, { preAuthUrl: rx.url(pre), notificationUrl: rx.url(cb), customerId: 'cust-pre' })),
        'POST /cit',
      );
      rx.respond(pre, [403, 500, 200]);
      for (let i = 1; i <= 2; i++) {
        const refused = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), `refused ${i}`);
        assert.equal(refused.transaction.state, 'FAILED');
        assert.equal(refused.transaction.errorCode, 'REJECTED_BY_MERCHANT');
        assert.equal(refused.session.state, 'PENDING', 'attempts remain');
        assert.equal(refused.session.attempts, i);
        assert.equal(refused.session.errorCode, 'REJECTED_BY_MERCHANT');
        const detail = ok(await m.api.get(`${API}/transactions/${refused.transaction.id}`), 'tx');
        assert.equal(detail.transaction.sessionId, body.session.id);
        assert.equal(detail.transaction.externalStatusCodes?.acquirer ?? null, null, 'the acquirer was not called: no acquirer code');
        assert.equal(detail.aggregates.authorized, 0);
        assert.deepEqual(
          detail.operations.map((o: any) => [o.type, o.state, o.errorCode]),
          [['AUTHORIZATION', 'FAILED', 'REJECTED_BY_MERCHANT']],
        );
        const callback = await waitFor(() => rx.at(cb).find((h) => h.body?.transaction?.id === refused.transaction.id), 'FAILED callback');
        assert.equal(callback.body.transaction.state, 'FAILED');
        assert.equal(callback.body.transaction.errorCode, 'REJECTED_BY_MERCHANT');
      }
      const paid = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'paid');
      assert.equal(paid.transaction.state, 'SUCCESS');
      assert.equal(paid.session.state, 'COMPLETED');
      assert.equal(paid.session.attempts, 3);
      assert.equal(rx.at(pre).length, 3);
      // The refused attempts' cards were not kept for the customer.
      const methods = ok(await m.api.get(`${API}/payment-methods?customerId=cust-pre`), 'methods').items;
      assert.equal(methods.length, 1);
    });

    test('preAuthUrl that does not answer within 5 s: REJECTED_BY_MERCHANT', async () => {
      const silent = await startSilentReceiver();
      try {
        const body = ok(await m.api.post(`${API}/cit`, citBody(m, { preAuthUrl: silent.url })), 'POST /cit');
        const refused = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'complete');
        assert.equal(silent.requests(), 1);
        assert.equal(refused.transaction.state, 'FAILED');
        assert.equal(refused.transaction.errorCode, 'REJECTED_BY_MERCHANT');
        assert.equal(refused.session.state, 'PENDING');
      } finally {
        await silent.close();
      }
    });

    test('in the window: a refused attempt sends the customer to retryUrl while attempts remain, then failureUrl', async () => {
      const pre = rx.newPath('pre-auth');
      const body = ok(
        await m.api.post(
          `${API}/cit`,
          citBody(m, { preAuthUrl: rx.url(pre), maxAttempts: 2, retryUrl: 'https://shop.localhost/retry', failureUrl: 'https://shop.localhost/failed' }),
        ),
        'POST /cit',
      );
      rx.respond(pre, [409, 409]);
      const first = await postForm(t, body.paymentWindowUrl, formCard(CARDS.VISA));
      assert.equal(first.status, 303);
      assert.equal(first.headers.location, 'https://shop.localhost/retry');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(page.text, /The shop did not accept this payment/);
      const last = await postForm(t, body.paymentWindowUrl, formCard(CARDS.VISA));
      assert.equal(last.status, 303);
      assert.equal(last.headers.location, 'https://shop.localhost/failed');
      const session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'EXPIRED');
      assert.equal(session.errorCode, 'REJECTED_BY_MERCHANT');
    });

    test('reportExpired without any attempt: a NotificationWebhook with transaction null and session EXPIRED', async () => {
      const cb = rx.newPath('expired');
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { timeout: 1, reportExpired: true, notificationUrl: rx.url(cb) })), 'POST /cit');
      rx.respond(cb, [500]);
      await advanceClock(t, 61);
      // The first answer was 500: the report is sent again until a 2xx.
      const delivered = await waitFor(async () => {
        await advanceClock(t, 5);
        return rx.at(cb).find((h) => h.status === 200);
      }, 'EXPIRED report delivered');
      assert.equal(delivered.body.transaction, null);
      assert.equal(delivered.body.session.id, body.session.id);
      assert.equal(delivered.body.session.state, 'EXPIRED');
      assert.equal(delivered.body.session.errorCode, 'EXPIRED');
      assert.match(String(delivered.headers.authorization), /^Bearer /);
      assert.ok(rx.at(cb).length >= 2);
      assert.ok(
        rx.at(cb).every((h) => h.headers['x-delivery-id'] === body.session.id),
        'a stable X-Delivery-Id',
      );
    });

    test('reportExpired after a failed attempt: the last failed attempt with session EXPIRED, listed with the transaction’s callbacks', async () => {
      const cb = rx.newPath('expired-tx');
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { timeout: 1, reportExpired: true, notificationUrl: rx.url(cb) })), 'POST /cit');
      const declined = ok(await complete(t, body.session.id, { card: card(CARDS.DECLINED) }), 'declined');
      assert.equal(declined.session.state, 'PENDING');
      await waitFor(() => rx.at(cb).find((h) => h.body?.session?.state === 'PENDING'), 'the FAILED callback');
      await advanceClock(t, 61);
      const report = await waitFor(async () => {
        await m.api.get(`${API}/sessions/${body.session.id}`);
        return rx.at(cb).find((h) => h.body?.session?.state === 'EXPIRED');
      }, 'EXPIRED report');
      assert.equal(report.body.transaction.id, declined.transaction.id);
      assert.equal(report.body.transaction.state, 'FAILED');
      const list = ok(await m.api.get(`${API}/transactions/${declined.transaction.id}/notifications`), 'notifications');
      const events = (list.items ?? list.notifications ?? list).map((n: any) => (n.notification ?? n).event).sort();
      assert.deepEqual(events, ['FAILED', 'SESSION_EXPIRED']);
    });

    test('reportExpired when the last attempt fails: the FAILED callback and the EXPIRED report both name that attempt', async () => {
      const cb = rx.newPath('exhausted');
      const body = ok(await m.api.post(`${API}/cit`, citBody(m, { maxAttempts: 1, reportExpired: true, notificationUrl: rx.url(cb) })), 'POST /cit');
      const declined = ok(await complete(t, body.session.id, { card: card(CARDS.DECLINED) }), 'declined');
      assert.equal(declined.session.state, 'EXPIRED');
      const hits = await waitFor(() => (rx.at(cb).length >= 2 ? rx.at(cb) : null), 'two deliveries');
      assert.equal(hits.length, 2);
      for (const h of hits) {
        assert.equal(h.body.transaction.id, declined.transaction.id);
        assert.equal(h.body.session.state, 'EXPIRED');
      }
      assert.notEqual(hits[0]!.headers['x-delivery-id'], hits[1]!.headers['x-delivery-id']);
    });
  });
}
