import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { card, CARDS } from '../online/helpers.js';
import { complete } from '../online/cit-flows.js';
import { createLink, getLink, linkBody, ok } from './support.js';

for (const kind of await availableStores()) {
  describe(`payment links: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      // Workers off: a payment whose acquirer call timed out stays in flight until the test drains the jobs.
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('the body is validated exactly as POST /cit: same status and same field errors', async () => {
      const bodies: Array<Record<string, unknown>> = [
        {},
        { pointOfSaleId: 'nope', amount: -1, currency: 'dkk' },
        linkBody(m, { amount: 1.5 }),
        linkBody(m, { amount: 1_000_000_000 }),
        linkBody(m, { timeout: 0, maxAttempts: 11 }),
        linkBody(m, { notificationUrl: 'https://elsewhere.example/cb' }),
        linkBody(m, { pointOfSaleId: m.physicalPointOfSaleId }),
        linkBody(m, { pointOfSaleId: randomUUID() }),
        linkBody(m, { amount: 0 }),
        linkBody(m, { subscription: { type: 'SCHEDULED' } }),
      ];
      for (const body of bodies) {
        const cit = await m.api.post(`${API}/cit`, body);
        const link = await m.api.post(`${API}/payment-links`, body);
        assert.equal(cit.status, 422, `cit ${JSON.stringify(body)}: ${cit.text}`);
        assert.equal(link.status, 422, JSON.stringify(body));
        assert.equal(link.body.errorCode, 'VALIDATION_ERROR');
        assert.deepEqual(link.body.errors, cit.body.errors, JSON.stringify(body));
      }
      assert.equal(ok(await m.api.get(`${API}/payment-links`), 'list').total, 0, 'no link was written');
    });

    test('malformed JSON → 400; unknown or malformed ids → 404 / 422; bad list queries → 422', async () => {
      const bad = await m.api.request('POST', `${API}/payment-links`, { raw: '{"amount":', contentType: 'application/json' });
      assert.equal(bad.status, 400);
      assert.equal((await m.api.get(`${API}/payment-links/${randomUUID()}`)).status, 404);
      assert.equal((await m.api.delete(`${API}/payment-links/${randomUUID()}`)).status, 404);
      const malformed = await m.api.get(`${API}/payment-links/not-a-uuid`);
      assert.equal(malformed.status, 422);
      assert.ok(malformed.body.errors.paymentLinkId);
      for (const query of ['perPage=0', 'perPage=501', 'page=0', 'state=OPEN', 'reference=']) {
        const res = await m.api.get(`${API}/payment-links?${query}`);
        assert.equal(res.status, 422, query);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR', query);
      }
    });

    test('a payment in flight cannot be cancelled (409), and nothing changes: the link is PAID once the payment is approved', async () => {
      const link = await createLink(m);
      const paying = ok(await complete(t, link.sessionId, { card: card(CARDS.TIMEOUT_THEN_APPROVED) }), 'complete');
      assert.equal(paying.session.state, 'PROCESSING');
      const del = await m.api.delete(`${API}/payment-links/${link.id}`);
      assert.equal(del.status, 409);
      assert.equal(del.body.errorCode, 'CONFLICT');
      // The link's change was rolled back with the refused session change (one commit).
      assert.equal((await getLink(m, link.id)).state, 'ACTIVE');
      assert.equal(ok(await m.api.get(`${API}/sessions/${link.sessionId}`), 'session').session.state, 'PROCESSING');

      await t.runtime.clock.advance(60);
      await t.runtime.runner.drain();
      const paid = await getLink(m, link.id);
      assert.equal(paid.state, 'PAID');
      assert.equal(paid.transactionId, paying.transaction.id);
    });
  });
}
