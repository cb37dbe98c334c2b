/**
 * Clearhaus status codes end to end (INTERFACE §12.3): every mapped code, in both decline styles
 * (a 400 body and a 201 body: only 20000 approves, whatever the HTTP status), gives its errorCode
 * and `externalStatusCodes.acquirer`; 40420 on a MIT disables the card's subscription so that no
 * MIT is sent for it again; a merchant API key Clearhaus does not know (HTTP 401) declines the
 * payment ACQUIRER_DECLINED.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, startReceiver, waitFor } from '../online/helpers.js';
import { putAgreement } from './support.js';
import { authorizationsOf, cardOf, type ClearhausSetup, freshPan, startClearhaus, subscribeThroughWindow } from './clearhaus-support.js';

type Merchant = TestMerchant & { apiKey: string };

/** INTERFACE §12.3: Clearhaus status code → errorCode. */
const MAPPED: ReadonlyArray<readonly [number, string]> = [
  [40110, 'INVALID_CARD_NUMBER'],
  [40120, 'INVALID_CVC'],
  [40130, 'CARD_EXPIRED'],
  [40135, 'CARD_EXPIRED'],
  [40410, 'DECLINED_BY_ISSUER_OR_SCHEME'],
  [40411, 'CARD_RESTRICTED'],
  [40412, 'CARD_LOST_OR_STOLEN'],
  [40413, 'INSUFFICIENT_FUNDS'],
  [40414, 'SUSPECTED_FRAUD'],
  [40415, 'AMOUNT_LIMIT_EXCEEDED'],
  [40416, 'SCA_REQUIRED'],
  [40300, 'REJECTED_BY_SCA'],
  [40310, 'REJECTED_BY_SCA'],
  [40420, 'CARD_BLOCKED'],
  [40400, 'ISSUER_DOWN'],
  // Any other 4xxxx.
  [40000, 'ACQUIRER_DECLINED'],
  [40111, 'ACQUIRER_DECLINED'],
  [40140, 'ACQUIRER_DECLINED'],
  [40150, 'ACQUIRER_DECLINED'],
  [40200, 'ACQUIRER_DECLINED'],
  [40999, 'ACQUIRER_DECLINED'],
];

/** Clearhaus's input errors (40000, 401xx) come back as 400 whatever the decline style (the fake's §3.2 reading). */
const isInputError = (code: number) => code === 40000 || (code >= 40100 && code < 40200);

function ok(res: { status: number; text: string; body: any }, what: string): any {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

for (const kind of await availableStores()) {
  describe(`clearhaus: status codes end to end (${kind})`, () => {
    let s: ClearhausSetup;
    let m: Merchant;
    let rx: CallbackReceiver;
    before(async () => {
      s = await startClearhaus(kind);
      m = await s.merchant();
      rx = await startReceiver();
    });
    after(async () => {
      s.fake.declineStatus = 400;
      await rx.close();
      await s.close();
    });

    const moto = async (merchant: Merchant | TestMerchant, pan: string, amount = 1000) =>
      ok(
        await merchant.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: merchant.onlinePointOfSaleId, amount, currency: 'DKK', reference: 'codes', instantCapture: 'OFF' },
          card: cardOf(pan),
        }),
        'POST /moto',
      ).transaction as { id: string; state: string; errorCode: string | null; externalStatusCodes: Record<string, string | null> };

    for (const style of [400, 201] as const) {
      test(`MOTO: every mapped code with declines answered HTTP ${style}`, async () => {
        s.fake.declineStatus = style;
        const actual: Record<number, unknown> = {};
        const expected: Record<number, unknown> = {};
        for (const [code, errorCode] of MAPPED) {
          const pan = freshPan();
          s.fake.setCardOutcome(pan, code);
          const tx = await moto(m, pan);
          const requests = authorizationsOf(s.fake, tx.id);
          assert.equal(requests.length, 1, `${code}: one request`);
          const http = requests[0]!.reply?.status;
          actual[code] = { state: tx.state, errorCode: tx.errorCode, acquirer: tx.externalStatusCodes?.acquirer, http };
          expected[code] = { state: 'FAILED', errorCode, acquirer: String(code), http: isInputError(code) ? 400 : style };
          const d = ok(await m.api.get(`${API}/transactions/${tx.id}`), 'GET transaction');
          assert.equal(d.transaction.errorCode, errorCode, `${code}: the stored transaction`);
          assert.equal(d.transaction.externalStatusCodes.acquirer, String(code));
          assert.equal(d.aggregates.authorized, 0, `${code}: nothing authorized`);
        }
        assert.deepEqual(actual, expected);
        s.fake.declineStatus = 400;
      });
    }

    test('the same codes reach a MIT callback and a payout answer', async () => {
      const pan = freshPan();
      const session = await subscribeThroughWindow(s.t, m, pan, 'cust-codes', { type: 'UNSCHEDULED' });
      for (const [code, errorCode] of [
        [40413, 'INSUFFICIENT_FUNDS'],
        [40410, 'DECLINED_BY_ISSUER_OR_SCHEME'],
        [40200, 'ACQUIRER_DECLINED'],
      ] as const) {
        s.fake.setCardOutcome(pan, code);
        const path = rx.newPath('mit');
        ok(
          await m.api.post(`${API}/mit`, {
            subscriptionId: session.subscriptionId,
            amount: 700,
            currency: 'DKK',
            reference: 'code',
            notificationUrl: rx.url(path),
          }),
          'POST /mit',
        );
        const hit = await waitFor(() => rx.at(path)[0], `MIT callback ${code}`);
        assert.deepEqual(
          [hit.body.transaction.state, hit.body.transaction.errorCode, hit.body.transaction.externalStatusCodes.acquirer],
          ['FAILED', errorCode, String(code)],
        );
      }
      s.fake.setCardOutcome(pan, 40413);
      const payout = ok(
        await m.api.post(`${API}/payout-sync`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 300,
          currency: 'DKK',
          paymentMethodId: session.paymentMethodId,
        }),
        'payout-sync',
      );
      assert.deepEqual(
        [payout.transaction.state, payout.transaction.errorCode, payout.transaction.externalStatusCodes.acquirer],
        ['FAILED', 'INSUFFICIENT_FUNDS', '40413'],
      );
      assert.equal(s.fake.requestsTo('/credits').filter((r) => r.form.reference === payout.transaction.id).length, 1);
      s.fake.setCardOutcome(pan, undefined);
    });

    test('40420 on a MIT: CARD_BLOCKED, the subscription becomes INVALID, and no MIT is sent for the card again', async () => {
      const pan = freshPan('5');
      const session = await subscribeThroughWindow(s.t, m, pan, 'cust-blocked', { type: 'SCHEDULED', interval: { period: 'MONTH', frequency: 1 } });

      s.fake.declineStatus = 201;
      s.fake.blockCard(pan);
      try {
        const path = rx.newPath('blocked');
        const tx = ok(
          await m.api.post(`${API}/mit`, {
            subscriptionId: session.subscriptionId,
            amount: 700,
            currency: 'DKK',
            reference: 'blocked',
            notificationUrl: rx.url(path),
          }),
          'POST /mit',
        ).transaction;
        const hit = await waitFor(() => rx.at(path)[0], 'the MIT callback');
        assert.deepEqual(
          [hit.body.transaction.state, hit.body.transaction.errorCode, hit.body.transaction.externalStatusCodes.acquirer],
          ['FAILED', 'CARD_BLOCKED', '40420'],
        );
        assert.equal(authorizationsOf(s.fake, tx.id)[0]?.reply?.status, 201, 'a 201 decline body');
        const sub = ok(await m.api.get(`${API}/subscriptions/${session.subscriptionId}`), 'GET subscription').subscription;
        assert.equal(sub.state, 'INVALID');

        // The cardholder lifting the block at Clearhaus changes nothing here: the merchant must ask again.
        s.fake.unblockCard(pan);
        const before = s.fake.requests.length;
        const again = await m.api.post(`${API}/mit`, {
          subscriptionId: session.subscriptionId,
          amount: 700,
          currency: 'DKK',
          reference: 'blocked-again',
          notificationUrl: rx.url(rx.newPath('blocked')),
        });
        assert.notEqual(again.status, 200, `refused: ${again.status} ${again.text}`);
        const batch = ok(
          await m.api.post(`${API}/mit/batch`, {
            transactions: [{ subscriptionId: session.subscriptionId, amount: 700, currency: 'DKK', reference: 'blocked-batch' }],
          }),
          'POST /mit/batch',
        );
        assert.equal(batch.transactions[0].transaction, null, 'the batch entry is refused');
        assert.ok(batch.transactions[0].error);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(s.fake.requests.length, before, 'nothing sent to Clearhaus');
      } finally {
        s.fake.unblockCard(pan);
        s.fake.declineStatus = 400;
      }
    });

    test('an API key Clearhaus refuses (HTTP 401) declines the payment ACQUIRER_DECLINED', async () => {
      const merchant = await s.t.createMerchant();
      const unknownKey = '0f6f7d8e-1c2b-4a3d-9e8f-7a6b5c4d3e2f';
      assert.equal((await putAgreement(s.t.operator, merchant.accountId, { acquirer: 'clearhaus', apiKey: unknownKey, mcc: '5734' })).status, 200);
      const before = s.fake.requests.length;
      const tx = await moto(merchant, freshPan());
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'ACQUIRER_DECLINED');
      const sent = s.fake.requests.slice(before);
      assert.equal(sent.length, 1, 'one request');
      assert.equal(sent[0]!.reply?.status, 401);
      assert.equal(sent[0]!.merchantApiKey, undefined, 'the fake knows no merchant of that key');
      const d = ok(await merchant.api.get(`${API}/transactions/${tx.id}`), 'GET transaction');
      assert.equal(d.transaction.errorCode, 'ACQUIRER_DECLINED');
      assert.ok(!JSON.stringify(d).includes(unknownKey), 'the key is never shown');
    });
  });
}
