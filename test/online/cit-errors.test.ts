import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { card, CARDS } from './helpers.js';
import { citBody, complete, formCard, ok, postForm } from './cit-flows.js';

/** 422 VALIDATION_ERROR naming `field` with a message of `rule` ("[rule]: text"). */
function expect422(res: TestResponse, field: string, rule?: string) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  const messages: string[] = res.body.errors?.[field] ?? [];
  assert.ok(messages.length > 0, `errors name ${field}: ${res.text}`);
  if (rule)
    assert.ok(
      messages.some((msg) => msg.startsWith(`[${rule}]`)),
      `${field} carries [${rule}]: ${res.text}`,
    );
}

for (const kind of await availableStores()) {
  describe(`CIT sessions: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());
    const cit = (overrides: Record<string, unknown>) => m.api.post(`${API}/cit`, citBody(m, overrides));

    test('missing required fields and out-of-range values → 422 with the rule', async () => {
      const res = await m.api.post(`${API}/cit`, {});
      for (const field of ['pointOfSaleId', 'amount', 'currency']) expect422(res, field, 'required');
      expect422(await cit({ amount: -1 }), 'amount', 'min:0');
      expect422(await cit({ amount: 1_000_000_000 }), 'amount', 'max:999999999');
      expect422(await cit({ amount: 10.5 }), 'amount', 'int');
      expect422(await cit({ currency: 'dkk' }), 'currency', 'regex');
      expect422(await cit({ maxAttempts: 11 }), 'maxAttempts', 'max:10');
      expect422(await cit({ scaMode: 'SOMETIMES' }), 'scaMode', 'in:SKIP,NORMAL,FORCE');
      expect422(await cit({ textOnStatement: 'x'.repeat(40) }), 'textOnStatement', 'max:39');
    });

    test('URLs off the approved domain → 422 on each field', async () => {
      expect422(await cit({ notificationUrl: 'http://example.com/cb' }), 'notificationUrl', 'url');
      expect422(await cit({ successUrl: 'https://evillocalhost/ok' }), 'successUrl', 'url');
      expect422(await cit({ failureUrl: 'https://localhost.example.com/no' }), 'failureUrl', 'url');
    });

    test('subscription rules: SCHEDULED needs an interval; frequency 1–31; period from the list', async () => {
      expect422(await cit({ customerId: 'c', subscription: { type: 'SCHEDULED' } }), 'subscription.interval', 'required');
      expect422(
        await cit({ customerId: 'c', subscription: { type: 'SCHEDULED', interval: { period: 'MONTH', frequency: 32 } } }),
        'subscription.interval.frequency',
        'max:31',
      );
      expect422(
        await cit({ customerId: 'c', subscription: { type: 'SCHEDULED', interval: { period: 'FORTNIGHT', frequency: 1 } } }),
        'subscription.interval.period',
        'in:DAY,WEEK,MONTH,YEAR',
      );
      expect422(await cit({ customerId: 'c', subscription: { type: 'SOMETIMES' } }), 'subscription.type');
    });

    test('a PHYSICAL or unknown point of sale → 422 on pointOfSaleId; amount 0 without a customer → 422', async () => {
      expect422(await cit({ pointOfSaleId: m.physicalPointOfSaleId }), 'pointOfSaleId', 'in:ONLINE');
      expect422(await cit({ pointOfSaleId: '00000000-0000-4000-8000-000000000000' }), 'pointOfSaleId');
      expect422(await cit({ amount: 0 }), 'customerId', 'required');
    });

    test('sandbox complete: a bad card → 422 on card.*, nothing charged; no card nor wallet → 422; unknown session → 404; twice → 409', async () => {
      const s = ok(await cit({}), 'POST /cit').session;
      const bad = await complete(t, s.id, { card: card('4111111111111112') });
      expect422(bad, 'card.number');
      expect422(await complete(t, s.id, { card: card(CARDS.VISA, { expiryYear: 2020, expiryMonth: 1 }) }), 'card.expiryYear');
      expect422(await complete(t, s.id, {}), 'card', 'required');
      const still = ok(await m.api.get(`${API}/sessions/${s.id}`), 'GET').session;
      assert.equal(still.state, 'PENDING');
      assert.equal(still.attempts, 0, 'an invalid card is not an attempt');
      assert.equal((await complete(t, '00000000-0000-4000-8000-000000000000', { card: card(CARDS.VISA) })).status, 404);
      ok(await complete(t, s.id, { card: card(CARDS.VISA) }), 'first payment');
      const twice = await complete(t, s.id, { card: card(CARDS.VISA) });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.errorCode, 'CONFLICT');
    });

    test('the window: invalid card details → 422 page naming the fields (aria-invalid), unknown key → 404 page', async () => {
      const body = ok(await cit({}), 'POST /cit');
      const res = await postForm(t, body.paymentWindowUrl, { ...formCard('1234'), cvc: '1' });
      assert.equal(res.status, 422);
      assert.match(res.text, /Please correct the card details/);
      assert.match(res.text, /id="card-number"[^>]*aria-invalid="true"/);
      assert.match(res.text, /id="card-cvc"[^>]*aria-invalid="true"/);
      assert.match(res.text, /value="12"/, 'the expiry month is kept');
      assert.ok(!res.text.includes('value="1234"'), 'the card number is not echoed');
      assert.equal(ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session.attempts, 0);
      const missing = await t.client(null).get('/pay/pk_unknown');
      assert.equal(missing.status, 404);
      assert.match(missing.text, /Payment not found/);
    });

    test('GET /sessions/{id}: not a UUID → 422; unknown → 404', async () => {
      expect422(await m.api.get(`${API}/sessions/nope`), 'sessionId', 'uuid');
      assert.equal((await m.api.get(`${API}/sessions/00000000-0000-4000-8000-000000000000`)).status, 404);
    });
  });
}
