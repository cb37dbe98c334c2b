import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import { newTransactionId } from '../../src/shared/ids.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { advanceClock } from '../online/helpers.js';
import { ok } from './support.js';
import { createMultiLink, multiLinkBody, newKey, ORDER_LINE, pathOf, visit } from './multi-link-support.js';

const today = () => new Date().toISOString().slice(0, 10);

for (const kind of await availableStores()) {
  describe(`multi-links: errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let planEur: string;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      planEur = ok(
        await m.api.post(`${API}/subscriptions/billing/plans`, {
          name: 'Euro plan',
          amount: 500,
          currency: 'EUR',
          maxAttempts: 1,
          interval: { period: 'MONTH', frequency: 1 },
        }),
        'plan',
      ).billingPlan.id;
    });
    after(() => t.close());

    test('bad input → 422 VALIDATION_ERROR with the documented shape, on the field at fault; nothing is stored', async () => {
      const line = (overrides: Record<string, unknown>) => ({ ...ORDER_LINE, ...overrides });
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{}, ['pointOfSaleId', 'amount', 'currency']],
        [{ pointOfSaleId: 'nope', amount: -1, currency: 'dkk' }, ['pointOfSaleId', 'amount', 'currency']],
        [multiLinkBody(m, { amount: 1.5 }), ['amount']],
        [multiLinkBody(m, { amount: '100' }), ['amount']],
        [multiLinkBody(m, { amount: 1_000_000_000 }), ['amount']],
        [multiLinkBody(m, { currency: 'ABC' }), ['currency']],
        [multiLinkBody(m, { timeout: 0 }), ['timeout']],
        [multiLinkBody(m, { timeout: 121 }), ['timeout']],
        [multiLinkBody(m, { scaMode: 'SOMETIMES', instantCapture: 'YES' }), ['scaMode', 'instantCapture']],
        [multiLinkBody(m, { textOnStatement: 'x'.repeat(40) }), ['textOnStatement']],
        [multiLinkBody(m, { reference: 'not a reference!' }), ['reference']],
        [multiLinkBody(m, { reference: 'r'.repeat(37) }), ['reference']],
        [multiLinkBody(m, { reportExpired: 'yes', dynamicAmount: 1 }), ['reportExpired', 'dynamicAmount']],
        [multiLinkBody(m, { successUrl: 'not a url' }), ['successUrl']],
        [multiLinkBody(m, { allowedPaymentMethods: ['CASH'] }), ['allowedPaymentMethods.0']],
        [multiLinkBody(m, { allowedPaymentMethods: 'CARD' }), ['allowedPaymentMethods']],
        [multiLinkBody(m, { ageVerification: { minimumAge: 100, country: 'SE' } }), ['ageVerification.minimumAge', 'ageVerification.country']],
        [multiLinkBody(m, { ageVerification: { country: 'DK' } }), ['ageVerification.minimumAge']],
        [multiLinkBody(m, { orderLines: [line({ description: '' })] }), ['orderLines.0.description']],
        [multiLinkBody(m, { orderLines: [line({}), line({ description: 'd'.repeat(256) })] }), ['orderLines.1.description']],
        [multiLinkBody(m, { orderLines: [line({ quantity: -1 })] }), ['orderLines.0.quantity']],
        [multiLinkBody(m, { orderLines: [line({ quantity: 1.5 })] }), ['orderLines.0.quantity']],
        [multiLinkBody(m, { orderLines: [line({ unitPrice: 200_000_001 })] }), ['orderLines.0.unitPrice']],
        [multiLinkBody(m, { orderLines: [line({ totalAmount: -1 })] }), ['orderLines.0.totalAmount']],
        [multiLinkBody(m, { orderLines: [line({ totalAmount: 200_000_001 })] }), ['orderLines.0.totalAmount']],
        [multiLinkBody(m, { orderLines: [line({ type: 'FOOD' })] }), ['orderLines.0.type']],
        [multiLinkBody(m, { orderLines: [line({ imageUrl: 'nope' })] }), ['orderLines.0.imageUrl']],
        [
          multiLinkBody(m, { orderLines: [{ description: 'x' }] }),
          ['orderLines.0.quantity', 'orderLines.0.unitPrice', 'orderLines.0.totalAmount', 'orderLines.0.type'],
        ],
        [multiLinkBody(m, { orderLines: Array.from({ length: 101 }, () => ORDER_LINE) }), ['orderLines']],
        [multiLinkBody(m, { subscription: { type: 'MONTHLY' } }), ['subscription.type']],
        [multiLinkBody(m, { subscription: { type: 'UNSCHEDULED', amount: -5 } }), ['subscription.amount']],
        [multiLinkBody(m, { subscription: { type: 'SCHEDULED' } }), ['subscription.interval']],
        [
          multiLinkBody(m, { subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: randomUUID() } } }),
          ['subscription.billingAgreement.billingPlanId'],
        ],
        [
          multiLinkBody(m, { subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: planEur } } }),
          ['subscription.billingAgreement.billingPlanId'],
        ],
        [
          multiLinkBody(m, {
            currency: 'EUR',
            subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: planEur, nextChargeAt: '2001-01-01' } },
          }),
          ['subscription.billingAgreement.nextChargeAt'],
        ],
        [multiLinkBody(m, { pointOfSaleId: randomUUID() }), ['pointOfSaleId']],
        [multiLinkBody(m, { pointOfSaleId: m.physicalPointOfSaleId }), ['pointOfSaleId']],
        [multiLinkBody(m, { notificationUrl: 'https://elsewhere.example/cb' }), ['notificationUrl']],
        [
          multiLinkBody(m, {
            successUrl: 'https://elsewhere.example/ok',
            failureUrl: 'https://elsewhere.example/no',
            retryUrl: 'https://elsewhere.example/retry',
            returnUrl: 'ftp://localhost/back',
          }),
          ['successUrl', 'failureUrl', 'retryUrl', 'returnUrl'],
        ],
        [multiLinkBody(m, { amount: 0 }), ['amount']],
      ];
      for (const [body, fields] of cases) {
        const res = await m.api.post(`${API}/multi-links`, body, { idempotencyKey: newKey() });
        const what = JSON.stringify(body).slice(0, 200);
        assert.equal(res.status, 422, `${what}: ${res.text}`);
        assert.equal(res.body.success, false, what);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR', what);
        assert.equal(typeof res.body.message, 'string', what);
        for (const field of fields) assert.ok(res.body.errors?.[field], `${what}: an error on ${field}: ${res.text}`);
        for (const [field, messages] of Object.entries(res.body.errors as Record<string, string[]>)) {
          for (const message of messages) assert.match(message, FIELD_RULE_PATTERN, `${field}: ${message}`);
        }
      }
      assert.equal(ok(await m.api.get(`${API}/multi-links`), 'list').total, 0, 'no link was written');
      // The same request fixed is accepted (a 422 before the claim stores nothing for the key).
      const key = newKey();
      assert.equal((await m.api.post(`${API}/multi-links`, multiLinkBody(m, { timeout: 0 }), { idempotencyKey: key })).status, 422);
      assert.equal((await m.api.post(`${API}/multi-links`, multiLinkBody(m, { timeout: 10 }), { idempotencyKey: key })).status, 200);
    });

    test('a billing agreement dated today is accepted, in the currency of its plan', async () => {
      const link = await createMultiLink(m, {
        currency: 'EUR',
        subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: planEur, nextChargeAt: today() } },
      });
      assert.equal(link.multiLink.subscription.billingAgreement.nextChargeAt, `${today()}T00:00:00.000Z`);
    });

    test('the database itself refuses out-of-range values (014 CHECKs), whoever writes', async () => {
      const created = await createMultiLink(m, { orderLines: [ORDER_LINE], subscription: { type: 'UNSCHEDULED', amount: 100 } });
      const entity = await t.runtime.store.multiLinks.findById(m.accountId, created.multiLink.id);
      assert.ok(entity);
      const subscription = entity.subscription!;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ amount: 1.5 }, 'multi_links_amount_check'],
        [{ amount: -1 }, 'multi_links_amount_check'],
        [{ amount: 1_000_000_000 }, 'multi_links_amount_check'],
        [{ currency: 'dkk' }, 'multi_links_currency_check'],
        [{ state: 'PAUSED' }, 'multi_links_state_check'],
        [{ timeout: 121 }, 'multi_links_timeout_minutes_check'],
        [{ scaMode: 'SOMETIMES' }, 'multi_links_sca_mode_check'],
        [{ subscription: { ...subscription, amount: -1 } }, 'multi_links_subscription_amount_check'],
        [{ subscription: { ...subscription, amount: 2.5 } }, 'multi_links_subscription_amount_check'],
        [{ orderLines: [{ ...ORDER_LINE, totalAmount: 200_000_001 }] }, 'multi_link_order_lines_total_amount_check'],
        [{ orderLines: [{ ...ORDER_LINE, unitPrice: 1.5 }] }, 'multi_link_order_lines_unit_price_check'],
        [{ orderLines: [{ ...ORDER_LINE, quantity: -1 }] }, 'multi_link_order_lines_quantity_check'],
        [{ orderLines: [{ ...ORDER_LINE, type: 'FOOD' }] }, 'multi_link_order_lines_type_check'],
      ];
      for (const [changes, constraint] of cases) {
        const bad = { ...entity, ...changes, id: newTransactionId(), idempotencyKey: null } as typeof entity;
        await assert.rejects(
          t.runtime.store.transaction((repos) => repos.multiLinks.insert(bad)),
          // PostgreSQL's integer types refuse a non-integer before any CHECK (as in 012).
          (err: Error) =>
            err.message.includes(constraint) ||
            (kind === 'postgres' && /\d\.\d/.test(JSON.stringify(changes)) && /invalid input syntax for type (bigint|integer)/.test(err.message)),
          `${JSON.stringify(changes)} refused by ${constraint}`,
        );
        assert.equal(await t.runtime.store.multiLinks.findById(m.accountId, bad.id), null, 'nothing of it stored');
      }
    });

    test('malformed JSON → 400; unknown id → 404; malformed id → 422 on multiLinkId; bad list queries → 422', async () => {
      const bad = await m.api.request('POST', `${API}/multi-links`, { raw: '{"amount":', contentType: 'application/json' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.errorCode, 'BAD_REQUEST');
      for (const res of [await m.api.get(`${API}/multi-links/ZZZZZZZZZZZ`), await m.api.delete(`${API}/multi-links/ZZZZZZZZZZZ`)]) {
        assert.equal(res.status, 404);
        assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
      }
      for (const id of ['not-an-id', randomUUID(), 'abcdefghjkm', 'ZZZZZZZZZZU']) {
        const res = await m.api.get(`${API}/multi-links/${id}`);
        assert.equal(res.status, 422, id);
        assert.ok(res.body.errors.multiLinkId, id);
      }
      const after = encodeURIComponent('2030-01-02T00:00:00.000Z');
      const before = encodeURIComponent('2030-01-01T00:00:00.000Z');
      for (const query of [
        'perPage=0',
        'perPage=501',
        'page=0',
        'state=CANCELLED',
        'pointOfSaleId=nope',
        'createdAfter=yesterday',
        'createdBefore=2030-13-01T00:00:00Z',
        `createdAfter=${after}&createdBefore=${before}`,
      ]) {
        const res = await m.api.get(`${API}/multi-links?${query}`);
        assert.equal(res.status, 422, `${query}: ${res.text}`);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR', query);
      }
    });

    test('the public pages: an unknown or malformed link id → 404 page; nothing needs a credential', async () => {
      for (const path of ['/ml/ZZZZZZZZZZZ', '/ml/not-a-link', '/ml/ZZZZZZZZZZZ/qr.png', '/ml/%3Cscript%3E']) {
        const res = await t.client(null).get(path);
        assert.equal(res.status, 404, path);
        assert.match(String(res.headers['content-type']), /^text\/html/, path);
        assert.match(res.text, /not found/i, path);
        assert.doesNotMatch(res.text, /<script>/, path);
      }
    });

    test('a link whose settings no longer make a session (its first charge date has passed) answers a 409 page and starts nothing', async () => {
      // An API key: access tokens expire on the service clock, which this test moves by days.
      const merchant = await t.createMerchant({ physical: false });
      const { key } = ok(await merchant.api.post(`${API}/management/api-keys`, { name: 'multi-link-tests' }), 'api key');
      const own = { ...merchant, api: t.client(key) };
      const plan = ok(
        await own.api.post(`${API}/subscriptions/billing/plans`, {
          name: 'Plan',
          amount: 500,
          currency: 'DKK',
          maxAttempts: 1,
          interval: { period: 'MONTH', frequency: 1 },
        }),
        'plan',
      ).billingPlan.id;
      const { url } = await createMultiLink(own, {
        subscription: { type: 'UNSCHEDULED', billingAgreement: { billingPlanId: plan, nextChargeAt: today() } },
      });
      const started = await visit(t, url);
      assert.equal(started.status, 303, started.text);
      await advanceClock(t, 3 * 86_400);
      const res = await visit(t, url);
      assert.equal(res.status, 409);
      assert.match(res.text, /cannot be used right now/i);
      assert.equal(res.headers.location, undefined);
      // Only the first visit's session (and its pending agreement) exist.
      const agreements = ok(await own.api.get(`${API}/subscriptions/billing/agreements`), 'agreements');
      assert.equal(agreements.total, 1);
      assert.equal(pathOf(url).startsWith('/ml/'), true);
    });
  });
}
