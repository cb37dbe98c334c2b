/**
 * INTERFACE §11.2 on POST /cit: every added field is validated (422 with the field path), kept on
 * the session record, and does what it says — allowedPaymentMethods limits what the window and the
 * sandbox control take, dynamicAmount lets the customer choose the amount (checked server-side),
 * ageVerification puts an age step before paying (a failed step is a FAILED transaction with
 * AGE_VERIFICATION_NOT_COMPLETED), and subscription.id replaces an ACTIVE subscription's payment
 * method (amount 0: nothing charged; amount > 0: charged and replaced).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { card, CARDS } from './helpers.js';
import { citBody, complete, formCard, ok, postForm, storedCard } from './cit-flows.js';

function errorsOf(res: { status: number; body: any; text: string }, what: string): Record<string, string[]> {
  assert.equal(res.status, 422, `${what}: HTTP ${res.status} ${res.text}`);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  return res.body.errors as Record<string, string[]>;
}

const hasField = (errors: Record<string, string[]>, field: string) => Object.keys(errors).some((k) => k === field || k.startsWith(`${field}.`));

for (const kind of await availableStores()) {
  describe(`CIT sessions: §11.2 fields (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(async () => {
      await t.close();
    });

    const cit = (overrides: Record<string, unknown>) => m.api.post(`${API}/cit`, citBody(m, overrides));
    const yearsAgoToday = async (yearsAgo: number) => {
      const now = ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now as string;
      return `${Number(now.slice(0, 4)) - yearsAgo}${now.slice(4, 10)}`;
    };

    test('validation: every added field is checked with a 422 on its path, before anything is stored', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ reference: 'order 1' }, 'reference'],
        [{ reference: 'x'.repeat(37) }, 'reference'],
        [{ reference: 'ordre-ø' }, 'reference'],
        [{ timeout: 0 }, 'timeout'],
        [{ timeout: 121 }, 'timeout'],
        [{ timeout: 1.5 }, 'timeout'],
        [{ allowedPaymentMethods: ['BITCOIN'] }, 'allowedPaymentMethods'],
        [{ allowedPaymentMethods: 'CARD' }, 'allowedPaymentMethods'],
        [{ dynamicAmount: 'yes' }, 'dynamicAmount'],
        [{ preAuthUrl: 'not a url' }, 'preAuthUrl'],
        [{ preAuthUrl: 'https://evil.example/hook' }, 'preAuthUrl'],
        [{ retryUrl: 'https://evil.example/retry' }, 'retryUrl'],
        [{ returnUrl: 'https://evil.example/return' }, 'returnUrl'],
        [{ reportExpired: 'true' }, 'reportExpired'],
        [{ ageVerification: { minimumAge: 100, country: 'DK' } }, 'ageVerification.minimumAge'],
        [{ ageVerification: { minimumAge: -1, country: 'DK' } }, 'ageVerification.minimumAge'],
        [{ ageVerification: { country: 'DK' } }, 'ageVerification.minimumAge'],
        [{ ageVerification: { minimumAge: 18, country: 'dk' } }, 'ageVerification.country'],
        [{ subscription: { id: 'not-a-uuid' } }, 'subscription.id'],
        [{ subscription: { id: '00000000-0000-4000-8000-000000000000' } }, 'subscription.id'],
        [{ subscription: { type: 'UNSCHEDULED', amount: -1 } }, 'subscription.amount'],
        [{ subscription: { type: 'UNSCHEDULED', amount: 1.5 } }, 'subscription.amount'],
        [{ subscription: {} }, 'subscription.type'],
      ];
      for (const [overrides, field] of cases) {
        const errors = errorsOf(await cit(overrides), JSON.stringify(overrides));
        assert.ok(hasField(errors, field), `${JSON.stringify(overrides)} → errors on ${field}: ${JSON.stringify(errors)}`);
      }
    });

    test('the session record carries every §11.2 field; processor is accepted and ignored; defaults are null/false', async () => {
      const full = ok(
        await cit({
          reference: 'Order-2026-11-23-abc',
          timeout: 120,
          allowedPaymentMethods: ['CARD', 'KLARNA', 'CARD'],
          dynamicAmount: true,
          preAuthUrl: 'http://localhost/pre-auth',
          retryUrl: 'https://shop.localhost/retry',
          returnUrl: 'https://shop.localhost/return',
          reportExpired: true,
          notificationUrl: 'http://localhost/cb',
          ageVerification: { minimumAge: 18, country: 'DK' },
          processor: ['SOMETHING'],
          customerId: 'cust-fields',
        }),
        'POST /cit',
      ).session;
      assert.equal(full.reference, 'Order-2026-11-23-abc');
      assert.equal(full.timeout, 120);
      assert.equal(Date.parse(full.expiresAt) - Date.parse(full.createdAt), 120 * 60_000);
      assert.deepEqual(full.allowedPaymentMethods, ['CARD', 'KLARNA']);
      assert.equal(full.dynamicAmount, true);
      assert.equal(full.preAuthUrl, 'http://localhost/pre-auth');
      assert.equal(full.retryUrl, 'https://shop.localhost/retry');
      assert.equal(full.returnUrl, 'https://shop.localhost/return');
      assert.equal(full.reportExpired, true);
      assert.equal(full.minimumAge, 18);
      assert.equal(full.ageVerified, false);
      assert.equal(full.attempts, 0);
      assert.equal(full.maxAttempts, 3);
      assert.equal(full.scaMode, 'SKIP');
      assert.deepEqual(full.exemptions, []);
      assert.equal(full.reportFailure, false);
      assert.equal(full.subscriptionId, null);
      assert.equal('processor' in full, false);
      assert.deepEqual(ok(await m.api.get(`${API}/sessions/${full.id}`), 'GET').session, full);

      const plain = ok(await cit({ allowedPaymentMethods: [] }), 'POST /cit').session;
      assert.equal(plain.allowedPaymentMethods, null, 'empty: all');
      assert.equal(plain.dynamicAmount, false);
      assert.equal(plain.minimumAge, null);
      assert.equal(plain.preAuthUrl, null);
      assert.equal(plain.retryUrl, null);
      assert.equal(plain.returnUrl, null);
      assert.equal(plain.reportExpired, false);
    });

    test('allowedPaymentMethods: the window offers only those; another method is refused (422) and nothing is charged', async () => {
      const body = ok(await cit({ allowedPaymentMethods: ['KLARNA', 'VIABILL'] }), 'POST /cit');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.equal(page.status, 200);
      assert.match(page.text, /Pay with Klarna/);
      assert.match(page.text, /Pay with ViaBill/);
      assert.doesNotMatch(page.text, /Card number/);
      assert.doesNotMatch(page.text, /Apple Pay/);

      const byCard = await complete(t, body.session.id, { card: card(CARDS.VISA) });
      assert.ok(hasField(errorsOf(byCard, 'card refused'), 'paymentMethodType'));
      const byApple = await complete(t, body.session.id, { paymentMethodType: 'APPLE_PAY' });
      assert.ok(hasField(errorsOf(byApple, 'Apple Pay refused'), 'paymentMethodType'));
      const formCardRefused = await postForm(t, body.paymentWindowUrl, { ...formCard(CARDS.VISA), paymentMethodType: 'CARD' });
      assert.equal(formCardRefused.status, 422);
      let session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.attempts, 0);
      assert.equal(session.state, 'PENDING');

      const paid = await postForm(t, body.paymentWindowUrl, { paymentMethodType: 'KLARNA' });
      assert.equal(paid.status, 200);
      assert.match(paid.text, /the payment is complete/);
      session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'COMPLETED');
      const tx = ok(await m.api.get(`${API}/transactions/${session.transactionId}`), 'tx').transaction;
      assert.equal(tx.paymentMethodType, 'KLARNA');
    });

    test('dynamicAmount: the customer enters the amount (checked server-side); the payment is for that amount', async () => {
      const body = ok(await cit({ amount: 5000, dynamicAmount: true }), 'POST /cit');
      const page = await t.client(null).get(new URL(body.paymentWindowUrl).pathname);
      assert.match(page.text, />Amount \(DKK\)<\/label>/);
      assert.match(page.text, /value="50\.00"/, 'the session amount is the default');

      for (const typed of ['abc', '0', '0.00', '-5', '12.345', '99999999999']) {
        const res = await postForm(t, body.paymentWindowUrl, { ...formCard(CARDS.VISA), amount: typed });
        assert.equal(res.status, 422, `amount "${typed}" refused`);
        assert.match(res.text, /Enter an amount greater than 0/);
      }
      for (const amount of [0, 1_000_000_000, 1.5]) {
        const res = await complete(t, body.session.id, { card: card(CARDS.VISA), amount });
        assert.ok(hasField(errorsOf(res, `amount ${amount}`), 'amount'));
      }
      assert.equal(ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session.attempts, 0, 'no attempt was made');

      const paid = await postForm(t, body.paymentWindowUrl, { ...formCard(CARDS.VISA), amount: '12.34' });
      assert.equal(paid.status, 200, paid.text);
      const session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(session.amount, 1234);
      const detail = ok(await m.api.get(`${API}/transactions/${session.transactionId}`), 'tx');
      assert.equal(detail.transaction.amount, 1234);
      assert.equal(detail.aggregates.authorized, 1234);

      // A fixed amount cannot be changed by the sandbox control.
      const fixed = ok(await cit({ amount: 700 }), 'POST /cit');
      assert.ok(hasField(errorsOf(await complete(t, fixed.session.id, { card: card(CARDS.VISA), amount: 800 }), 'fixed'), 'amount'));
      assert.equal(ok(await complete(t, fixed.session.id, { card: card(CARDS.VISA), amount: 700 }), 'same amount').session.state, 'COMPLETED');
    });

    test('ageVerification: under age or not verified → FAILED AGE_VERIFICATION_NOT_COMPLETED; of age → pays', async () => {
      const body = ok(await cit({ ageVerification: { minimumAge: 18, country: 'DK' }, maxAttempts: 3 }), 'POST /cit');
      const windowPath = new URL(body.paymentWindowUrl).pathname;
      const first = await t.client(null).get(windowPath);
      assert.match(first.text, /Verify your age/);
      assert.match(first.text, /at least 18 years old/);
      assert.doesNotMatch(first.text, /Card number/, 'no payment form before the age step');

      // Under age in the window: a FAILED attempt, no payment method.
      const young = await postForm(t, `${body.paymentWindowUrl}/age`, { dateOfBirth: await yearsAgoToday(17), verify: '1' });
      assert.equal(young.status, 303);
      let session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'PENDING');
      assert.equal(session.attempts, 1);
      assert.equal(session.errorCode, 'AGE_VERIFICATION_NOT_COMPLETED');
      assert.equal(session.ageVerified, false);
      const failed = ok(await m.api.get(`${API}/transactions/${session.transactionId}`), 'tx');
      assert.equal(failed.transaction.state, 'FAILED');
      assert.equal(failed.transaction.errorCode, 'AGE_VERIFICATION_NOT_COMPLETED');
      assert.equal(failed.transaction.sessionId, session.id);
      assert.equal(failed.aggregates.authorized, 0);
      const again = await t.client(null).get(windowPath);
      assert.match(again.text, /Your age could not be verified/);

      // The sandbox control without the eID step: not verified.
      const skipped = ok(await complete(t, body.session.id, { card: card(CARDS.VISA) }), 'complete without age');
      assert.equal(skipped.transaction.state, 'FAILED');
      assert.equal(skipped.transaction.errorCode, 'AGE_VERIFICATION_NOT_COMPLETED');
      session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.attempts, 2);
      const methods = ok(await m.api.get(`${API}/transactions/${skipped.transaction.id}`), 'tx').transaction.paymentMethodId;
      assert.ok(methods, 'the refused attempt carries the card it was given');

      // Of age (18 today): verified, then the payment form, then paid.
      const adult = await postForm(t, `${body.paymentWindowUrl}/age`, { dateOfBirth: await yearsAgoToday(18), verify: '1' });
      assert.equal(adult.status, 303);
      session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.ageVerified, true);
      assert.equal(session.attempts, 2, 'a passed age step is not an attempt');
      const form = await t.client(null).get(windowPath);
      assert.match(form.text, /Card number/);
      const paid = await postForm(t, body.paymentWindowUrl, formCard(CARDS.VISA));
      assert.equal(paid.status, 200);
      session = ok(await m.api.get(`${API}/sessions/${body.session.id}`), 'GET').session;
      assert.equal(session.state, 'COMPLETED');
      const list = ok(await m.api.get(`${API}/transactions?sessionId=${session.id}`), 'list').items.map((i: any) => i.transaction.errorCode);
      assert.deepEqual(list.sort(), ['AGE_VERIFICATION_NOT_COMPLETED', 'AGE_VERIFICATION_NOT_COMPLETED', null].sort());
    });

    test('ageVerification through the sandbox control: a date of birth of age pays; declining the step on the last attempt expires the session', async () => {
      const body = ok(await cit({ ageVerification: { minimumAge: 21, country: 'DK' } }), 'POST /cit');
      const done = ok(await complete(t, body.session.id, { card: card(CARDS.VISA), ageVerification: { dateOfBirth: '1980-02-29' } }), 'complete');
      assert.equal(done.transaction.state, 'SUCCESS');
      assert.equal(done.session.ageVerified, true);

      const last = ok(
        await cit({ ageVerification: { minimumAge: 18, country: 'DK' }, maxAttempts: 1, failureUrl: 'https://shop.localhost/failed' }),
        'POST /cit',
      );
      const declined = await postForm(t, `${last.paymentWindowUrl}/age`, { verify: '0' });
      assert.equal(declined.status, 303);
      assert.equal(declined.headers.location, 'https://shop.localhost/failed');
      const session = ok(await m.api.get(`${API}/sessions/${last.session.id}`), 'GET').session;
      assert.equal(session.state, 'EXPIRED');
      assert.equal(session.errorCode, 'AGE_VERIFICATION_NOT_COMPLETED');
      // An empty date of birth is a form error, not an attempt.
      const other = ok(await cit({ ageVerification: { minimumAge: 18, country: 'DK' } }), 'POST /cit');
      const empty = await postForm(t, `${other.paymentWindowUrl}/age`, { dateOfBirth: '', verify: '1' });
      assert.equal(empty.status, 422);
      assert.match(empty.text, /Enter your date of birth/);
      assert.equal(ok(await m.api.get(`${API}/sessions/${other.session.id}`), 'GET').session.attempts, 0);
    });

    test('subscription.id with amount 0: the ACTIVE subscription takes the new card; nothing is charged', async () => {
      const customerId = `cust-replace-${Date.now()}`;
      const stored = await storedCard(t, m, customerId, CARDS.VISA);
      const body = ok(await cit({ amount: 0, subscription: { id: stored.subscriptionId, amount: 4900 } }), 'POST /cit');
      assert.equal(body.session.subscriptionId, stored.subscriptionId);
      assert.equal(body.session.customerId, customerId, 'the customer is the subscription’s');
      assert.equal(body.session.subscription.id, stored.subscriptionId);
      assert.equal(body.session.subscription.amount, 4900);
      const done = ok(await complete(t, body.session.id, { card: card(CARDS.MASTERCARD) }), 'complete');
      assert.equal(done.session.state, 'COMPLETED');
      assert.equal(done.session.subscriptionId, stored.subscriptionId);
      assert.notEqual(done.session.paymentMethodId, stored.paymentMethodId);
      const detail = ok(await m.api.get(`${API}/transactions/${done.transaction.id}`), 'tx');
      assert.equal(detail.transaction.amount, 0);
      assert.equal(detail.transaction.subscriptionId, stored.subscriptionId);
      assert.equal(detail.aggregates.authorized, 0);
      assert.equal(detail.aggregates.captured, 0);
      const sub = ok(await m.api.get(`${API}/subscriptions/${stored.subscriptionId}`), 'sub');
      assert.equal(sub.subscription.state, 'ACTIVE');
      assert.equal(sub.paymentMethod.id, done.session.paymentMethodId);
      assert.equal(sub.paymentMethod.subType, 'Mastercard');
      // No second subscription was created for the customer.
      const subs = ok(await m.api.get(`${API}/subscriptions?customerId=${customerId}`), 'subs').items;
      assert.equal(subs.length, 1);
    });

    test('subscription.id with amount > 0: charged, then the payment method is replaced; a declined attempt changes nothing', async () => {
      const customerId = `cust-replace2-${Date.now()}`;
      const stored = await storedCard(t, m, customerId, CARDS.VISA);
      const body = ok(await cit({ amount: 1500, subscription: { id: stored.subscriptionId } }), 'POST /cit');
      const declined = ok(await complete(t, body.session.id, { card: card(CARDS.DECLINED) }), 'declined');
      assert.equal(declined.transaction.state, 'FAILED');
      let sub = ok(await m.api.get(`${API}/subscriptions/${stored.subscriptionId}`), 'sub');
      assert.equal(sub.paymentMethod.id, stored.paymentMethodId, 'a declined attempt keeps the old card');
      const done = ok(await complete(t, body.session.id, { card: card(CARDS.MASTERCARD) }), 'complete');
      assert.equal(done.transaction.state, 'SUCCESS');
      const detail = ok(await m.api.get(`${API}/transactions/${done.transaction.id}`), 'tx');
      assert.equal(detail.transaction.amount, 1500);
      assert.equal(detail.aggregates.authorized, 1500);
      sub = ok(await m.api.get(`${API}/subscriptions/${stored.subscriptionId}`), 'sub');
      assert.equal(sub.paymentMethod.id, done.session.paymentMethodId);
      assert.equal(sub.paymentMethod.subType, 'Mastercard');

      // Another currency than the subscription's, or another merchant's subscription: 422.
      assert.ok(hasField(errorsOf(await cit({ currency: 'EUR', subscription: { id: stored.subscriptionId } }), 'currency'), 'currency'));
      const other = await t.createMerchant();
      const foreign = await other.api.post(`${API}/cit`, citBody(other, { subscription: { id: stored.subscriptionId } }));
      assert.ok(hasField(errorsOf(foreign, 'foreign'), 'subscription.id'));
    });
  });
}
