import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { createLink, getLink, linkBody, ok } from './support.js';

for (const kind of await availableStores()) {
  describe(`payment links: security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let link: any;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      link = await createLink(a, { reference: 'a-only' });
    });
    after(() => t.close());

    test('no or unknown credential → 401 on every route', async () => {
      const anon = t.client(null);
      const wrong = t.client('sk_not_a_real_key');
      for (const client of [anon, wrong]) {
        assert.equal((await client.post(`${API}/payment-links`, linkBody(a))).status, 401);
        assert.equal((await client.get(`${API}/payment-links`)).status, 401);
        assert.equal((await client.get(`${API}/payment-links/${link.id}`)).status, 401);
        assert.equal((await client.delete(`${API}/payment-links/${link.id}`)).status, 401);
      }
    });

    test('the operator key is the wrong tier → 403', async () => {
      const res = await t.operator.get(`${API}/payment-links`);
      assert.equal(res.status, 403);
      assert.equal(res.body.errorCode, 'FORBIDDEN');
    });

    test("another merchant's link is 404 for GET and DELETE, absent from its list, and unchanged", async () => {
      const got = await b.api.get(`${API}/payment-links/${link.id}`);
      assert.equal(got.status, 404);
      assert.doesNotMatch(got.text, /a-only/);
      assert.equal((await b.api.delete(`${API}/payment-links/${link.id}`)).status, 404);
      assert.equal(ok(await b.api.get(`${API}/payment-links`), 'list b').total, 0);
      assert.equal((await getLink(a, link.id)).state, 'ACTIVE');
      // Nor can a merchant open a link on another merchant's point of sale.
      const foreign = await b.api.post(`${API}/payment-links`, linkBody(a));
      assert.equal(foreign.status, 422);
      assert.ok(foreign.body.errors.pointOfSaleId);
    });

    test('the link record carries no account id or secret, only the public window key in its url', async () => {
      const got = await getLink(a, link.id);
      assert.doesNotMatch(JSON.stringify(got), new RegExp(a.accountId));
      assert.match(got.url, /\/pay\/pk_[A-Za-z0-9_-]+$/);
    });
  });
}
