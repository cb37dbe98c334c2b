/**
 * What the dashboard learns from the service for issue 46, over HTTP on both stores: the session
 * names the merchant (its account name, for the header) and says whether the service runs in
 * sandbox mode (the banner); GET /dashboard/api/payments is the payment list with each payment's
 * aggregates — GET /transactions's filters, cursor and tenant isolation, through the session
 * cookie only (no cookie: 401; the operator: 403), hidden from the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readCookie, SESSION_COOKIE } from '../../src/dashboard/session.js';
import { DASHBOARD_PAYMENTS_PATH } from '../../src/dashboard/payments.routes.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { motoBody } from '../online/helpers.js';

for (const kind of await availableStores()) {
  describe(`dashboard session facts and payment list with aggregates (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant({ physical: false });
    });
    after(() => t.close());

    async function session(key: string): Promise<{ cookie: string; body: Record<string, any> }> {
      const res = await t.runtime.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ key }),
      });
      assert.equal(res.statusCode, 200, res.body);
      const id = readCookie(String(res.headers['set-cookie']).split(';')[0], SESSION_COOKIE)!;
      return { cookie: `${SESSION_COOKIE}=${id}`, body: res.json().session };
    }
    const get = (url: string, cookie?: string) => t.runtime.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

    async function payment(amount: number, reference: string, capture: number, refund: number): Promise<string> {
      const body = motoBody(m, { amount });
      body.transaction.reference = reference;
      const res = await m.api.post(`${API}/moto`, body);
      assert.equal(res.status, 200, res.text);
      const id = res.body.transaction.id as string;
      if (capture) assert.equal((await m.api.post(`${API}/transactions/${id}/capture`, { amount: capture })).body.success, true);
      if (refund) assert.equal((await m.api.post(`${API}/transactions/${id}/refund`, { amount: refund })).body.success, true);
      return id;
    }

    test('the session names the merchant and says sandbox; the operator has no name', async () => {
      const account = await t.operator.get(`${API}/partner/accounts/${m.accountId}`);
      const merchant = await session(m.token);
      assert.equal(merchant.body.accountName, account.body.account.name);
      assert.equal(merchant.body.sandbox, true, 'the test runtime runs in sandbox mode');
      const again = await get('/dashboard/api/session', merchant.cookie);
      assert.equal(again.json().session.accountName, account.body.account.name);
      const operator = await session(t.operatorKey);
      assert.equal(operator.body.accountName, null);
      assert.equal(operator.body.sandbox, true);
    });

    test('the list carries each payment’s aggregates, with the filters and cursor of GET /transactions; tenant isolation', async () => {
      const tag = Math.random().toString(36).slice(2, 8);
      const refunded = await payment(1000, `${tag}-refunded`, 1000, 1000);
      const partly = await payment(2500, `${tag}-partly`, 2500, 500);
      const authorized = await payment(700, `${tag}-authorized`, 0, 0);
      const { cookie } = await session(m.token);

      const res = await get(`${DASHBOARD_PAYMENTS_PATH}?reference=${tag}&referenceMode=PREFIX&perPage=2`, cookie);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      assert.equal(page.hasMore, true);
      assert.deepEqual(
        page.items.map((i: any) => [i.transaction.id, i.aggregates.captured, i.aggregates.refunded, i.aggregates.remaining]),
        [
          [authorized, 0, 0, 700],
          [partly, 2500, 500, 0],
        ],
      );
      const next = (await get(`${DASHBOARD_PAYMENTS_PATH}?reference=${tag}&referenceMode=PREFIX&perPage=2&offset=${page.nextOffset}`, cookie)).json();
      assert.deepEqual(
        next.items.map((i: any) => [i.transaction.id, i.transaction.state, i.aggregates]),
        [[refunded, 'SUCCESS', { authorized: 1000, captured: 1000, refunded: 1000, voided: 0, remaining: 0, paidOut: 0 }]],
      );
      // The public list is unchanged: items are {transaction} (INTERFACE §6).
      const publicList = await m.api.get(`${API}/transactions?reference=${tag}&referenceMode=PREFIX`);
      assert.deepEqual(Object.keys(publicList.body.items[0]), ['transaction']);
      // Its filters' rules hold (amountMode without amount is a 422).
      assert.equal((await get(`${DASHBOARD_PAYMENTS_PATH}?amountMode=EQUAL`, cookie)).statusCode, 422);

      // Another merchant sees none of them; no session is 401; the operator is 403.
      const other = await t.createMerchant({ physical: false });
      const theirs = await get(`${DASHBOARD_PAYMENTS_PATH}?reference=${tag}&referenceMode=PREFIX`, (await session(other.token)).cookie);
      assert.deepEqual(theirs.json().items, []);
      assert.equal((await get(DASHBOARD_PAYMENTS_PATH)).statusCode, 401);
      assert.equal((await get(DASHBOARD_PAYMENTS_PATH, (await session(t.operatorKey)).cookie)).statusCode, 403);
      // A Bearer credential works too (the bridge only supplies one), and the route is not in the API reference.
      assert.equal(
        (await t.runtime.app.inject({ method: 'GET', url: DASHBOARD_PAYMENTS_PATH, headers: { authorization: `Bearer ${m.token}` } })).statusCode,
        200,
      );
      const doc = (await get('/openapi.json')).json();
      assert.ok(!Object.keys(doc.paths).some((p) => p.includes('/dashboard/')));
    });
  });
}
