import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { ok } from './support.js';
import { createMultiLink, multiLinkBody, newKey, pathOf, visit, visitStarts } from './multi-link-support.js';

for (const kind of await availableStores()) {
  describe(`multi-links: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let link: any;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      link = await createMultiLink(a, { textOnStatement: 'a-only', attributes: { secret: 'a-only' } });
    });
    after(() => t.close());

    test('no or unknown credential → 401 on every API route', async () => {
      const id = link.multiLink.id;
      for (const client of [t.client(null), t.client('sk_not_a_real_key')]) {
        assert.equal((await client.post(`${API}/multi-links`, multiLinkBody(a), { idempotencyKey: newKey() })).status, 401);
        assert.equal((await client.get(`${API}/multi-links`)).status, 401);
        assert.equal((await client.get(`${API}/multi-links/${id}`)).status, 401);
        assert.equal((await client.delete(`${API}/multi-links/${id}`)).status, 401);
      }
      assert.equal(ok(await a.api.get(`${API}/multi-links/${id}`), 'get').multiLink.state, 'ACTIVE');
    });

    test('the operator key is the wrong tier → 403', async () => {
      for (const res of [await t.operator.get(`${API}/multi-links`), await t.operator.post(`${API}/multi-links`, multiLinkBody(a))]) {
        assert.equal(res.status, 403);
        assert.equal(res.body.errorCode, 'FORBIDDEN');
      }
    });

    test("another merchant's link is 404 for GET and DELETE, absent from its list, and unchanged", async () => {
      const id = link.multiLink.id;
      const got = await b.api.get(`${API}/multi-links/${id}`);
      assert.equal(got.status, 404);
      assert.equal(got.body.errorCode, 'NOT_FOUND');
      assert.doesNotMatch(got.text, /a-only/);
      assert.equal((await b.api.delete(`${API}/multi-links/${id}`)).status, 404);
      assert.equal(ok(await b.api.get(`${API}/multi-links`), 'list b').total, 0);
      assert.equal(ok(await b.api.get(`${API}/multi-links?pointOfSaleId=${a.onlinePointOfSaleId}`), 'list b by a pos').total, 0);
      assert.equal(ok(await a.api.get(`${API}/multi-links/${id}`), 'get a').multiLink.state, 'ACTIVE');
      // Nor can a merchant make a link on another merchant's point of sale.
      const foreign = await b.api.post(`${API}/multi-links`, multiLinkBody(a), { idempotencyKey: newKey() });
      assert.equal(foreign.status, 422);
      assert.ok(foreign.body.errors.pointOfSaleId);
    });

    test("a visit's session belongs to the link's merchant only", async () => {
      const { session } = await visitStarts(t, a, link.url);
      assert.equal((await b.api.get(`${API}/sessions/${session.id}`)).status, 404);
      assert.equal(session.textOnStatement, 'a-only');
    });

    test('the record carries no account id or secret; the url names only the link id; the pages send protective headers', async () => {
      const text = JSON.stringify(link);
      assert.doesNotMatch(text, new RegExp(a.accountId));
      assert.doesNotMatch(text, /idempotency/i);
      assert.equal(pathOf(link.url), `/ml/${link.multiLink.id}`);
      const res = await visit(t, link.url);
      assert.equal(res.status, 303);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.doesNotMatch(res.text, /a-only/, 'the redirect shows nothing of the link');
      const deactivated = await createMultiLink(a);
      ok(await a.api.delete(`${API}/multi-links/${deactivated.multiLink.id}`), 'deactivate');
      const gone = await visit(t, deactivated.url);
      assert.equal(gone.status, 410);
      assert.match(String(gone.headers['content-security-policy']), /default-src 'none'/);
      assert.match(String(gone.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(gone.headers['x-content-type-options'], 'nosniff');
    });

    test("a merchant's order line text is shown as text in the window, never as markup", async () => {
      const evil = '<script>alert(1)</script><img src=x onerror=alert(2)>';
      const created = await createMultiLink(a, { orderLines: [{ description: evil, quantity: 1, unitPrice: 1500, totalAmount: 1500, type: 'OTHER' }] });
      const { location } = await visitStarts(t, a, created.url);
      const window = await t.client(null).get(pathOf(location));
      assert.equal(window.status, 200);
      assert.ok(!window.text.includes('<script>alert(1)'), 'no script injected');
      assert.ok(!window.text.includes('<img src=x'), 'no element injected');
      assert.ok(window.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;'), 'shown escaped');
    });
  });
}
