/**
 * INTERFACE §11.1 through the public API, on both stores: masked card numbers (first 8, X, last 4)
 * in GET /transactions/{id}, GET /payment-methods/{id} and callbacks; two-digit card expiry
 * strings; expiry dates on the last day of the month; the `sca` object of callbacks (no SCA, a
 * passed and a failed challenge); the sandbox cards of the transaction error codes added there;
 * and rows stored before §11.1, which answer in the new format (read side, then the start-up upgrade).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, card, CARDS, motoBody, startOnlineSuite, stopOnlineSuite, waitFor } from './helpers.js';
import { citBody, complete, finalTransaction, mitBody, ok, storedCard } from './cit-flows.js';

const NO_SCA = { rejected: false, type: 'UNKNOWN', verification: 'NONE' };
const CHALLENGED = { rejected: false, type: '3DS', verification: 'CHALLENGED' };
const CHALLENGE_FAILED = { rejected: true, type: '3DS', verification: 'CHALLENGED' };

/** Sandbox cards of INTERFACE §11.1 (README "Sandbox cards"). */
const NEW_CARDS = {
  SCA_CHALLENGE: '4000000000003220',
  SCA_CHALLENGE_FAILS: '4000000000003238',
  CARD_CLOSED: '4000000000000465',
  REJECTED_UNKNOWN: '4000000000000994',
  INVALID_AGREEMENT: '4000000000000523',
  MISSING_ACQUIRER_AGREEMENT: '3530111333300000',
} as const;

for (const kind of await availableStores()) {
  describe(`card formats, sca and the sandbox cards of INTERFACE §11.1 (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: CallbackReceiver;
    before(async () => ({ t, m, rx } = await startOnlineSuite(kind)));
    after(() => stopOnlineSuite({ t, rx }));

    test('MOTO 07/2035: masked number, two-digit expiry strings and the last day of the month everywhere', async () => {
      const path = rx.newPath('moto');
      const res = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url(path), card: { expiryMonth: 7, expiryYear: 2035 } }));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.card.pan, '41111111XXXX1111');
      assert.equal(res.body.card.pan.length, 16);
      assert.deepEqual([res.body.card.expireMonth, res.body.card.expireYear], ['07', '35']);
      assert.equal(res.body.card.Segment, 'consumer');
      assert.equal(res.body.card.Funding, 'credit');
      assert.match(res.body.card.Country, /^[A-Z]{2}$/);
      assert.deepEqual(res.body.sca, NO_SCA);

      const tx = ok(await m.api.get(`${API}/transactions/${res.body.transaction.id}`), 'GET tx').transaction;
      assert.equal(tx.paymentMethodDisplayText, '41111111XXXX1111');
      assert.equal(tx.paymentMethodExpiry, '2035-07-31');

      const pm = ok(await m.api.get(`${API}/payment-methods/${tx.paymentMethodId}`), 'GET pm');
      assert.deepEqual(Object.keys(pm).sort(), ['card', 'paymentMethod']);
      assert.equal(pm.paymentMethod.displayText, '41111111XXXX1111');
      assert.equal(pm.paymentMethod.expiry, '2035-07-31');
      assert.deepEqual(pm.card, res.body.card);

      const hit = await waitFor(() => rx.at(path)[0], 'MOTO callback');
      assert.equal(hit.body.card.pan, '41111111XXXX1111');
      assert.deepEqual([hit.body.card.expireMonth, hit.body.card.expireYear], ['07', '35']);
      assert.equal(hit.body.transaction.paymentMethodDisplayText, '41111111XXXX1111');
      assert.deepEqual(hit.body.sca, NO_SCA);
      assert.ok(!hit.text.includes(CARDS.VISA), 'never the full number');
    });

    test('a leap-year February card expires on the 29th; a 15-digit card shows 8 + 3 X + 4', async () => {
      const feb = ok(await m.api.post(`${API}/moto`, motoBody(m, { card: { expiryMonth: 2, expiryYear: 2028 } })), 'MOTO 02/2028');
      assert.equal(feb.transaction.paymentMethodExpiry, '2028-02-29');
      assert.deepEqual([feb.card.expireMonth, feb.card.expireYear], ['02', '28']);
      const amex = ok(await m.api.post(`${API}/moto`, motoBody(m, { number: '378282246310005', card: { cvc: '1234' } })), 'MOTO Amex');
      assert.equal(amex.card.pan, '37828224XXX0005');
      assert.equal(amex.transaction.paymentMethodDisplayText, '37828224XXX0005');
    });

    test('MIT on a stored card: callback sca {rejected:false, type:UNKNOWN, verification:NONE}, masked card and expiry', async () => {
      const stored = await storedCard(t, m, 'cust-mit-format');
      const path = rx.newPath('mit');
      const created = ok(await m.api.post(`${API}/mit`, mitBody(stored.subscriptionId, rx.url(path))), 'POST /mit').transaction;
      assert.equal(created.paymentMethodDisplayText, '41111111XXXX1111');
      assert.equal(created.paymentMethodExpiry, '2030-12-31');
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.deepEqual(hit.body.sca, NO_SCA);
      assert.equal(hit.body.card.pan, '41111111XXXX1111');
      assert.deepEqual([hit.body.card.expireMonth, hit.body.card.expireYear], ['12', '30']);
      const cit = ok(await m.api.get(`${API}/transactions/${stored.transactionId}`), 'GET CIT').transaction;
      assert.equal(cit.paymentMethodDisplayText, '41111111XXXX1111');
      assert.equal(cit.paymentMethodExpiry, '2030-12-31');
    });

    test('CIT with scaMode NORMAL and the challenge card: callback sca {rejected:false, type:"3DS", verification:"CHALLENGED"}', async () => {
      const path = rx.newPath('cit-sca');
      const init = ok(await m.api.post(`${API}/cit`, citBody(m, { scaMode: 'NORMAL', notificationUrl: rx.url(path) })), 'POST /cit');
      ok(await complete(t, init.session.id, { card: card(NEW_CARDS.SCA_CHALLENGE) }), 'complete');
      const hit = await waitFor(() => rx.at(path)[0], 'CIT callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.deepEqual(hit.body.sca, CHALLENGED);
      assert.equal(hit.body.card.pan, '40000000XXXX3220');
      assert.equal(hit.body.transaction.externalStatusCodes.sca, 'Y');
    });

    test('CIT with scaMode NORMAL and the failing challenge card: FAILED REJECTED_BY_SCA, callback sca rejected', async () => {
      const path = rx.newPath('cit-sca-fail');
      const init = ok(
        await m.api.post(`${API}/cit`, citBody(m, { scaMode: 'FORCE', notificationUrl: rx.url(path), reportFailure: true, maxAttempts: 1 })),
        'POST /cit',
      );
      const done = ok(await complete(t, init.session.id, { card: card(NEW_CARDS.SCA_CHALLENGE_FAILS) }), 'complete');
      const tx = await finalTransaction(m, done.transaction.id);
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'REJECTED_BY_SCA');
      assert.equal(tx.externalStatusCodes.sca, 'N');
      const hit = await waitFor(() => rx.at(path).find((h) => h.body?.transaction?.id === tx.id), 'callback of the failed attempt');
      assert.deepEqual(hit.body.sca, CHALLENGE_FAILED);
      // Without SCA the same card is a plain approval.
      const skip = ok(await m.api.post(`${API}/cit`, citBody(m, { scaMode: 'SKIP' })), 'POST /cit SKIP');
      const paid = ok(await complete(t, skip.session.id, { card: card(NEW_CARDS.SCA_CHALLENGE_FAILS) }), 'complete SKIP');
      assert.equal((await finalTransaction(m, paid.transaction.id)).state, 'SUCCESS');
    });

    for (const [code, number] of [
      ['CARD_CLOSED', NEW_CARDS.CARD_CLOSED],
      ['REJECTED_UNKNOWN', NEW_CARDS.REJECTED_UNKNOWN],
      ['MISSING_ACQUIRER_AGREEMENT', NEW_CARDS.MISSING_ACQUIRER_AGREEMENT],
    ] as const) {
      test(`sandbox card ${number}: MOTO declined ${code}, with its callback`, async () => {
        const path = rx.newPath(`moto-${code}`);
        const res = await m.api.post(`${API}/moto`, motoBody(m, { number, notificationUrl: rx.url(path) }));
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.transaction.state, 'FAILED');
        assert.equal(res.body.transaction.errorCode, code);
        assert.equal(res.body.operations[0].errorCode, code);
        const tx = ok(await m.api.get(`${API}/transactions/${res.body.transaction.id}`), 'GET tx').transaction;
        assert.equal(tx.errorCode, code);
        const listed = ok(await m.api.get(`${API}/transactions?errorCode=${code}`), 'list by errorCode').items.map((i: any) => i.transaction.id);
        assert.ok(listed.includes(tx.id), 'filterable by the new code');
        const hit = await waitFor(() => rx.at(path)[0], 'callback');
        assert.equal(hit.body.transaction.errorCode, code);
        assert.ok(!hit.text.includes(number), 'never the full number');
      });
    }

    test('sandbox card 4000000000000523: stored by CIT, every later MIT declined INVALID_AGREEMENT', async () => {
      const stored = await storedCard(t, m, 'cust-invalid-agreement', NEW_CARDS.INVALID_AGREEMENT);
      assert.equal(ok(await m.api.get(`${API}/transactions/${stored.transactionId}`), 'GET CIT').transaction.state, 'SUCCESS');
      const path = rx.newPath('mit-agreement');
      const created = ok(await m.api.post(`${API}/mit`, mitBody(stored.subscriptionId, rx.url(path))), 'POST /mit').transaction;
      const tx = await finalTransaction(m, created.id);
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'INVALID_AGREEMENT');
      assert.equal(tx.externalStatusCodes.acquirer, 'R1');
    });

    test('a card closed since it was stored: the payout is declined CARD_CLOSED', async () => {
      const stored = ok(await m.api.post(`${API}/moto`, motoBody(m, { number: NEW_CARDS.CARD_CLOSED, customerId: 'cust-closed' })), 'MOTO');
      const payout = await m.api.post(`${API}/payout-sync`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        paymentMethodId: stored.transaction.paymentMethodId,
        amount: 500,
        currency: 'DKK',
        reference: 'payout-closed',
      });
      assert.equal(payout.status, 200, payout.text);
      assert.equal(payout.body.transaction.state, 'FAILED');
      assert.equal(payout.body.transaction.errorCode, 'CARD_CLOSED');
    });

    test('rows stored before §11.1 ("•••• 1111", 6-digit BIN, old sca spelling) answer in the new format; the start-up upgrade completes them', async () => {
      const moto = ok(await m.api.post(`${API}/moto`, motoBody(m, { customerId: 'cust-legacy' })), 'MOTO');
      const txId: string = moto.transaction.id;
      const pmId: string = moto.transaction.paymentMethodId;
      const db = t.runtime.store.db;
      // What an older version wrote: the display text, a 6-digit BIN and upper-case segment/funding, and a sca without values.
      const row = await db.selectFrom('paymentMethods').select(['card']).where('id', '=', pmId).executeTakeFirstOrThrow();
      const legacyCard = { ...JSON.parse(row.card!), bin: '411111', segment: 'CONSUMER', funding: 'CREDIT' };
      await db
        .updateTable('paymentMethods')
        .set({ displayText: '•••• 1111', card: JSON.stringify(legacyCard) })
        .where('id', '=', pmId)
        .execute();
      await db
        .updateTable('transactions')
        .set({ paymentMethodDisplayText: '•••• 1111', sca: JSON.stringify({ rejected: false, type: null, verification: null }) })
        .where('id', '=', txId)
        .execute();

      // Read side: never the old text for the method, never more than the digits kept.
      const before = ok(await m.api.get(`${API}/payment-methods/${pmId}`), 'GET pm (legacy row)');
      assert.equal(before.paymentMethod.displayText, '411111XXXXXX1111');
      assert.equal(before.card.pan, '411111XXXXXX1111');
      assert.equal(before.card.Segment, 'consumer');
      const built = await t.runtime.services.notificationBuilder.forTransaction(m.accountId, txId);
      assert.deepEqual(built.sca, NO_SCA);

      // The start-up upgrade (runtime.ts) reads the first 8 digits from the vault, for the method and its transactions.
      const upgraded = await t.runtime.services.paymentMethods.upgradeLegacyCards();
      assert.deepEqual(upgraded, { paymentMethods: 1, transactions: 1 });
      const pm = ok(await m.api.get(`${API}/payment-methods/${pmId}`), 'GET pm (upgraded)');
      assert.equal(pm.paymentMethod.displayText, '41111111XXXX1111');
      assert.equal(pm.card.pan, '41111111XXXX1111');
      assert.equal(ok(await m.api.get(`${API}/transactions/${txId}`), 'GET tx').transaction.paymentMethodDisplayText, '41111111XXXX1111');
      const stored = await db.selectFrom('paymentMethods').select(['displayText', 'card', 'panSealed']).where('id', '=', pmId).executeTakeFirstOrThrow();
      assert.equal(stored.displayText, '41111111XXXX1111');
      assert.ok(!stored.card!.includes(CARDS.VISA) && !stored.panSealed!.includes(CARDS.VISA), 'the number stays sealed');
      // Done: a second run finds nothing.
      assert.deepEqual(await t.runtime.services.paymentMethods.upgradeLegacyCards(), { paymentMethods: 0, transactions: 0 });
      const legacyLeft = await sql<{ n: number }>`select count(*) as n from transactions where substr(payment_method_display_text, 1, 1) = '•'`.execute(db);
      assert.equal(Number(legacyLeft.rows[0]!.n), 0);
    });
  });
}
