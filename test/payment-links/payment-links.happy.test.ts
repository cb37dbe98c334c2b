import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock, card, CARDS, waitFor } from '../online/helpers.js';
import { complete, formCard, postForm } from '../online/cit-flows.js';
import { createLink, decodeQr, getLink, LINK_KEYS, linkBody, ok } from './support.js';

const pathOf = (url: string) => new URL(url).pathname;

for (const kind of await availableStores()) {
  describe(`payment links: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('POST → exactly {id, sessionId, url, qrCode} (qrCode: base64 PNG of url); GET → {paymentLink} ACTIVE with exactly the record fields', async () => {
      const body = ok(await m.api.post(`${API}/payment-links`, linkBody(m, { customerId: 'cust-9', timeout: 90 })), 'POST');
      assert.deepEqual(Object.keys(body).sort(), ['id', 'qrCode', 'sessionId', 'url']);
      assert.match(body.id, /^[0-9A-HJKMNP-TV-Z]{11}$/, 'id in the transaction-id format');
      assert.match(body.qrCode, /^[A-Za-z0-9+/]+={0,2}$/, 'qrCode is plain base64, no data: prefix');
      assert.equal(decodeQr(Buffer.from(body.qrCode, 'base64')), body.url, 'the QR code encodes url');
      const link = await getLink(m, body.id);
      assert.equal(link.sessionId, body.sessionId);
      assert.equal(link.url, body.url);
      assert.deepEqual(Object.keys(link).sort(), LINK_KEYS);
      assert.equal(link.state, 'ACTIVE');
      assert.equal(link.amount, 4200);
      assert.equal(link.currency, 'DKK');
      assert.equal(link.reference, 'invoice-1');
      assert.equal(link.customerId, 'cust-9');
      assert.equal(link.pointOfSaleId, m.onlinePointOfSaleId);
      assert.equal(link.transactionId, null);
      assert.equal(Date.parse(link.expiresAt) - Date.parse(link.createdAt), 90 * 60_000, 'timeout in minutes, as /cit');
      const session = ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'GET session').session;
      assert.equal(session.state, 'PENDING');
      assert.equal(session.amount, 4200);
      assert.equal(session.expiresAt, link.expiresAt);
      assert.deepEqual(await getLink(m, link.id), link);
    });

    test('timeout: up to 86,400 minutes (60 days), which is also the default; 86,401 → 422 on timeout', async () => {
      const longest = ok(await m.api.post(`${API}/payment-links`, linkBody(m, { timeout: 86_400 })), 'POST 86,400');
      const longestLink = await getLink(m, longest.id);
      assert.equal(Date.parse(longestLink.expiresAt) - Date.parse(longestLink.createdAt), 86_400 * 60_000);
      const byDefault = await getLink(m, ok(await m.api.post(`${API}/payment-links`, linkBody(m)), 'POST without timeout').id);
      assert.equal(Date.parse(byDefault.expiresAt) - Date.parse(byDefault.createdAt), 60 * 24 * 60 * 60_000, '60 days');
      const over = await m.api.post(`${API}/payment-links`, linkBody(m, { timeout: 86_401 }));
      assert.equal(over.status, 422, over.text);
      assert.deepEqual(Object.keys(over.body.errors), ['timeout']);
    });

    test('the url opens the hosted payment window of its session, and paying there makes the link PAID', async () => {
      const link = await createLink(m, { amount: 1999 });
      const page = await t.client(null).get(pathOf(link.url));
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /text\/html/);
      assert.match(page.text, /<form/);
      assert.match(page.text, /19[.,]99/);

      const paid = await postForm(t, link.url, formCard(CARDS.VISA));
      assert.ok([200, 303].includes(paid.status), `form post: ${paid.status}`);
      const after = await getLink(m, link.id);
      assert.equal(after.state, 'PAID');
      const session = ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'GET session').session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(after.transactionId, session.transactionId);
      const tx = ok(await m.api.get(`${API}/transactions/${after.transactionId}`), 'GET tx').transaction;
      assert.equal(tx.state, 'SUCCESS');
      assert.equal(tx.amount, 1999);
      assert.equal(tx.sessionId, link.sessionId);
      assert.ok(Date.parse(after.stateChangedAt) >= Date.parse(after.createdAt));
    });

    test('a declined attempt leaves the link ACTIVE; the next approved attempt makes it PAID', async () => {
      const link = await createLink(m, { maxAttempts: 3 });
      const declined = ok(await complete(t, link.sessionId, { card: card(CARDS.DECLINED) }), 'declined');
      assert.equal(declined.transaction.state, 'FAILED');
      assert.equal((await getLink(m, link.id)).state, 'ACTIVE');
      const approved = ok(await complete(t, link.sessionId, { card: card(CARDS.MASTERCARD) }), 'approved');
      const got = await getLink(m, link.id);
      assert.equal(got.state, 'PAID');
      assert.equal(got.transactionId, approved.transaction.id);
    });

    test('the last attempt declined: the session and the link are EXPIRED', async () => {
      const link = await createLink(m, { maxAttempts: 1 });
      ok(await complete(t, link.sessionId, { card: card(CARDS.INSUFFICIENT_FUNDS) }), 'declined');
      assert.equal((await getLink(m, link.id)).state, 'EXPIRED');
      assert.equal(ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'session').session.state, 'EXPIRED');
    });

    test('DELETE → 200 empty, CANCELLED; the page then refuses payment; a second DELETE answers the same', async () => {
      const link = await createLink(m);
      const res = await m.api.delete(`${API}/payment-links/${link.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
      const got = await getLink(m, link.id);
      assert.equal(got.state, 'CANCELLED');
      assert.equal(got.transactionId, null);

      // The page shows the cancellation and offers no form; posting the form takes no payment.
      const page = await t.client(null).get(pathOf(link.url));
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /<form/);
      assert.match(page.text, /cancelled/i);
      const posted = await postForm(t, link.url, formCard(CARDS.VISA));
      assert.doesNotMatch(posted.text, /<form/);
      const sandbox = await complete(t, link.sessionId, { card: card(CARDS.VISA) });
      assert.equal(sandbox.status, 409);
      const session = ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'session').session;
      assert.equal(session.state, 'EXPIRED');
      assert.equal(session.errorCode, 'MANUAL_ABORTED');
      assert.equal(session.attempts, 0, 'no payment attempt was made');
      const txs = ok(await m.api.get(`${API}/transactions?sessionId=${link.sessionId}`), 'transactions');
      assert.equal(txs.items.length, 0);
      assert.equal((await getLink(m, link.id)).state, 'CANCELLED');

      const again = await m.api.delete(`${API}/payment-links/${link.id}`);
      assert.equal(again.status, 200);
      assert.equal((await getLink(m, link.id)).stateChangedAt, got.stateChangedAt, 'nothing changed the second time');
    });

    test('idempotent create: the same key and body give the same link, once', async () => {
      const before = ok(await m.api.get(`${API}/payment-links?perPage=1`), 'list').total;
      const key = `pl-${Math.random().toString(36).slice(2)}`;
      const first = await m.api.post(`${API}/payment-links`, linkBody(m, { reference: 'idem' }), { idempotencyKey: key });
      const second = await m.api.post(`${API}/payment-links`, linkBody(m, { reference: 'idem' }), { idempotencyKey: key });
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.deepEqual(second.body, first.body);
      assert.equal(ok(await m.api.get(`${API}/payment-links?perPage=1`), 'list').total, before + 1);
      const reused = await m.api.post(`${API}/payment-links`, linkBody(m, { reference: 'other' }), { idempotencyKey: key });
      assert.equal(reused.status, 422);
      assert.equal(reused.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
    });

    test('the session times out on the service clock: the link is EXPIRED (job or read), and cannot be cancelled', async () => {
      const link = await createLink(m, { timeout: 1, reference: 'short' });
      await advanceClock(t, 120);
      // The session's expiry job alone (no read through the API) expires the link in its commit.
      await waitFor(async () => (await t.runtime.store.paymentLinks.findById(m.accountId, link.id))?.state === 'EXPIRED', 'link expired by the job');
      const got = await getLink(m, link.id);
      assert.equal(got.state, 'EXPIRED');
      assert.equal(ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'session').session.state, 'EXPIRED');
      const del = await m.api.delete(`${API}/payment-links/${link.id}`);
      assert.equal(del.status, 409);
      assert.equal(del.body.errorCode, 'CONFLICT');
      assert.equal((await getLink(m, link.id)).state, 'EXPIRED');
    });

    test('a PAID link cannot be cancelled (409) and stays PAID', async () => {
      const link = await createLink(m);
      ok(await complete(t, link.sessionId, { card: card(CARDS.VISA) }), 'pay');
      const del = await m.api.delete(`${API}/payment-links/${link.id}`);
      assert.equal(del.status, 409);
      assert.match(del.body.message, /PAID/);
      assert.equal((await getLink(m, link.id)).state, 'PAID');
    });

    test('list: page envelope of {paymentLink}, newest first, state and reference filters', async () => {
      const own = await t.createMerchant();
      const a = await createLink(own, { reference: 'list-a' });
      const b = await createLink(own, { reference: 'list-b' });
      const c = await createLink(own, { reference: 'list-b' });
      ok(await own.api.delete(`${API}/payment-links/${b.id}`), 'cancel b');
      const all = ok(await own.api.get(`${API}/payment-links`), 'list');
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
        'items',
      ]) {
        assert.ok(key in all, `envelope has ${key}`);
      }
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.items.map((i: any) => Object.keys(i)),
        [['paymentLink'], ['paymentLink'], ['paymentLink']],
      );
      assert.deepEqual(
        all.items.map((i: any) => i.paymentLink.id),
        [c.id, b.id, a.id],
      );
      assert.deepEqual(Object.keys(all.items[0].paymentLink).sort(), LINK_KEYS);
      const ids = async (query: string) => ok(await own.api.get(`${API}/payment-links?${query}`), query).items.map((i: any) => i.paymentLink.id);
      assert.deepEqual(await ids('state=CANCELLED'), [b.id]);
      assert.deepEqual(await ids('state=ACTIVE'), [c.id, a.id]);
      assert.deepEqual(await ids('reference=list-b'), [c.id, b.id]);
      assert.deepEqual(await ids('reference=list-b&state=ACTIVE'), [c.id]);
      assert.deepEqual(await ids('state=PAID'), []);
      const page2 = ok(await own.api.get(`${API}/payment-links?perPage=2&page=2`), 'page 2');
      assert.equal(page2.lastPage, 2);
      assert.equal(page2.from, 3);
      assert.deepEqual(
        page2.items.map((i: any) => i.paymentLink.id),
        [a.id],
      );
    });

    test('list: an overdue ACTIVE link is listed EXPIRED, and the state filter agrees', async () => {
      const own = await t.createMerchant();
      const short = await createLink(own, { timeout: 1 });
      const long = await createLink(own, { timeout: 600 });
      await advanceClock(t, 90);
      const ids = async (query: string) => ok(await own.api.get(`${API}/payment-links?${query}`), query).items.map((i: any) => i.paymentLink.id);
      assert.deepEqual(await ids('state=ACTIVE'), [long.id]);
      assert.deepEqual(await ids('state=EXPIRED'), [short.id]);
    });
  });
}
