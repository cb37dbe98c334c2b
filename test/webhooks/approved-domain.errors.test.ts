/**
 * The approved-domain rule explained where a user meets it (INTERFACE §2, §8): a URL refused for
 * being off the approved domain gets a 422 whose text names the domain(s) approved for the merchant
 * (for a callback: its point of sale's) and how another one is approved.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

const HOW = 'a domain is approved by the point of sale created with it (POST /management/point-of-sales)';

for (const kind of await availableStores()) {
  describe(`approved-domain refusals say what is approved (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant({ physical: false });
      const shop = await m.api.post(`${API}/management/point-of-sales`, { name: 'Shop', domain: 'shop.example', webhookAuthentication: 'x' });
      assert.equal(shop.status, 200, shop.text);
    });
    after(() => t.close());

    const only = (res: { status: number; body: any; text: string }, field: string) => {
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
      return res.body.errors[field][0] as string;
    };

    test('webhook url: every approved domain of the merchant, and how to approve another', async () => {
      const text = only(await m.api.post(`${API}/webhooks`, { url: 'https://elsewhere.example/hook', events: ['transaction.success.v1'], secret: 's' }), 'url');
      assert.ok(text.startsWith('[url]: must be an http(s) URL on an approved domain of this merchant ('), text);
      assert.ok(text.includes('localhost') && text.includes('shop.example'), text);
      assert.ok(text.includes(HOW), text);
    });

    test('webhook url of a merchant without a point of sale: none is approved yet, and how to approve one', async () => {
      // The harness's merchants come with points of sale; a fresh account has none.
      const { account } = (
        await t.operator.post(`${API}/partner/accounts`, {
          name: 'Bare',
          email: 'bare@example.com',
          currencyCode: 'DKK',
          timezone: 'UTC',
          domain: 'bare.example',
        })
      ).body;
      await t.operator.patch(`${API}/partner/accounts/${account.id}/activate`);
      const token = (await t.operator.post(`${API}/partner/accounts/${account.id}/access-token`, { environment: 'test' })).body.accessToken;
      const text = only(
        await t.client(token).post(`${API}/webhooks`, { url: 'https://bare.example/hook', events: ['transaction.success.v1'], secret: 's' }),
        'url',
      );
      assert.ok(text.includes('this merchant has none yet') && text.includes(HOW), text);
    });

    test("notificationUrl of a payment: its point of sale's approved domain, and how to approve another", async () => {
      const res = await m.api.post(`${API}/cit`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 100,
        currency: 'DKK',
        notificationUrl: 'https://shop.example/cb',
      });
      const text = only(res, 'notificationUrl');
      assert.equal(text, `[url]: must be an http(s) URL on this point of sale's approved domain localhost or a sub-domain of it; ${HOW}`);
    });
  });
}
