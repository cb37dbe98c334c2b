/**
 * No card number, CSC, merchant API key, signing key or `Signature` value anywhere it could be read
 * (INTERFACE §12.1, §12.4): the service log (captured, at the most verbose level, with the
 * connector's own warnings), every HTTP answer the service gave and every callback it sent, the job
 * rows (`payload`, `last_error`), the `acquirer_requests` rows and, beyond the brief, every row of
 * every table (sealed values are ciphertext). The flows are the ones that carry them: a CIT with its
 * CSC, a MIT, MOTO with capture and refund, a payout, a decline, an authorization and a capture in
 * doubt, a 50000 voided, a refused connection retried, a merchant key Clearhaus refuses, and
 * agreement and payment requests that fail validation while holding a key or a card number.
 * Takes its secrets from what the fake actually received (`fake.requests`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { CLEARHAUS_DOCS_KEY } from '../support/clearhaus-fake.js';
import { API, type TestMerchant, type TestResponse } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { tableNames } from '../support/tables.js';
import { type CallbackReceiver, startReceiver, waitFor } from '../online/helpers.js';
import { postForm } from '../online/cit-flows.js';
import { eventually } from '../lifecycle/fixtures.js';
import { agreementUrl, putAgreement } from './support.js';
import { cardOf, type ClearhausSetup, clearhausIdOf, expiryYear, freshPan, startClearhaus } from './clearhaus-support.js';

type Merchant = TestMerchant & { apiKey: string };

/** CSCs no id, time or amount of these flows holds as a quoted or form value. */
const CSCS = ['739', '864', '152'];

/** The base64 lines of the signing key PEM, and slices of them (a part of the key is a leak too). */
const PEM_PARTS = CLEARHAUS_DOCS_KEY.privateKeyPem
  .split('\n')
  .filter((line) => line.length > 0 && !line.startsWith('-----'))
  .flatMap((line) => [line, line.slice(0, 24), line.slice(20, 44), line.slice(-24)]);

for (const kind of await availableStores()) {
  describe(`clearhaus: secrets stay secret (${kind})`, () => {
    const log: string[] = [];
    /** Every HTTP answer of the service the test saw. */
    const answers: string[] = [];
    const pans: string[] = [];
    const apiKeys: string[] = [];
    let s: ClearhausSetup;
    let m: Merchant;
    let rx: CallbackReceiver;

    before(async () => {
      s = await startClearhaus(kind, { timeoutMs: 1500, config: { logLevel: 'trace' }, logDestination: { write: (line: string) => void log.push(line) } });
      m = await s.merchant();
      apiKeys.push(m.apiKey);
      rx = await startReceiver();
    });
    after(async () => {
      await rx?.close();
      await s?.close();
    });

    const seen = async (response: Promise<TestResponse>): Promise<TestResponse> => {
      const res = await response;
      answers.push(res.text);
      return res;
    };
    const okSeen = async (response: Promise<TestResponse>, what: string) => {
      const res = await seen(response);
      assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`);
      return res.body;
    };
    const pan = (prefix = '4') => {
      const p = freshPan(prefix);
      pans.push(p);
      return p;
    };
    const moto = (merchant: Merchant | TestMerchant, number: string, cvc: string, extra: Record<string, unknown> = {}) =>
      okSeen(
        merchant.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: merchant.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'secret', instantCapture: 'OFF', ...extra },
          card: cardOf(number, cvc),
        }),
        'POST /moto',
      );
    const transaction = (merchant: Merchant | TestMerchant, id: string) => okSeen(merchant.api.get(`${API}/transactions/${id}`), 'GET transaction');

    test('the flows that carry card data and keys run (CIT with CSC, MIT, MOTO, payout, declines, doubts, refusals)', async () => {
      // CIT in the window with the CSC, storing the card; then a MIT on it.
      const citPan = pan();
      const init = await okSeen(
        m.api.post(`${API}/cit`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 2500,
          currency: 'DKK',
          customerId: 'cust-secret',
          notificationUrl: rx.url(rx.newPath('cit')),
          subscription: { type: 'UNSCHEDULED' },
        }),
        'POST /cit',
      );
      const window = await seen(
        postForm(s.t, init.paymentWindowUrl, { number: citPan, expiryMonth: '12', expiryYear: String(expiryYear()), cvc: CSCS[0]!, holderName: 'Test Holder' }),
      );
      assert.ok([200, 303].includes(window.status), window.text.slice(0, 200));
      const session = (await okSeen(m.api.get(`${API}/sessions/${init.session.id}`), 'GET session')).session;
      assert.equal(session.state, 'COMPLETED');
      assert.equal(s.fake.requestsTo('/authorizations').at(-1)?.form['card[csc]'], CSCS[0], 'the CSC went to Clearhaus');
      const mitPath = rx.newPath('mit');
      const mit = (
        await okSeen(
          m.api.post(`${API}/mit`, {
            subscriptionId: session.subscriptionId,
            amount: 700,
            currency: 'DKK',
            reference: 'secret-mit',
            notificationUrl: rx.url(mitPath),
          }),
          'POST /mit',
        )
      ).transaction;
      await waitFor(() => rx.at(mitPath)[0], 'MIT callback');
      await transaction(m, mit.id);

      // MOTO, capture, refund, payout to the stored card.
      const motoPan = pan('5');
      const paid = await moto(m, motoPan, CSCS[1]!, { customerId: 'cust-secret-moto', notificationUrl: rx.url(rx.newPath('moto')) });
      assert.equal(paid.transaction.state, 'SUCCESS');
      await okSeen(m.api.post(`${API}/transactions/${paid.transaction.id}/capture`, { amount: 1000 }), 'capture');
      await okSeen(m.api.post(`${API}/transactions/${paid.transaction.id}/refund`, { amount: 400 }), 'refund');
      const payout = await okSeen(
        m.api.post(`${API}/payout-sync`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 300,
          currency: 'DKK',
          paymentMethodId: paid.transaction.paymentMethodId,
        }),
        'payout-sync',
      );
      assert.equal(payout.transaction.state, 'SUCCESS');
      await okSeen(m.api.get(`${API}/payment-methods/${paid.transaction.paymentMethodId}`), 'GET payment method');

      // A decline with Clearhaus's message.
      const declinedPan = pan();
      s.fake.setCardOutcome(declinedPan, 40413);
      assert.equal((await moto(m, declinedPan, CSCS[2]!)).transaction.errorCode, 'INSUFFICIENT_FUNDS');

      // An authorization in doubt (HTTP 500), and one answered 50000 with an id (voided by a job).
      const doubtPan = pan();
      s.fake.script({ method: 'POST', path: '/authorizations', when: (f) => f['moto[pan]'] === doubtPan, action: 'http-500' });
      assert.equal((await moto(m, doubtPan, CSCS[2]!)).transaction.errorCode, 'ACQUIRER_TIMEOUT');
      const downPan = pan();
      s.fake.script({ method: 'POST', path: '/authorizations', when: (f) => f['moto[pan]'] === downPan, action: 'status-50000' });
      const down = await moto(m, downPan, CSCS[2]!);
      assert.equal(down.transaction.errorCode, 'ACQUIRER_DOWN');
      const downId = clearhausIdOf(s.fake, down.transaction.id);
      await eventually(async () => (s.fake.requestsTo(`/authorizations/${downId}/voids`).length > 0 ? true : null), 'the void of the 50000');

      // Refused connections: the payment waits, the drive job records why, and sends it once Clearhaus is back.
      const refusedPan = pan();
      await s.fake.refuse();
      let waiting;
      try {
        waiting = await moto(m, refusedPan, CSCS[1]!);
        assert.equal(waiting.transaction.state, 'PROCESSING');
        await okSeen(s.t.operator.post('/sandbox/v1/clock', { advanceSeconds: 6 }), 'clock');
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        await s.fake.resume();
      }
      await waitFor(
        async () => {
          const d = await transaction(m, waiting.transaction.id);
          if (d.transaction.state === 'SUCCESS') return true;
          await s.t.operator.post('/sandbox/v1/clock', { advanceSeconds: 10 });
          return null;
        },
        'the refused payment sent later',
        15_000,
      );

      // A capture in doubt, seen on the operator's list, then resolved.
      const held = await moto(m, pan(), CSCS[1]!);
      const heldId = clearhausIdOf(s.fake, held.transaction.id);
      s.fake.script({ method: 'POST', path: `/authorizations/${heldId}/captures`, action: 'hang' });
      const doubtful = await seen(m.api.post(`${API}/transactions/${held.transaction.id}/capture`, { amount: 500 }));
      assert.equal(doubtful.body.state, 'PROCESSING', doubtful.text);
      const list = await okSeen(s.t.operator.get(`${API}/partner/payments-in-doubt`), 'in doubt');
      assert.ok(list.items.some((i: { operationId: string }) => i.operationId === doubtful.body.operationId));
      await okSeen(s.t.operator.post(`${API}/partner/payments-in-doubt/${doubtful.body.operationId}/resolve`, { outcome: 'SUCCEEDED' }), 'resolve');

      // A merchant key Clearhaus refuses (401): said in the log, without the key.
      const refusedKey = '6d1f3c2b-8a7e-4f5d-9c3b-2a1e0f9d8c7b';
      apiKeys.push(refusedKey);
      const other = await s.t.createMerchant();
      await okSeen(putAgreement(s.t.operator, other.accountId, { acquirer: 'clearhaus', apiKey: refusedKey, mcc: '5734' }), 'PUT agreement');
      const unauthorized = await moto(other, pan(), CSCS[1]!);
      assert.equal(unauthorized.transaction.errorCode, 'ACQUIRER_DECLINED');
      await okSeen(s.t.operator.get(agreementUrl(other.accountId)), 'GET agreement');
      assert.ok(
        log.some((line) => line.includes('401') && line.includes(unauthorized.transaction.id)),
        'the refused key is said in the log',
      );

      // Requests refused by validation while holding a key or a card number: never echoed.
      const badKey = `${refusedKey.slice(0, 35)}Z`;
      apiKeys.push(badKey);
      const invalidKey = await seen(putAgreement(s.t.operator, other.accountId, { acquirer: 'clearhaus', apiKey: badKey, mcc: '5734' }));
      assert.equal(invalidKey.status, 422, invalidKey.text);
      const thirdKey = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
      apiKeys.push(thirdKey);
      const invalidMcc = await seen(putAgreement(s.t.operator, other.accountId, { acquirer: 'clearhaus', apiKey: thirdKey, mcc: '57' }));
      assert.equal(invalidMcc.status, 422, invalidMcc.text);
      const invalidCard = await seen(
        m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'bad', instantCapture: 'OFF' },
          card: { ...cardOf(pan(), CSCS[0]!), expiryMonth: 13 },
        }),
      );
      assert.equal(invalidCard.status, 422, invalidCard.text);

      // Let the callbacks and jobs settle before the scan.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await okSeen(s.t.operator.get('/dashboard/api/operator/jobs'), 'operator jobs');
    });

    /** Every secret of the run, named, as the fake received them or as the test made them. */
    function secrets(): Array<[string, string]> {
      const found: Array<[string, string]> = [];
      for (const p of pans) found.push([`PAN ${p}`, p], [`PAN ${p} grouped`, p.replace(/(\d{4})(?=\d)/g, '$1 ')]);
      for (const key of apiKeys) {
        found.push([`API key ${key}`, key], [`API key ${key} without dashes`, key.replace(/-/g, '')]);
        found.push([`Basic credentials of ${key}`, Buffer.from(`${key}:`).toString('base64')]);
      }
      for (const part of PEM_PARTS) found.push([`signing key part ${part}`, part]);
      for (const r of s.fake.requests) {
        const header = r.headers.signature;
        const value = Array.isArray(header) ? header.join(' ') : header;
        const hex = value?.split(' ').at(-1);
        if (hex && hex.length >= 64) found.push([`Signature of ${r.method} ${r.path}`, hex], [`Signature prefix of ${r.method} ${r.path}`, hex.slice(0, 32)]);
        const basic = r.headers.authorization;
        if (typeof basic === 'string') found.push([`Authorization header of ${r.method} ${r.path}`, basic.replace(/^Basic /, '')]);
        for (const key of ['card[pan]', 'moto[pan]']) if (r.form[key]) found.push([`${key} sent`, r.form[key]!]);
      }
      return found;
    }

    /** Where a CSC could be written: a quoted value, a form value, a JSON field. */
    const cscPatterns = (csc: string) => [`"${csc}"`, `'${csc}'`, `=${csc}&`, `=${csc}"`, `csc]=${csc}`, `"cvc":${csc}`, `"csc":${csc}`];

    function assertClean(where: string, texts: string[]): void {
      const all = secrets();
      assert.ok(all.length > 20, `secrets collected: ${all.length}`);
      for (const text of texts) {
        for (const [name, secret] of all) assert.ok(!text.includes(secret), `${name} in ${where}: ${text.slice(0, 400)}`);
        for (const csc of CSCS)
          for (const pattern of cscPatterns(csc)) assert.ok(!text.includes(pattern), `CSC ${csc} (${pattern}) in ${where}: ${text.slice(0, 400)}`);
      }
    }

    test('the scan finds what it looks for (control: the bodies Clearhaus received hold PANs, CSCs and keys)', () => {
      const cit = s.fake.requests.find((r) => r.form['card[csc]'] === CSCS[0]);
      assert.ok(cit, 'the CIT authorization');
      assert.throws(() => assertClean('control', [cit.body]), /PAN|CSC/);
      assert.throws(() => assertClean('control', [JSON.stringify(cit.headers)]), /Signature|Authorization|Basic/);
      assert.throws(() => assertClean('control', [CLEARHAUS_DOCS_KEY.privateKeyPem]), /signing key/);
      assert.throws(() => assertClean('control', [`{"cvc":"${CSCS[1]}"}`]), /CSC/);
    });

    test('the service log holds none of them', () => {
      assert.ok(log.length > 50, `lines captured: ${log.length}`);
      assert.ok(
        log.some((line) => line.includes('"acquirer":"clearhaus"')),
        "the connector's warnings were captured",
      );
      assertClean('the log', log);
    });

    test('no HTTP answer of the service and no callback holds any of them', () => {
      assert.ok(answers.length > 20);
      assertClean('an HTTP answer', answers);
      assert.ok(rx.hits.length >= 2);
      assertClean(
        'a callback',
        rx.hits.map((h) => `${JSON.stringify(h.headers)}\n${h.text}`),
      );
    });

    test('job rows and acquirer_requests rows hold none of them', async () => {
      const db = s.t.runtime.store.db;
      const jobs = await sql<{ payload: unknown; last_error: unknown }>`select payload, last_error from jobs`.execute(db);
      assert.ok(jobs.rows.length > 5, `job rows: ${jobs.rows.length}`);
      assert.ok(
        jobs.rows.some((r) => r.last_error !== null),
        'a job recorded an error (the refused connection)',
      );
      assertClean(
        'a job row',
        jobs.rows.map((r) => JSON.stringify(r)),
      );
      const requests = await sql<Record<string, unknown>>`select * from acquirer_requests`.execute(db);
      assert.ok(requests.rows.length > 5, `acquirer_requests rows: ${requests.rows.length}`);
      assertClean(
        'an acquirer_requests row',
        requests.rows.map((r) => JSON.stringify(r)),
      );
    });

    test('no row of any table holds them in plain text (sealed means ciphertext)', async () => {
      const db = s.t.runtime.store.db;
      const tables = await tableNames(db, kind);
      assert.ok(tables.includes('acquirer_agreements') && tables.includes('payment_methods'), tables.join(', '));
      for (const table of tables) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
        assertClean(
          `table ${table}`,
          rows.rows.map((r) =>
            JSON.stringify(
              Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('base64') : typeof v === 'bigint' ? String(v) : v])),
            ),
          ),
        );
      }
    });
  });
}
