import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS, motoBody, startReceiver, storedCardId, TEST_PANS, waitFor } from './helpers.js';

for (const kind of await availableStores()) {
  describe(`online payments, security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    const log: string[] = [];
    before(async () => {
      // Everything logged, at the most verbose level, is kept to be searched for card numbers.
      t = await startTestRuntime(kind, { logLevel: 'trace' }, { logDestination: { write: (line: string) => void log.push(line) } });
      a = await t.createMerchant();
      b = await t.createMerchant({ capabilities: { moto: false, syncPayout: false } });
      rx = await startReceiver();
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    test('MOTO and payout-sync need their capability → 403 CAPABILITY_NOT_ENABLED', async () => {
      const moto = await b.api.post(`${API}/moto`, motoBody(b));
      assert.equal(moto.status, 403);
      assert.equal(moto.body.errorCode, 'CAPABILITY_NOT_ENABLED');
      const payout = await b.api.post(`${API}/payout-sync`, {
        pointOfSaleId: b.onlinePointOfSaleId,
        amount: 1,
        currency: 'DKK',
        paymentMethodId: '00000000-0000-4000-8000-000000000000',
      });
      assert.equal(payout.status, 403);
      assert.equal(payout.body.errorCode, 'CAPABILITY_NOT_ENABLED');
      const anonymous = await t.client(null).post(`${API}/moto`, motoBody(a));
      assert.equal(anonymous.status, 401);
    });

    test("another merchant's payment methods, notifications and point of sale are invisible", async () => {
      const pmId = await storedCardId(a);
      const path = rx.newPath('tenant');
      const tx = (await a.api.post(`${API}/moto`, motoBody(a, { notificationUrl: rx.url(path) }))).body.transaction.id;
      await waitFor(() => rx.at(path)[0], 'callback');
      assert.equal((await b.api.get(`${API}/payment-methods/${pmId}`)).status, 404);
      assert.equal((await b.api.delete(`${API}/payment-methods/${pmId}`)).status, 404);
      assert.equal((await b.api.get(`${API}/payment-methods`)).body.total, 0);
      assert.equal((await b.api.get(`${API}/transactions/${tx}/notifications`)).status, 404);
      const notificationId = (await a.api.get(`${API}/transactions/${tx}/notifications`)).body.notifications[0].id;
      assert.equal((await b.api.post(`${API}/transactions/${tx}/notifications/${notificationId}/resend`)).status, 404);
      const payout = await b.api.post(`${API}/payout`, {
        pointOfSaleId: b.onlinePointOfSaleId,
        amount: 1,
        currency: 'DKK',
        paymentMethodId: pmId,
        notificationUrl: rx.url('/x'),
      });
      assert.equal(payout.status, 422, 'a payment method of another merchant is unknown');
      assert.ok(payout.body.errors.paymentMethodId);
      const foreignPos = motoBody(a);
      foreignPos.transaction.pointOfSaleId = b.onlinePointOfSaleId;
      const res = await a.api.post(`${API}/moto`, foreignPos);
      assert.equal(res.status, 422);
      assert.ok(res.body.errors['transaction.pointOfSaleId']);
      assert.equal((await a.api.get(`${API}/payment-methods/${pmId}`)).status, 200, 'the owner still sees it');
    });

    test('no full card number in any response, callback, log line or (SQLite) database file', async () => {
      const seen: string[] = [];
      for (const number of [CARDS.VISA, CARDS.MASTERCARD, CARDS.DECLINED, CARDS.CAPTURE_DECLINED]) {
        const path = rx.newPath('pan');
        const res = await a.api.post(`${API}/moto`, motoBody(a, { number, notificationUrl: rx.url(path), instantCapture: 'VOID', customerId: 'pan-check' }));
        seen.push(res.text);
        await waitFor(() => rx.at(path)[0], 'callback');
        seen.push((await a.api.get(`${API}/transactions/${res.body.transaction.id}`)).text);
        seen.push((await a.api.get(`${API}/payment-methods/${res.body.transaction.paymentMethodId}`)).text);
      }
      seen.push((await a.api.get(`${API}/payment-methods?customerId=pan-check`)).text);
      seen.push((await a.api.post(`${API}/moto`, motoBody(a, { number: '4111111111111112' }))).text);
      for (const hit of rx.hits) seen.push(hit.text, JSON.stringify(hit.headers));
      const leaks = (text: string) => TEST_PANS.filter((pan) => text.includes(pan));
      assert.deepEqual(seen.flatMap(leaks), [], 'responses and callbacks');
      assert.ok(log.length > 10, 'the log was captured');
      assert.deepEqual(leaks(log.join('')), [], 'log lines');
      if (t.kind === 'sqlite') {
        const dir = t.database.dataDir;
        const files = fs
          .readdirSync(dir)
          .filter((f) => f.startsWith('payments.db'))
          .map((f) => path.join(dir, f));
        assert.ok(files.length >= 1);
        for (const file of files) {
          const bytes = fs.readFileSync(file);
          assert.deepEqual(
            TEST_PANS.filter((pan) => bytes.includes(Buffer.from(pan, 'ascii'))),
            [],
            file,
          );
        }
      }
      // The card is in the vault, sealed: the payment method still pays (opened for the acquirer only).
      const pm = await storedCardId(a);
      const payout = await a.api.post(`${API}/payout-sync`, { pointOfSaleId: a.onlinePointOfSaleId, amount: 5, currency: 'DKK', paymentMethodId: pm });
      assert.equal(payout.body.transaction.state, 'SUCCESS');
    });
  });

  describe(`callback URL policy outside the sandbox (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      // Sandbox off and private URLs not allowed: the production stance. The merchant is set up
      // with the operator key only, so the sandbox routes are not needed.
      t = await startTestRuntime(kind, { sandbox: false, allowPrivateUrls: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('a notificationUrl resolving to loopback is refused with 422 on the field', async () => {
      for (const url of ['http://localhost:9/cb', 'http://127.0.0.1/cb']) {
        // 127.0.0.1 is not on the approved domain either; both must be refused.
        const res = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: url }));
        assert.equal(res.status, 422, url);
        assert.ok(res.body.errors['transaction.notificationUrl'], url);
      }
      const pm = await storedCardId(m);
      const payout = await m.api.post(`${API}/payout`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 1,
        currency: 'DKK',
        paymentMethodId: pm,
        notificationUrl: 'http://api.localhost/cb',
      });
      assert.equal(payout.status, 422);
      assert.match(payout.body.errors.notificationUrl[0], /loopback|resolve/);
    });
  });
}
