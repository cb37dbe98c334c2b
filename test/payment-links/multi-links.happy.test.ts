import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock, card, CARDS, waitFor } from '../online/helpers.js';
import { complete, formCard, postForm } from '../online/cit-flows.js';
import { decodeQr, ok, PNG_SIGNATURE } from './support.js';
import {
  createMultiLink,
  MULTI_LINK_KEYS,
  multiLinkBody,
  newKey,
  onlinePointOfSale,
  ORDER_LINE,
  pathOf,
  TRANSACTION_ID,
  visit,
  visitStarts,
} from './multi-link-support.js';

const PUBLIC_URL = 'http://127.0.0.1:8080';

for (const kind of await availableStores()) {
  describe(`multi-links: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('POST → exactly {multiLink, url, qrUrl}; the record has every §11.3 field, what was sent, and null for what was not', async () => {
      const sent = multiLinkBody(m, {
        scaMode: 'NORMAL',
        timeout: 15,
        instantCapture: 'OFF',
        textOnStatement: 'Coffee shop',
        attributes: { shelf: 'a1' },
        reportFailure: true,
        reportExpired: false,
        dynamicAmount: false,
        notificationUrl: 'http://localhost/cb',
        successUrl: 'https://shop.localhost/ok',
        failureUrl: 'https://shop.localhost/failed',
        retryUrl: 'https://shop.localhost/retry',
        returnUrl: 'https://shop.localhost/return',
        allowedPaymentMethods: ['CARD', 'MOBILEPAY_ONLINE', 'CARD'],
        ageVerification: { minimumAge: 18, country: 'DK' },
        orderLines: [ORDER_LINE, { description: 'Welcome discount', quantity: 1, unitPrice: 200, totalAmount: 200, type: 'DISCOUNT' }],
        reference: 'shelf-a1',
      });
      const body = ok(await m.api.post(`${API}/multi-links`, sent, { idempotencyKey: newKey() }), 'POST');
      assert.deepEqual(Object.keys(body).sort(), ['multiLink', 'qrUrl', 'url']);
      const link = body.multiLink;
      assert.deepEqual(Object.keys(link).sort(), MULTI_LINK_KEYS);
      assert.match(link.id, TRANSACTION_ID);
      assert.equal(link.state, 'ACTIVE');
      assert.equal(link.pointOfSaleId, m.onlinePointOfSaleId);
      assert.equal(link.amount, 1500);
      assert.equal(link.currency, 'DKK');
      assert.equal(link.subscription, null);
      assert.equal(link.scaMode, 'NORMAL');
      assert.equal(link.timeout, 15);
      assert.equal(link.instantCapture, 'OFF');
      assert.equal(link.textOnStatement, 'Coffee shop');
      assert.deepEqual(link.attributes, { shelf: 'a1' });
      assert.equal(link.reportFailure, true);
      assert.equal(link.reportExpired, false);
      assert.equal(link.dynamicAmount, false);
      assert.equal(link.notificationUrl, 'http://localhost/cb');
      assert.equal(link.successUrl, 'https://shop.localhost/ok');
      assert.equal(link.failureUrl, 'https://shop.localhost/failed');
      assert.equal(link.retryUrl, 'https://shop.localhost/retry');
      assert.equal(link.returnUrl, 'https://shop.localhost/return');
      assert.deepEqual(link.allowedPaymentMethods, ['CARD', 'MOBILEPAY_ONLINE'], 'duplicates dropped, order kept');
      assert.deepEqual(link.ageVerification, { minimumAge: 18, country: 'DK' });
      assert.deepEqual(link.orderLines, [
        ORDER_LINE,
        { description: 'Welcome discount', imageUrl: null, quantity: 1, unitPrice: 200, totalAmount: 200, type: 'DISCOUNT' },
      ]);
      assert.ok(Math.abs(Date.parse(link.createdAt) - Date.now()) < 60_000);
      assert.equal(body.url, `${PUBLIC_URL}/ml/${link.id}`);
      assert.equal(body.qrUrl, `${PUBLIC_URL}/ml/${link.id}/qr.png`);

      const bare = (await createMultiLink(m)).multiLink;
      for (const key of MULTI_LINK_KEYS.filter((k) => !['id', 'pointOfSaleId', 'state', 'amount', 'currency', 'createdAt'].includes(k))) {
        assert.equal(bare[key], null, `${key} left out → null`);
      }

      const got = ok(await m.api.get(`${API}/multi-links/${link.id}`), 'GET');
      assert.deepEqual(got, body, 'GET answers the same record, url and qrUrl');
    });

    test('every visit starts a new session from the link and forwards (303) to its payment window, which shows the order lines', async () => {
      const { multiLink, url } = await createMultiLink(m, {
        amount: 2250,
        scaMode: 'SKIP',
        timeout: 20,
        instantCapture: 'NO_VOID',
        textOnStatement: 'Shelf A1',
        attributes: { shelf: 'a1' },
        reference: 'shelf-a1',
        successUrl: 'http://localhost/thanks',
        orderLines: [{ description: 'Tea <b>green</b> & "mint"', quantity: 3, unitPrice: 750, totalAmount: 2250, type: 'PHYSICAL' }],
      });
      const first = await visitStarts(t, m, url);
      const second = await visitStarts(t, m, url);
      assert.notEqual(first.session.id, second.session.id, 'a new session on every visit');
      assert.notEqual(first.location, second.location);
      assert.equal(first.res.headers['cache-control'], 'no-store');
      for (const { session, location } of [first, second]) {
        assert.ok(location.startsWith(`${PUBLIC_URL}/pay/`), location);
        assert.equal(session.state, 'PENDING');
        assert.equal(session.pointOfSaleId, multiLink.pointOfSaleId);
        assert.equal(session.amount, 2250);
        assert.equal(session.currency, 'DKK');
        assert.equal(session.reference, 'shelf-a1');
        assert.equal(session.scaMode, 'SKIP');
        assert.equal(session.timeout, 20);
        assert.equal(session.instantCapture, 'NO_VOID');
        assert.equal(session.textOnStatement, 'Shelf A1');
        assert.deepEqual(session.attributes, { shelf: 'a1' });
        assert.equal(session.successUrl, 'http://localhost/thanks');
        assert.equal(Date.parse(session.expiresAt) - Date.parse(session.createdAt), 20 * 60_000);
        assert.deepEqual(session.orderLines, [
          { description: 'Tea <b>green</b> & "mint"', imageUrl: null, quantity: 3, unitPrice: 750, totalAmount: 2250, type: 'PHYSICAL' },
        ]);
        assert.equal(session.customerId, null);
      }

      // The window lists the order lines as text: the merchant's markup is escaped, never rendered.
      const window = await t.client(null).get(pathOf(first.location));
      assert.equal(window.status, 200);
      assert.match(window.text, /<form/);
      assert.match(window.text, /22\.50 DKK/);
      assert.ok(window.text.includes('3 × Tea &lt;b&gt;green&lt;/b&gt; &amp; &quot;mint&quot;'), 'order line shown, escaped');
      assert.doesNotMatch(window.text, /<b>green<\/b>/);

      // Each session is independent: paying one leaves the other open, and the link stays ACTIVE.
      const paid = await postForm(t, first.location, formCard(CARDS.VISA));
      assert.equal(paid.status, 303);
      assert.equal(paid.headers.location, 'http://localhost/thanks');
      const done = ok(await m.api.get(`${API}/sessions/${first.session.id}`), 'first').session;
      assert.equal(done.state, 'COMPLETED');
      const tx = ok(await m.api.get(`${API}/transactions/${done.transactionId}`), 'tx').transaction;
      assert.equal(tx.amount, 2250);
      assert.equal(tx.reference, 'shelf-a1');
      assert.equal(ok(await m.api.get(`${API}/sessions/${second.session.id}`), 'second').session.state, 'PENDING');
      assert.equal(ok(await m.api.get(`${API}/multi-links/${multiLink.id}`), 'link').multiLink.state, 'ACTIVE');
      assert.notEqual((await visitStarts(t, m, url)).session.id, first.session.id, 'still starts sessions after one was paid');
    });

    test("settings left out come from the point of sale's hostedConfiguration when the session starts; redirect and notification URLs never do", async () => {
      const hosted = {
        scaMode: 'FORCE',
        timeout: 45,
        instantCapture: 'VOID',
        maxAttempts: 5,
        reportFailure: true,
        exemptions: ['TRA'],
        notificationUrl: 'http://localhost/pos-callback',
        successUrl: 'http://localhost/pos-ok',
        failureUrl: 'http://localhost/pos-failed',
      };
      const pos = await onlinePointOfSale(m, hosted);
      const { multiLink, url } = await createMultiLink(m, { pointOfSaleId: pos });
      assert.equal(multiLink.scaMode, null, 'the record keeps what was sent: nothing');
      const { session } = await visitStarts(t, m, url);
      assert.equal(session.scaMode, 'FORCE');
      assert.equal(session.timeout, 45);
      assert.equal(session.instantCapture, 'VOID');
      assert.equal(session.maxAttempts, 5);
      assert.equal(session.reportFailure, true);
      assert.deepEqual(session.exemptions, ['TRA']);
      assert.equal(session.notificationUrl, null, 'never inherited');
      assert.equal(session.successUrl, null, 'never inherited');
      assert.equal(session.failureUrl, null, 'never inherited');
      // The link's own values win over the point of sale's.
      const own = await createMultiLink(m, { pointOfSaleId: pos, scaMode: 'SKIP', timeout: 5, failureUrl: 'http://localhost/own-failed' });
      const { session: second } = await visitStarts(t, m, own.url);
      assert.equal(second.scaMode, 'SKIP');
      assert.equal(second.timeout, 5);
      assert.equal(second.failureUrl, 'http://localhost/own-failed');
      assert.equal(second.successUrl, null);
    });

    test('subscription settings: each paid session creates its own ACTIVE subscription, and with a billing plan an ACTIVE agreement', async () => {
      const own = await t.createMerchant({ physical: false });
      const plan = ok(
        await own.api.post(`${API}/subscriptions/billing/plans`, {
          name: 'Coffee club',
          amount: 9900,
          currency: 'DKK',
          maxAttempts: 3,
          interval: { period: 'MONTH', frequency: 1 },
        }),
        'plan',
      ).billingPlan;
      const { multiLink, url } = await createMultiLink(own, {
        amount: 0,
        subscription: {
          type: 'SCHEDULED',
          amount: 9900,
          interval: { period: 'MONTH', frequency: 1 },
          billingAgreement: { billingPlanId: plan.id },
        },
      });
      assert.deepEqual(multiLink.subscription, {
        type: 'SCHEDULED',
        amount: 9900,
        expiryDate: null,
        interval: { period: 'MONTH', frequency: 1 },
        billingAgreement: { billingPlanId: plan.id, nextChargeAt: null },
      });
      const subscriptions: string[] = [];
      for (const number of [CARDS.VISA, CARDS.MASTERCARD]) {
        const { session } = await visitStarts(t, own, url);
        assert.equal(session.subscription.type, 'SCHEDULED');
        assert.deepEqual(session.subscription.interval, { period: 'MONTH', frequency: 1 });
        assert.equal(session.subscription.billingAgreement.billingPlanId, plan.id);
        ok(await complete(t, session.id, { card: card(number) }), 'pay');
        const completed = await waitFor(async () => {
          const s = ok(await own.api.get(`${API}/sessions/${session.id}`), 'session').session;
          return s.state === 'COMPLETED' ? s : null;
        }, 'session COMPLETED');
        assert.ok(completed.subscriptionId);
        const sub = ok(await own.api.get(`${API}/subscriptions/${completed.subscriptionId}`), 'subscription').subscription;
        assert.equal(sub.state, 'ACTIVE');
        assert.equal(sub.type, 'SCHEDULED');
        subscriptions.push(sub.id);
        const agreements = ok(await own.api.get(`${API}/subscriptions/billing/agreements?perPage=500`), 'agreements').items.map((i: any) => i.billingAgreement);
        const agreement = agreements.find((a: any) => a.sessionId === session.id);
        assert.ok(agreement, 'an agreement for the session');
        assert.equal(agreement.state, 'ACTIVE');
        assert.equal(agreement.subscriptionId, sub.id);
      }
      assert.notEqual(subscriptions[0], subscriptions[1], 'one subscription per session');
    });

    test('qrUrl serves a PNG QR code of url', async () => {
      const { url, qrUrl } = await createMultiLink(m);
      const res = await t.runtime.app.inject({ method: 'GET', url: pathOf(qrUrl) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'image/png');
      const png = res.rawPayload;
      assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), 'PNG signature');
      assert.equal(decodeQr(png), url, 'the QR code encodes the link url');
    });

    test('DELETE → 200 with the record DEACTIVATED; again → the same; the url answers 410; a session started before stays payable', async () => {
      const { multiLink, url, qrUrl } = await createMultiLink(m);
      const before = await visitStarts(t, m, url);
      const res = await m.api.delete(`${API}/multi-links/${multiLink.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['multiLink', 'qrUrl', 'url']);
      assert.equal(res.body.multiLink.state, 'DEACTIVATED');
      assert.deepEqual({ ...res.body.multiLink, state: 'ACTIVE' }, multiLink, 'nothing else changed');
      const again = await m.api.delete(`${API}/multi-links/${multiLink.id}`);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, res.body);
      assert.equal(ok(await m.api.get(`${API}/multi-links/${multiLink.id}`), 'GET').multiLink.state, 'DEACTIVATED');

      const gone = await visit(t, url);
      assert.equal(gone.status, 410);
      assert.match(String(gone.headers['content-type']), /^text\/html/);
      assert.match(gone.text, /no longer active/i);
      assert.equal(gone.headers.location, undefined);
      assert.equal((await t.client(null).get(pathOf(qrUrl))).status, 410);

      const window = await t.client(null).get(pathOf(before.location));
      assert.equal(window.status, 200);
      assert.match(window.text, /<form/);
      const paid = await postForm(t, before.location, formCard(CARDS.VISA));
      assert.ok([200, 303].includes(paid.status));
      assert.equal(ok(await m.api.get(`${API}/sessions/${before.session.id}`), 'session').session.state, 'COMPLETED');
    });

    test('idempotent create: the same key and body give the same link, once; another body → 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const own = await t.createMerchant({ physical: false });
      const key = newKey();
      const first = await own.api.post(`${API}/multi-links`, multiLinkBody(own), { idempotencyKey: key });
      const second = await own.api.post(`${API}/multi-links`, multiLinkBody(own), { idempotencyKey: key });
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.deepEqual(second.body, first.body);
      assert.equal(ok(await own.api.get(`${API}/multi-links`), 'list').total, 1);
      const reused = await own.api.post(`${API}/multi-links`, multiLinkBody(own, { amount: 1 }), { idempotencyKey: key });
      assert.equal(reused.status, 422);
      assert.equal(reused.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
    });

    test('list: page envelope of {multiLink, url, qrUrl}, newest first; pointOfSaleId, state and inclusive createdBefore / createdAfter filters', async () => {
      const own = await t.createMerchant({ physical: false });
      const other = await onlinePointOfSale(own);
      const a = (await createMultiLink(own)).multiLink;
      await advanceClock(t, 10);
      const b = (await createMultiLink(own, { pointOfSaleId: other })).multiLink;
      await advanceClock(t, 10);
      const c = (await createMultiLink(own)).multiLink;
      ok(await own.api.delete(`${API}/multi-links/${b.id}`), 'deactivate b');

      const all = ok(await own.api.get(`${API}/multi-links`), 'list');
      for (const key of [
        'page',
        'perPage',
        'lastPage',
        'total',
        'from',
        'to',
        'firstPageUrl',
        'lastPageUrl',
        'nextPageUrl',
        'previousPageUrl',
        'path',
        'nextPage',
        'previousPage',
      ]) {
        assert.ok(key in all, `envelope has ${key}`);
      }
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.items.map((i: any) => Object.keys(i).sort()),
        [
          ['multiLink', 'qrUrl', 'url'],
          ['multiLink', 'qrUrl', 'url'],
          ['multiLink', 'qrUrl', 'url'],
        ],
      );
      assert.deepEqual(
        all.items.map((i: any) => i.multiLink.id),
        [c.id, b.id, a.id],
        'newest first',
      );
      assert.equal(all.items[0].url, `${PUBLIC_URL}/ml/${c.id}`);

      const ids = async (query: string) => ok(await own.api.get(`${API}/multi-links?${query}`), query).items.map((i: any) => i.multiLink.id);
      assert.deepEqual(await ids('state=DEACTIVATED'), [b.id]);
      assert.deepEqual(await ids('state=ACTIVE'), [c.id, a.id]);
      assert.deepEqual(await ids(`pointOfSaleId=${other}`), [b.id]);
      assert.deepEqual(await ids(`pointOfSaleId=${own.onlinePointOfSaleId}`), [c.id, a.id]);
      assert.deepEqual(await ids(`pointOfSaleId=${own.onlinePointOfSaleId}&state=DEACTIVATED`), []);
      const at = (iso: string) => encodeURIComponent(iso);
      assert.deepEqual(await ids(`createdAfter=${at(b.createdAt)}`), [c.id, b.id], 'createdAfter is inclusive');
      assert.deepEqual(await ids(`createdBefore=${at(b.createdAt)}`), [b.id, a.id], 'createdBefore is inclusive');
      assert.deepEqual(await ids(`createdAfter=${at(b.createdAt)}&createdBefore=${at(b.createdAt)}`), [b.id]);
      assert.deepEqual(await ids(`createdAfter=${at(new Date(Date.parse(c.createdAt) + 1).toISOString())}`), []);

      const page2 = ok(await own.api.get(`${API}/multi-links?perPage=2&page=2`), 'page 2');
      assert.equal(page2.lastPage, 2);
      assert.equal(page2.from, 3);
      assert.deepEqual(
        page2.items.map((i: any) => i.multiLink.id),
        [a.id],
      );
    });
  });
}
