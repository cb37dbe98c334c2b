import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { card, CARDS } from './helpers.js';
import { citBody, complete, formCard, ok, postForm } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`CIT sessions: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
    });
    after(() => t.close());

    test('POST /cit: no credential → 401 before the body is read; operator key → 403', async () => {
      assert.equal((await a.api.post(`${API}/cit`, { amount: 'x' }, { token: null })).status, 401);
      assert.equal((await t.operator.post(`${API}/cit`, citBody(a))).status, 403);
    });

    test("another merchant's session → 404; another merchant's point of sale → 422 without its data", async () => {
      const s = ok(await a.api.post(`${API}/cit`, citBody(a)), 'POST /cit').session;
      const res = await b.api.get(`${API}/sessions/${s.id}`);
      assert.equal(res.status, 404);
      assert.ok(!res.text.includes('order-cit'));
      const foreign = await b.api.post(`${API}/cit`, citBody(a));
      assert.equal(foreign.status, 422);
      assert.ok(foreign.body.errors.pointOfSaleId);
    });

    test('the sandbox control needs the operator key (merchant → 403, none → 401)', async () => {
      const s = ok(await a.api.post(`${API}/cit`, citBody(a)), 'POST /cit').session;
      assert.equal((await a.api.post(`/sandbox/v1/sessions/${s.id}/complete`, { card: card(CARDS.VISA) })).status, 403);
      assert.equal((await t.client(null).post(`/sandbox/v1/sessions/${s.id}/complete`, { card: card(CARDS.VISA) })).status, 401);
      assert.equal(ok(await a.api.get(`${API}/sessions/${s.id}`), 'GET').session.state, 'PENDING');
    });

    test('the card number never leaves in clear: not in responses, the page, the session, nor the SQLite file', async () => {
      const customerId = 'cust-pan';
      const body = ok(await a.api.post(`${API}/cit`, citBody(a, { customerId, subscription: { type: 'UNSCHEDULED' } })), 'POST /cit');
      const page = await postForm(t, body.paymentWindowUrl, formCard(CARDS.MASTERCARD));
      assert.ok(!page.text.includes(CARDS.MASTERCARD));
      const session = ok(await a.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      const sub = await a.api.get(`${API}/subscriptions/${session.subscriptionId}`);
      const tx = await a.api.get(`${API}/transactions/${session.transactionId}`);
      for (const text of [JSON.stringify(session), sub.text, tx.text]) assert.ok(!text.includes(CARDS.MASTERCARD));
      if (kind === 'sqlite') {
        const dir = t.database.dataDir;
        for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('payments.db'))) {
          assert.ok(!fs.readFileSync(path.join(dir, file)).includes(Buffer.from(CARDS.MASTERCARD)), `PAN in ${file}`);
        }
      }
    });

    test('the page escapes merchant text and limits framing to the approved domain', async () => {
      const pos = ok(
        await a.api.post(`${API}/management/point-of-sales`, {
          name: '<script>alert(1)</script>',
          domain: 'shop.example',
          webhookAuthentication: 'x',
          type: 'ONLINE',
        }),
        'pos',
      );
      const body = ok(await a.api.post(`${API}/cit`, citBody(a, { pointOfSaleId: pos.pointOfSale.id })), 'POST /cit');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.ok(!page.text.includes('<script>alert(1)</script>'));
      assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'self' http:\/\/shop\.example:\* https:\/\/shop\.example:\*/);
      assert.equal(page.headers['cache-control'], 'no-store');
    });

    test('an HTML form post is accepted only by the payment window, not by the JSON API', async () => {
      const res = await a.api.request('POST', `${API}/cit`, { raw: 'amount=1', contentType: 'application/x-www-form-urlencoded' });
      assert.equal(res.status, 400);
      assert.equal(res.body.errorCode, 'BAD_REQUEST');
    });

    test('a completed session cannot be paid again through the window', async () => {
      const body = ok(await a.api.post(`${API}/cit`, citBody(a)), 'POST /cit');
      ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'pay');
      const again = await postForm(t, body.paymentWindowUrl, formCard(CARDS.VISA));
      assert.equal(again.status, 200);
      assert.match(again.text, /the payment is complete/);
      const list = ok(await a.api.get(`${API}/transactions?sessionId=${body.session.id}`), 'list');
      assert.equal(list.items.length, 1, 'one payment only');
    });
  });
}
