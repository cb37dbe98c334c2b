/**
 * Every card flow of a merchant whose acquirer agreement names Clearhaus reaches Clearhaus (the
 * fake of test/support/clearhaus-fake.ts), as INTERFACE §12.3 says: CIT through the hosted window
 * (with and without storing the card), payment links and multi-links, MIT (the series moving on),
 * MIT batch, a billing charge, MOTO, payouts (sync and async), capture, refund and void with their
 * amounts, renew refused. Each request signed, with Basic auth and a form body, our transaction id
 * as `reference`, the agreement's statement text when the payment has none, amounts in minor
 * units; the transaction and its callback name the agreement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordedRequest } from '../support/clearhaus-fake.js';
import { API, type TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, startReceiver, waitFor } from '../online/helpers.js';
import { postForm } from '../online/cit-flows.js';
import { createLink, getLink } from '../payment-links/support.js';
import { createMultiLink, visitStarts } from '../payment-links/multi-link-support.js';
import { capture, detail, refund, renew, voidTx } from '../lifecycle/fixtures.js';
import { chargesOf, createAgreement, createPlan, DAILY, moveClockTo, waitForCharge } from '../billing/support.js';
import { putAgreement } from './support.js';
import {
  assertWellFormed,
  authorizationsOf,
  cardOf,
  type ClearhausSetup,
  clearhausIdOf,
  expiryYear,
  freshPan,
  startClearhaus,
  withApiKey,
} from './clearhaus-support.js';

type Merchant = TestMerchant & { apiKey: string };

const AGREEMENT = { acquirer: 'clearhaus', mcc: '5734' };
const STATEMENT = 'Shop Example';

function ok(res: { status: number; text: string; body: any }, what: string): any {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

/** The window's form for a card (as the hosted page posts it). */
const windowCard = (number: string, cvc = '123') => ({ number, expiryMonth: '12', expiryYear: String(expiryYear()), cvc, holderName: 'Test Holder' });

/** The one authorization request of `transactionId`, approved, well formed. */
function theAuthorization(s: ClearhausSetup, m: Merchant, transactionId: string): RecordedRequest {
  const requests = authorizationsOf(s.fake, transactionId);
  assert.equal(requests.length, 1, `one authorization request for ${transactionId}`);
  const r = requests[0]!;
  assertWellFormed(r, m.apiKey);
  assert.equal(r.reply?.status, 201, JSON.stringify(r.reply?.body));
  assert.equal((r.reply?.body?.status as { code: number }).code, 20000);
  return r;
}

/** Keys of the `card[...]` dictionary a request carried. */
const cardKeys = (r: RecordedRequest) =>
  Object.keys(r.form)
    .filter((k) => k.startsWith('card['))
    .sort();

async function approvedTransaction(m: Merchant, id: string) {
  const d = ok(await m.api.get(`${API}/transactions/${id}`), 'GET transaction');
  assert.equal(d.transaction.state, 'SUCCESS', JSON.stringify(d.transaction));
  assert.deepEqual(d.acquirerAgreement, AGREEMENT, 'the transaction names its agreement');
  assert.equal(d.transaction.externalStatusCodes?.acquirer, '20000');
  return d;
}

for (const kind of await availableStores()) {
  describe(`clearhaus: every card flow on the wire (${kind})`, () => {
    let s: ClearhausSetup;
    let m: Merchant;
    let rx: CallbackReceiver;
    before(async () => {
      s = await startClearhaus(kind);
      m = await s.merchant();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await s.close();
    });

    const theAuthorizationOrNull = (transactionId: string): RecordedRequest | null => authorizationsOf(s.fake, transactionId)[0] ?? null;

    /** POST /cit and pay in the hosted window; the completed session. */
    async function payInWindow(body: Record<string, unknown>, pan: string, cvc = '123') {
      const init = ok(await m.api.post(`${API}/cit`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 2500, currency: 'DKK', ...body }), 'POST /cit');
      const res = await postForm(s.t, init.paymentWindowUrl, windowCard(pan, cvc));
      assert.ok([200, 303].includes(res.status), `window: ${res.status} ${res.text.slice(0, 300)}`);
      const session = ok(await m.api.get(`${API}/sessions/${init.session.id}`), 'GET session').session;
      assert.equal(session.state, 'COMPLETED', JSON.stringify(session));
      return session as { id: string; transactionId: string; subscriptionId: string | null; paymentMethodId: string | null };
    }

    async function mit(subscriptionId: string, extra: Record<string, unknown> = {}) {
      const path = rx.newPath('mit');
      const tx = ok(
        await m.api.post(`${API}/mit`, { subscriptionId, amount: 1000, currency: 'DKK', reference: 'mit', notificationUrl: rx.url(path), ...extra }),
        'POST /mit',
      ).transaction;
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      return { tx, hit };
    }

    const moto = async (pan: string, transaction: Record<string, unknown> = {}) =>
      ok(
        await m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'moto', instantCapture: 'OFF', ...transaction },
          card: cardOf(pan),
        }),
        'POST /moto',
      );

    test('CIT in the window without storing the card: card with CSC, initiator=cardholder, no series, the agreement statement text', async () => {
      const pan = freshPan();
      const session = await payInWindow({ reference: 'plain' }, pan, '321');
      const r = theAuthorization(s, m, session.transactionId);
      assert.equal(r.form.amount, '2500');
      assert.equal(r.form.currency, 'DKK');
      assert.equal(r.form.reference, session.transactionId);
      assert.equal(r.form.initiator, 'cardholder');
      assert.equal(r.form.text_on_statement, STATEMENT, 'the agreement statement text: the payment has none');
      assert.deepEqual(cardKeys(r), ['card[csc]', 'card[expire_month]', 'card[expire_year]', 'card[pan]']);
      assert.deepEqual(
        [r.form['card[pan]'], r.form['card[csc]'], r.form['card[expire_month]'], r.form['card[expire_year]']],
        [pan, '321', '12', String(expiryYear())],
      );
      for (const key of ['credential_on_file', 'series[type]', 'series[previous][id]']) assert.equal(r.form[key], undefined, key);
      assert.equal(r.form.ip, '127.0.0.1', "the customer's IP (the window's client)");
      await approvedTransaction(m, session.transactionId);
    });

    test('CIT storing the card: SCHEDULED → series[type]=recurring, UNSCHEDULED and a saved card → unscheduled; the approved id becomes the series reference', async () => {
      const cases = [
        { subscription: { type: 'SCHEDULED', interval: { period: 'MONTH', frequency: 1 } }, expected: 'recurring' },
        { subscription: { type: 'UNSCHEDULED' }, expected: 'unscheduled' },
        { subscription: undefined, expected: 'unscheduled' },
      ];
      for (const { subscription, expected } of cases) {
        const customerId = `cust-${expected}-${Math.random().toString(36).slice(2, 8)}`;
        const session = await payInWindow({ customerId, textOnStatement: 'Box club', ...(subscription ? { subscription } : {}) }, freshPan());
        const r = theAuthorization(s, m, session.transactionId);
        assert.equal(r.form.initiator, 'cardholder');
        assert.equal(r.form.credential_on_file, 'store', `${expected}: the card is stored`);
        assert.equal(r.form['series[type]'], expected);
        assert.equal(r.form['series[previous][id]'], undefined);
        assert.ok(r.form['card[csc]'], 'the cardholder typed the CSC');
        assert.equal(r.form.text_on_statement, 'Box club', "the payment's own statement text first");
        assert.ok(session.paymentMethodId, 'a stored card');
        const method = await s.t.runtime.store.paymentMethods.findById(m.accountId, session.paymentMethodId!);
        assert.equal(method?.series?.reference, clearhausIdOf(s.fake, session.transactionId), 'the series reference is the Clearhaus authorization id');
        assert.equal(method?.series?.type, expected);
        await approvedTransaction(m, session.transactionId);
      }
    });

    test('MIT: series[previous][id] = the latest approved authorization, no CSC; a second MIT names the first; callbacks name the agreement', async () => {
      const pan = freshPan('5');
      const session = await payInWindow({ customerId: 'cust-mit', subscription: { type: 'UNSCHEDULED' } }, pan);
      const first = clearhausIdOf(s.fake, session.transactionId);

      const one = await mit(session.subscriptionId!, { amount: 1234, textOnStatement: 'Monthly box' });
      assert.equal(one.hit.body.transaction.state, 'SUCCESS', JSON.stringify(one.hit.body.transaction));
      assert.deepEqual(one.hit.body.acquirerAgreement, AGREEMENT, 'the callback names the agreement');
      assert.equal(one.hit.body.transaction.externalStatusCodes.acquirer, '20000');
      const r1 = theAuthorization(s, m, one.tx.id);
      assert.equal(r1.form['series[previous][id]'], first, 'the CIT that started the series');
      assert.equal(r1.form['card[csc]'], undefined, 'no CSC on a merchant-initiated payment');
      assert.equal(r1.form['card[pan]'], pan);
      assert.notEqual(r1.form.initiator, 'cardholder');
      assert.equal(r1.form['series[type]'], undefined);
      assert.notEqual(r1.form.credential_on_file, 'store');
      assert.equal(r1.form.amount, '1234');
      assert.equal(r1.form.text_on_statement, 'Monthly box');
      assert.equal(r1.form.reference, one.tx.id);
      await approvedTransaction(m, one.tx.id);

      const two = await mit(session.subscriptionId!, { amount: 800 });
      assert.equal(two.hit.body.transaction.state, 'SUCCESS', JSON.stringify(two.hit.body.transaction));
      const r2 = theAuthorization(s, m, two.tx.id);
      assert.equal(r2.form['series[previous][id]'], clearhausIdOf(s.fake, one.tx.id), 'the reference moved on to the first MIT');
      assert.equal(r2.form.text_on_statement, STATEMENT, 'the agreement statement text');
      const method = await s.t.runtime.store.paymentMethods.findById(m.accountId, session.paymentMethodId!);
      assert.equal(method?.series?.reference, clearhausIdOf(s.fake, two.tx.id));
    });

    test("a PUT that only changes the statement text keeps the cards' series: the next MIT still names the latest approved authorization", async () => {
      const own = await s.merchant();
      const init = ok(
        await own.api.post(`${API}/cit`, {
          pointOfSaleId: own.onlinePointOfSaleId,
          amount: 100,
          currency: 'DKK',
          customerId: 'cust-put',
          subscription: { type: 'UNSCHEDULED' },
        }),
        'POST /cit',
      );
      assert.ok([200, 303].includes((await postForm(s.t, init.paymentWindowUrl, windowCard(freshPan()))).status));
      const session = ok(await own.api.get(`${API}/sessions/${init.session.id}`), 'session').session;
      assert.equal(session.state, 'COMPLETED');
      ok(
        await putAgreement(s.t.operator, own.accountId, { acquirer: 'clearhaus', apiKey: own.apiKey, mcc: '5734', textOnStatement: 'New Name' }),
        'PUT the same agreement with a new statement text',
      );
      const path = rx.newPath('after-put');
      const tx = ok(
        await own.api.post(`${API}/mit`, {
          subscriptionId: session.subscriptionId,
          amount: 400,
          currency: 'DKK',
          reference: 'after-put',
          notificationUrl: rx.url(path),
        }),
        'POST /mit',
      ).transaction;
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS', `${JSON.stringify(hit.body.transaction)}`);
      const r = authorizationsOf(s.fake, tx.id)[0];
      assert.equal(r?.form['series[previous][id]'], clearhausIdOf(s.fake, session.transactionId));
      assert.equal(r?.form.text_on_statement, 'New Name');
    });

    test('MIT batch: each entry names the latest approved authorization of its own card', async () => {
      const a = await payInWindow({ customerId: 'cust-batch-a', subscription: { type: 'UNSCHEDULED' } }, freshPan());
      const b = await payInWindow({ customerId: 'cust-batch-b', subscription: { type: 'SCHEDULED', interval: { period: 'MONTH', frequency: 1 } } }, freshPan());
      const paths = [rx.newPath('batch'), rx.newPath('batch')];
      const body = ok(
        await m.api.post(`${API}/mit/batch`, {
          transactions: [
            { subscriptionId: a.subscriptionId, amount: 501, currency: 'DKK', reference: 'batch-a', notificationUrl: rx.url(paths[0]!) },
            { subscriptionId: b.subscriptionId, amount: 502, currency: 'DKK', reference: 'batch-b', notificationUrl: rx.url(paths[1]!) },
          ],
        }),
        'POST /mit/batch',
      );
      for (const [i, session] of [a, b].entries()) {
        const id = body.transactions[i].transaction.id as string;
        const hit = await waitFor(() => rx.at(paths[i]!)[0], `batch callback ${i}`);
        assert.equal(hit.body.transaction.state, 'SUCCESS', JSON.stringify(hit.body.transaction));
        assert.deepEqual(hit.body.acquirerAgreement, AGREEMENT);
        const r = theAuthorization(s, m, id);
        assert.equal(r.form['series[previous][id]'], clearhausIdOf(s.fake, session.transactionId));
        assert.equal(r.form.amount, String(501 + i));
        assert.equal(r.form['card[csc]'], undefined);
      }
    });

    test('two MITs of one subscription at once: the second waits for the first and names its authorization', async () => {
      const session = await payInWindow({ customerId: 'cust-twice', subscription: { type: 'UNSCHEDULED' } }, freshPan());
      const paths = [rx.newPath('twice'), rx.newPath('twice')];
      const body = ok(
        await m.api.post(`${API}/mit/batch`, {
          transactions: paths.map((p, i) => ({
            subscriptionId: session.subscriptionId,
            amount: 300 + i,
            currency: 'DKK',
            reference: `twice-${i}`,
            notificationUrl: rx.url(p),
          })),
        }),
        'POST /mit/batch',
      );
      const hits = await Promise.all(paths.map((p, i) => waitFor(() => rx.at(p)[0], `callback ${i}`)));
      const ids: string[] = body.transactions.map((r: any) => r.transaction.id);
      const previous = ids.map((id) => theAuthorizationOrNull(id)?.form['series[previous][id]']);
      const states = hits.map((h) => `${h.body.transaction.state}/${h.body.transaction.errorCode}/${h.body.transaction.externalStatusCodes?.acquirer}`);
      assert.deepEqual(states, ['SUCCESS/null/20000', 'SUCCESS/null/20000'], `previous ids sent: ${JSON.stringify(previous)}`);
      // Whichever went first named the window's authorization; the other named the first's.
      const first = previous.indexOf(clearhausIdOf(s.fake, session.transactionId));
      assert.ok(first >= 0, `previous ids sent: ${JSON.stringify(previous)}`);
      assert.equal(previous[1 - first], clearhausIdOf(s.fake, ids[first]!));
      // The card's series moved on to the later one: a third MIT names it.
      const path = rx.newPath('third');
      const third = ok(
        await m.api.post(`${API}/mit`, {
          subscriptionId: session.subscriptionId,
          amount: 302,
          currency: 'DKK',
          reference: 'third',
          notificationUrl: rx.url(path),
        }),
        'POST /mit',
      ).transaction;
      await waitFor(() => rx.at(path)[0], 'third callback');
      assert.equal(theAuthorizationOrNull(third.id)?.form['series[previous][id]'], clearhausIdOf(s.fake, ids[1 - first]!));
    });

    test('eight MITs of one card at once: each names the authorization of the one before, none is refused', async () => {
      const session = await payInWindow({ customerId: 'cust-eight', subscription: { type: 'UNSCHEDULED' } }, freshPan());
      const paths = Array.from({ length: 8 }, () => rx.newPath('eight'));
      const body = ok(
        await m.api.post(`${API}/mit/batch`, {
          transactions: paths.map((p, i) => ({ subscriptionId: session.subscriptionId, amount: 310 + i, currency: 'DKK', notificationUrl: rx.url(p) })),
        }),
        'POST /mit/batch',
      );
      const hits = await Promise.all(paths.map((p, i) => waitFor(() => rx.at(p)[0], `callback ${i}`)));
      assert.deepEqual(
        hits.map((h) => h.body.transaction.state),
        Array(8).fill('SUCCESS'),
      );
      const ids: string[] = body.transactions.map((r: any) => clearhausIdOf(s.fake, r.transaction.id));
      const previous = body.transactions.map((r: any) => theAuthorizationOrNull(r.transaction.id)?.form['series[previous][id]']);
      // One chain: the window's authorization, then each one named exactly once by the next.
      const first = clearhausIdOf(s.fake, session.transactionId);
      assert.equal(new Set(previous).size, 8, `each authorization named once: ${JSON.stringify(previous)}`);
      assert.ok(previous.includes(first), 'the first names the window');
      assert.ok(
        previous.every((p: string, i: number) => p !== ids[i] && (p === first || ids.includes(p))),
        JSON.stringify(previous),
      );
    });

    test('payment link and multi-link: paid in the window, each an authorization with the CSC, initiator=cardholder and our id', async () => {
      const link = await createLink(m, { amount: 1999, reference: 'inv-ch' });
      const paid = await postForm(s.t, link.url, windowCard(freshPan()));
      assert.ok([200, 303].includes(paid.status), `link form: ${paid.status}`);
      const after = await getLink(m, link.id);
      assert.equal(after.state, 'PAID');
      const r = theAuthorization(s, m, after.transactionId);
      assert.deepEqual([r.form.amount, r.form.initiator, r.form.text_on_statement], ['1999', 'cardholder', STATEMENT]);
      assert.ok(r.form['card[csc]']);
      await approvedTransaction(m, after.transactionId);

      const multi = await createMultiLink(m, { amount: 1500, textOnStatement: 'Coffee shop' });
      const { location, session } = await visitStarts(s.t, m, multi.url);
      const res = await postForm(s.t, location, windowCard(freshPan('2221')));
      assert.ok([200, 303].includes(res.status), `multi-link window: ${res.status}`);
      const done = ok(await m.api.get(`${API}/sessions/${session.id}`), 'GET session').session;
      assert.equal(done.state, 'COMPLETED');
      const r2 = theAuthorization(s, m, done.transactionId);
      assert.deepEqual([r2.form.amount, r2.form.initiator, r2.form.text_on_statement], ['1500', 'cardholder', 'Coffee shop']);
      assert.ok(r2.form['card[csc]']);
      await approvedTransaction(m, done.transactionId);
    });

    test('MOTO: the moto[...] method without CSC; an invalid statement text of the payment gives way to the agreement one', async () => {
      const pan = freshPan();
      const body = await moto(pan, { textOnStatement: '123456' });
      assert.equal(body.transaction.state, 'SUCCESS', JSON.stringify(body.transaction));
      assert.deepEqual(body.acquirerAgreement, AGREEMENT, 'the answer names the agreement');
      assert.equal(body.transaction.externalStatusCodes.acquirer, '20000');
      const r = theAuthorization(s, m, body.transaction.id);
      assert.deepEqual(
        Object.keys(r.form)
          .filter((k) => k.includes('['))
          .sort(),
        ['moto[expire_month]', 'moto[expire_year]', 'moto[pan]'],
        'the moto method alone: no card[...], no csc, no series',
      );
      assert.equal(r.form['moto[pan]'], pan);
      assert.equal(r.form.text_on_statement, STATEMENT, 'an all-digit text breaks Clearhaus rules: the agreement text instead');
      assert.notEqual(r.form.initiator, 'merchant');
      assert.equal(r.form.credential_on_file, undefined);
      await approvedTransaction(m, body.transaction.id);
    });

    test('instant capture: Clearhaus authorizes, then the engine captures the whole amount', async () => {
      const body = await moto(freshPan(), { amount: 1200, instantCapture: 'NO_VOID' });
      assert.equal(body.transaction.state, 'SUCCESS');
      assert.deepEqual([body.aggregates.authorized, body.aggregates.captured], [1200, 1200]);
      const authId = clearhausIdOf(s.fake, body.transaction.id);
      const captures = s.fake.requestsTo(`/authorizations/${authId}/captures`);
      assert.deepEqual(
        captures.map((r) => r.form.amount),
        ['1200'],
      );
      assertWellFormed(captures[0]!, m.apiKey);
      assert.equal(s.fake.amounts(authId).captured, 1200);
    });

    test('a CIT of amount 0 stores the card with a zero authorization that starts the series', async () => {
      const session = await payInWindow({ amount: 0, customerId: 'cust-zero', subscription: { type: 'UNSCHEDULED' } }, freshPan());
      const r = theAuthorization(s, m, session.transactionId);
      assert.deepEqual([r.form.amount, r.form.credential_on_file, r.form['series[type]']], ['0', 'store', 'unscheduled']);
      const next = await mit(session.subscriptionId!, { amount: 990 });
      assert.equal(next.hit.body.transaction.state, 'SUCCESS', JSON.stringify(next.hit.body.transaction));
      assert.equal(theAuthorization(s, m, next.tx.id).form['series[previous][id]'], clearhausIdOf(s.fake, session.transactionId));
    });

    test('capture and refund always name their amount (partial, then the rest); the fake and our aggregates agree', async () => {
      const tx = (await moto(freshPan(), { amount: 1000 })).transaction;
      const authId = clearhausIdOf(s.fake, tx.id);
      const captures = () => s.fake.requestsTo(`/authorizations/${authId}/captures`);
      const refunds = () => s.fake.requestsTo(`/authorizations/${authId}/refunds`);

      assert.equal((await capture(m, tx.id, 400)).body.success, true);
      assert.equal((await capture(m, tx.id, 600)).body.success, true, 'the rest');
      assert.deepEqual(
        captures().map((r) => r.form.amount),
        ['400', '600'],
      );
      assert.equal((await refund(m, tx.id, 250)).body.success, true);
      assert.deepEqual(
        refunds().map((r) => r.form.amount),
        ['250'],
      );
      const rest = await refund(m, tx.id, 750);
      assert.equal(rest.body.success, true, rest.text);
      const amounts = refunds().map((r) => Number(r.form.amount));
      assert.ok(
        amounts.every((a) => Number.isInteger(a) && a > 0),
        `every refund names its amount: ${amounts}`,
      );
      assert.equal(
        amounts.slice(1).reduce((a, b) => a + b, 0),
        750,
        `the rest, refunded capture by capture: ${amounts}`,
      );
      for (const r of [...captures(), ...refunds()]) {
        assertWellFormed(r, m.apiKey);
        assert.equal((r.reply?.body?.status as { code: number }).code, 20000);
      }
      const fake = s.fake.amounts(authId);
      assert.deepEqual([fake.authorized, fake.captured, fake.refunded], [1000, 1000, 1000]);
      const d = await detail(m, tx.id);
      assert.deepEqual([d.aggregates.authorized, d.aggregates.captured, d.aggregates.refunded], [1000, 1000, 1000]);
      assert.ok(
        d.operations.filter((o) => o.type !== 'AUTHORIZATION').every((o) => o.state === 'SUCCESS'),
        JSON.stringify(d.operations),
      );
    });

    test('void: POST /authorizations/{id}/voids, signed with an empty body; the fake and our aggregates agree', async () => {
      const tx = (await moto(freshPan(), { amount: 700 })).transaction;
      const authId = clearhausIdOf(s.fake, tx.id);
      const res = await voidTx(m, tx.id, -1);
      assert.equal(res.body.success, true, res.text);
      const voids = s.fake.requestsTo(`/authorizations/${authId}/voids`);
      assert.equal(voids.length, 1);
      assertWellFormed(voids[0]!, m.apiKey);
      assert.equal(voids[0]!.rawBody.length, 0, 'a void takes no parameters');
      assert.equal(s.fake.amounts(authId).voided, true);
      const d = await detail(m, tx.id);
      assert.deepEqual([d.aggregates.voided, d.aggregates.remaining], [700, 0]);
    });

    test('a partial void: Clearhaus releases the whole authorization, so the books must not keep the rest capturable', async () => {
      const tx = (await moto(freshPan(), { amount: 1000 })).transaction;
      const authId = clearhausIdOf(s.fake, tx.id);
      const res = await voidTx(m, tx.id, 300);
      assert.equal(res.status, 200, res.text);
      const sent = s.fake.requestsTo(`/authorizations/${authId}/voids`).length;
      const remaining = (await detail(m, tx.id)).aggregates.remaining;
      if (sent === 0) {
        // Refused before Clearhaus: nothing moved anywhere.
        assert.equal(s.fake.amounts(authId).voided, false);
        assert.equal(remaining, 1000);
        return;
      }
      assert.equal(s.fake.amounts(authId).voided, true, 'Clearhaus voided the whole authorization');
      assert.equal(remaining, 0, 'so nothing is left to capture in our books either');
      const before = s.fake.requests.length;
      const late = await capture(m, tx.id, 700);
      assert.equal(late.body.success, false, late.text);
      assert.equal(s.fake.requests.length, before, 'no capture of a voided authorization is sent');
    });

    test('the rest of a partly captured authorization: released in the books without a void Clearhaus would refuse', async () => {
      const tx = (await moto(freshPan(), { amount: 1000 })).transaction;
      const authId = clearhausIdOf(s.fake, tx.id);
      const res = await capture(m, tx.id, 700, { voidRemaining: true });
      assert.equal(res.body.success, true, res.text);
      const after = await detail(m, tx.id);
      assert.deepEqual([after.aggregates.captured, after.aggregates.voided, after.aggregates.remaining], [700, 300, 0], JSON.stringify(after.aggregates));
      assert.equal(s.fake.requestsTo(`/authorizations/${authId}/voids`).length, 0, 'no void after a capture is sent');
      assert.equal(s.fake.amounts(authId).captured, 700);

      const other = (await moto(freshPan(), { amount: 1000 })).transaction;
      const otherId = clearhausIdOf(s.fake, other.id);
      assert.equal((await capture(m, other.id, 250)).body.success, true);
      const released = await voidTx(m, other.id, -1);
      assert.equal(released.body.success, true, released.text);
      assert.equal((await detail(m, other.id)).aggregates.remaining, 0);
      assert.equal(s.fake.requestsTo(`/authorizations/${otherId}/voids`).length, 0);
    });

    test('renew is not offered by Clearhaus: success false, NOT_SUPPORTED_FOR_PAYMENT_METHOD, no request', async () => {
      const tx = (await moto(freshPan(), { amount: 500 })).transaction;
      const before = s.fake.requests.length;
      const res = await renew(m, tx.id);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.success, false);
      assert.equal((res.body.errorCode ?? res.body.operations?.[0]?.errorCode)?.code, 'NOT_SUPPORTED_FOR_PAYMENT_METHOD', res.text);
      assert.equal(s.fake.requests.length, before, 'nothing sent');
    });

    test('payouts sync and async: POST /credits with the card (no CSC), our id, the agreement statement text; callback names the agreement', async () => {
      const pan = freshPan();
      const stored = await moto(pan, { customerId: 'cust-payout' });
      const paymentMethodId = stored.transaction.paymentMethodId as string;
      assert.ok(paymentMethodId);

      const sync = ok(
        await m.api.post(`${API}/payout-sync`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 640, currency: 'DKK', paymentMethodId }),
        'payout-sync',
      );
      assert.equal(sync.transaction.state, 'SUCCESS', JSON.stringify(sync.transaction));
      assert.equal(sync.aggregates.paidOut, 640);
      assert.deepEqual(sync.acquirerAgreement, AGREEMENT);
      assert.equal(sync.transaction.externalStatusCodes.acquirer, '20000');

      const path = rx.newPath('payout');
      const queued = ok(
        await m.api.post(`${API}/payout`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 750,
          currency: 'DKK',
          paymentMethodId,
          notificationUrl: rx.url(path),
        }),
        'payout',
      );
      const hit = await waitFor(() => rx.at(path)[0], 'payout callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS', JSON.stringify(hit.body.transaction));
      assert.equal(hit.body.aggregates.paidOut, 750);
      assert.deepEqual(hit.body.acquirerAgreement, AGREEMENT);
      assert.equal(hit.body.transaction.externalStatusCodes.acquirer, '20000');

      for (const [id, amount] of [
        [sync.transaction.id as string, '640'],
        [queued.transaction.id as string, '750'],
      ] as const) {
        const credits = s.fake.requestsTo('/credits').filter((r) => r.form.reference === id);
        assert.equal(credits.length, 1, `one credit for ${id}`);
        const r = credits[0]!;
        assertWellFormed(r, m.apiKey);
        assert.equal((r.reply?.body?.status as { code: number }).code, 20000);
        assert.deepEqual([r.form.amount, r.form.currency, r.form.text_on_statement, r.form['card[pan]']], [amount, 'DKK', STATEMENT, pan]);
        assert.equal(r.form['card[csc]'], undefined, 'a stored card has no CSC');
        await approvedTransaction(m, id);
      }
    });

    test('amounts in minor units: JPY and ISK (exponent 0), KWD (exponent 3) as given; a currency Clearhaus does not list fails ACQUIRER_DECLINED without a request', async () => {
      for (const [currency, amount] of [
        ['JPY', 1234],
        ['ISK', 990],
        ['KWD', 12_345],
      ] as const) {
        const body = await moto(freshPan(), { amount, currency });
        assert.equal(body.transaction.state, 'SUCCESS', `${currency}: ${JSON.stringify(body.transaction)}`);
        const r = theAuthorization(s, m, body.transaction.id);
        assert.deepEqual([r.form.amount, r.form.currency], [String(amount), currency]);
        assert.equal(s.fake.amounts(clearhausIdOf(s.fake, body.transaction.id)).authorized, amount);
        // A capture in the same unit.
        assert.equal((await capture(m, body.transaction.id, amount)).body.success, true);
        assert.equal(s.fake.requestsTo(`/authorizations/${clearhausIdOf(s.fake, body.transaction.id)}/captures`)[0]?.form.amount, String(amount));
      }
      const before = s.fake.requests.length;
      const unlisted = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'BGN', reference: 'bgn', instantCapture: 'OFF' },
        card: cardOf(freshPan()),
      });
      assert.equal(unlisted.status, 200, unlisted.text);
      assert.equal(unlisted.body.transaction.state, 'FAILED');
      assert.equal(unlisted.body.transaction.errorCode, 'ACQUIRER_DECLINED');
      assert.equal(s.fake.requests.length, before, 'nothing sent for BGN');
    });
  });

  describe(`clearhaus: a billing charge on the wire (${kind})`, () => {
    let s: ClearhausSetup;
    before(async () => {
      s = await startClearhaus(kind);
    });
    after(() => s.close());

    test('a due charge is a MIT naming the series of the subscription card', async () => {
      const m = await withApiKey(s.t, await s.merchant());
      const init = ok(
        await m.api.post(`${API}/cit`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 100,
          currency: 'DKK',
          customerId: 'cust-billing',
          subscription: { type: 'SCHEDULED', interval: DAILY },
        }),
        'POST /cit',
      );
      const pan = freshPan();
      assert.ok([200, 303].includes((await postForm(s.t, init.paymentWindowUrl, windowCard(pan))).status));
      const session = ok(await m.api.get(`${API}/sessions/${init.session.id}`), 'session').session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(authorizationsOf(s.fake, session.transactionId)[0]?.form['series[type]'], 'recurring');
      const plan = await createPlan(m.api, { amount: 4900 });
      const agreement = await createAgreement(m.api, session.subscriptionId, plan.id);
      await moveClockTo(s.t, Date.parse(agreement.nextChargeAt) + 1000);
      const [charge] = await waitForCharge(m.api, agreement.id, (c) => c.length === 1 && c[0].state !== 'PROCESSING', 'the charge');
      assert.equal(charge.state, 'SUCCESS', JSON.stringify(charge));
      assert.equal((await chargesOf(m.api, agreement.id)).length, 1);
      const r = theAuthorization(s, m, charge.transactionId);
      assert.equal(r.form.amount, '4900');
      assert.equal(r.form['series[previous][id]'], clearhausIdOf(s.fake, session.transactionId));
      assert.equal(r.form['card[csc]'], undefined);
      assert.equal(r.form['card[pan]'], pan);
      await approvedTransaction(m, charge.transactionId);
    });

    test('a card stored before the Clearhaus agreement has no series there: its MIT fails INVALID_AGREEMENT without a request', async () => {
      const plain = await s.t.createMerchant();
      const rx = await startReceiver();
      try {
        // Paid at the sandbox simulator (no agreement yet): the card is stored without a Clearhaus series.
        const init = ok(
          await plain.api.post(`${API}/cit`, {
            pointOfSaleId: plain.onlinePointOfSaleId,
            amount: 100,
            currency: 'DKK',
            customerId: 'cust-before',
            subscription: { type: 'UNSCHEDULED' },
          }),
          'POST /cit',
        );
        assert.ok([200, 303].includes((await postForm(s.t, init.paymentWindowUrl, windowCard('4111111111111111'))).status));
        const session = ok(await plain.api.get(`${API}/sessions/${init.session.id}`), 'session').session;
        assert.equal(session.state, 'COMPLETED');
        const apiKey = s.fake.merchants.at(-1)!.apiKey;
        assert.equal(
          (await putAgreement(s.t.operator, plain.accountId, { acquirer: 'clearhaus', apiKey, mcc: '5734', textOnStatement: STATEMENT })).status,
          200,
        );
        const before = s.fake.requests.length;
        const path = rx.newPath('mit');
        const tx = ok(
          await plain.api.post(`${API}/mit`, {
            subscriptionId: session.subscriptionId,
            amount: 900,
            currency: 'DKK',
            reference: 'no-series',
            notificationUrl: rx.url(path),
          }),
          'POST /mit',
        ).transaction;
        const hit = await waitFor(() => rx.at(path)[0], 'the MIT callback');
        assert.equal(hit.body.transaction.state, 'FAILED');
        assert.equal(hit.body.transaction.errorCode, 'INVALID_AGREEMENT');
        assert.deepEqual(hit.body.acquirerAgreement, AGREEMENT);
        assert.equal((await detail(plain, tx.id)).transaction.errorCode, 'INVALID_AGREEMENT');
        assert.equal(s.fake.requests.length, before, 'nothing sent to Clearhaus');
      } finally {
        await rx.close();
      }
    });
  });
}
