/**
 * The payment window's 3-D Secure steps over HTTP (INTERFACE §13), the browser played by the test:
 * Pay → /preauth → (3DS Method) → the browser's fields → /auth → frictionless or challenge (the fake
 * ACS's pages posted as a browser would) → /postauth → the authorization at the fake Clearhaus with
 * the ARes or RReq unchanged. Both fakes are written from the published facts alone. The real
 * browser (Chromium) drives the same pages in window-browser tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ThreeDSecureIo } from '../../src/connectors/threeds/threedsecure-io.js';
import { type ClearhausSetup, startClearhaus } from '../acquirers/clearhaus-support.js';
import { ok } from '../acquirers/support.js';
import type { TestMerchant, TestResponse } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { tableNames } from '../support/tables.js';
import { luhnPan, merchantWith3DS as sharedMerchantWith3DS } from './support.js';
import { readPageForm, startThreeDSFake, type ThreeDSFake } from '../support/threeds-fake.js';

/** The hidden fields and action of the form `id` of one of our pages. */
function formOf(html: string, id: string): { action: string; fields: Record<string, string> } {
  const form = new RegExp(`<form id="${id}" method="post" action="([^"]*)"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  assert.ok(form, `form ${id} in ${html.slice(0, 400)}`);
  const unescape = (v: string) =>
    v
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[m[1]!] = unescape(m[2]!);
  return { action: unescape(form[1]!), fields };
}

const BROWSER = {
  javascriptEnabled: 'true',
  javaEnabled: 'false',
  language: 'da-DK',
  colorDepth: '24',
  screenHeight: '1080',
  screenWidth: '1920',
  timezoneOffset: '-60',
};

for (const kind of await availableStores()) {
  describe(`3-D Secure in the payment window, over HTTP (${kind})`, () => {
    let fake: ThreeDSFake;
    let client: ThreeDSecureIo;
    let ch: ClearhausSetup;
    before(async () => {
      fake = await startThreeDSFake();
      client = new ThreeDSecureIo({ baseUrl: fake.url, timeoutMs: 2_000 });
      ch = await startClearhaus(kind, { threeDSServer: client });
    });
    after(async () => {
      await ch.close();
      await client.close();
      await fake.close();
    });

    const merchantWith3DS = () => sharedMerchantWith3DS(ch, fake);

    const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<TestResponse> =>
      ch.t.client(null).request('POST', new URL(url).pathname, {
        raw: new URLSearchParams(fields).toString(),
        contentType: 'application/x-www-form-urlencoded',
        headers: { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Mozilla/5.0 (test)', ...headers },
      });

    async function pay(m: TestMerchant, pan: string, scaMode = 'NORMAL') {
      const init = ok(await m.api.post('/public/api/v1/cit', { pointOfSaleId: m.onlinePointOfSaleId, amount: 2050, currency: 'EUR', scaMode }), 'POST /cit');
      const res = await post(init.paymentWindowUrl, {
        number: pan,
        expiryMonth: '12',
        expiryYear: '2030',
        cvc: '123',
        holderName: 'Jane Doe',
        paymentMethodType: 'CARD',
      });
      return { init, res };
    }

    const sessionOf = async (m: TestMerchant, id: string) => ok(await m.api.get(`/public/api/v1/sessions/${id}`), 'session').session;
    const authorizationsOf = (pan: string) => ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === pan);

    test('frictionless Y without a 3DS Method: threeDSCompInd U, the ARes sent unchanged, the session completed', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('0103'); // all versions, no method, Y
      const { init, res } = await pay(m, pan);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.match(res.headers['content-security-policy'] as string, /script-src 'nonce-/);
      const browser = formOf(res.text, 'threeds-browser');
      const answered = await post(browser.action, BROWSER);
      assert.ok([200, 303].includes(answered.status), answered.text.slice(0, 300));
      const [sent] = authorizationsOf(pan);
      assert.ok(sent, 'authorized at Clearhaus');
      const tx = fake.transactions.find((x) => x.pan === pan)!;
      assert.equal((tx.areq as Record<string, unknown>).threeDSCompInd, 'U');
      assert.equal((tx.areq as Record<string, unknown>).browserScreenWidth, '1920');
      assert.deepEqual(JSON.parse(sent.form['card[3dsecure][v2][ares]']!), tx.ares);
      assert.equal((await sessionOf(m, init.session.id)).state, 'COMPLETED');
    });

    test('with the 3DS Method: its notification within 10 s makes threeDSCompInd Y', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('0003'); // all versions, method, Y
      const { res } = await pay(m, pan);
      const method = formOf(res.text, 'threeds-method-form');
      // Frames: the ACS, and this service (the ACS's page posts its notification back here).
      assert.match(res.headers['content-security-policy'] as string, new RegExp(`frame-src 'self' ${fake.url.replace(/[.]/g, '\\.')};`));
      const acsPage = await fetch(method.action, { method: 'POST', body: new URLSearchParams(method.fields) });
      const notify = readPageForm(await acsPage.text())!;
      const done = await post(notify.action, notify.fields);
      assert.equal(done.status, 200);
      assert.match(done.text, /threeds-method-done/);
      await post(formOf(res.text, 'threeds-browser').action, BROWSER);
      const tx = fake.transactions.find((x) => x.pan === pan)!;
      assert.equal((tx.areq as Record<string, unknown>).threeDSCompInd, 'Y');
      assert.equal(authorizationsOf(pan).length, 1);
    });

    test('a challenge that passes: the CReq to the ACS, the CRes back, the RReq sent to Clearhaus', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('0170'); // all versions, no method, challenge, passes
      const { init, res } = await pay(m, pan);
      const challenge = await post(formOf(res.text, 'threeds-browser').action, BROWSER);
      assert.equal(challenge.status, 200, challenge.text.slice(0, 300));
      const creq = formOf(challenge.text, 'threeds-challenge-form');
      assert.ok(creq.action.startsWith(fake.url));
      const acs = await fetch(creq.action, { method: 'POST', body: new URLSearchParams(creq.fields) });
      const cres = readPageForm(await acs.text())!;
      assert.match(cres.action, /\/pay\/3ds\/challenge$/);
      const done = await post(cres.action, cres.fields);
      assert.equal(done.status, 200, done.text.slice(0, 300));
      assert.match(done.text, /window\.top\.location/);
      const [sent] = authorizationsOf(pan);
      const tx = fake.transactions.find((x) => x.pan === pan)!;
      assert.deepEqual(JSON.parse(sent!.form['card[3dsecure][v2][rreq]']!), tx.rreq);
      assert.equal((await sessionOf(m, init.session.id)).state, 'COMPLETED');
      const again = await post(cres.action, cres.fields);
      assert.equal(again.status, 404, 'a CRes posted twice authorizes nothing twice');
      assert.equal(authorizationsOf(pan).length, 1);

      // The payment's timeline shows each step with its transStatus, never an authentication value.
      const transactionId = (await sessionOf(m, init.session.id)).transactionId as string;
      const timeline = ok(await m.api.get(`/public/api/v1/transactions/${transactionId}/events?perPage=100`), 'timeline');
      const items = (timeline.items ?? timeline.data ?? timeline.events ?? []) as Array<{ kind: string; event: string; state: string | null }>;
      const steps = items.filter((e) => e.kind === 'THREE_DS_STEP').map((e) => `${e.event}:${e.state ?? ''}`);
      assert.deepEqual(steps, ['PREAUTH:', 'ARES:C', 'CHALLENGE:', 'RREQ:Y', 'DECISION:AUTHORIZE'], JSON.stringify(timeline).slice(0, 500));
      assert.ok(!JSON.stringify(timeline).includes((tx.rreq as { authenticationValue: string }).authenticationValue));
    });

    test('a frictionless N: refused before Clearhaus, REJECTED_BY_SCA, the window shows the form again', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('0113'); // all versions, no method, N
      const { init, res } = await pay(m, pan);
      const answered = await post(formOf(res.text, 'threeds-browser').action, BROWSER);
      assert.ok([200, 303].includes(answered.status));
      assert.equal(authorizationsOf(pan).length, 0, 'nothing reached Clearhaus');
      const session = await sessionOf(m, init.session.id);
      assert.equal(session.state, 'PENDING');
      assert.equal(session.errorCode, 'REJECTED_BY_SCA');
    });

    test("sandbox mode: the provider's documented test card (failing Luhn) is taken and authenticated", async () => {
      const m = await merchantWith3DS();
      const pan = '6000100611111103'; // 3dsecure-io.md §2.8: frictionless without the 3DS Method, 2.1
      const { init, res } = await pay(m, pan);
      assert.equal(res.status, 200, 'not refused as a field error');
      await post(formOf(res.text, 'threeds-browser').action, BROWSER);
      assert.ok(authorizationsOf(pan)[0]?.form['card[3dsecure][v2][ares]']);
      assert.equal((await sessionOf(m, init.session.id)).state, 'COMPLETED');
      const other = await pay(m, '6000100611111104');
      assert.equal(other.res.status, 422, 'any other number failing Luhn is still a field error');
    });

    test('no 3DS API key, card number or authentication value in any table: the card waits sealed and is erased', async () => {
      const db = ch.t.runtime.store.db;
      const tables = await tableNames(db, kind);
      assert.ok(tables.includes('three_ds_attempts'));
      const secrets = [
        fake.apiKeys[0]!,
        ...fake.transactions.map((x) => x.pan),
        ...fake.transactions.flatMap((x) =>
          [x.ares, x.rreq].map((m) => (m as { authenticationValue?: string } | undefined)?.authenticationValue).filter(Boolean),
        ),
      ] as string[];
      assert.ok(secrets.length > 3, 'the flows above ran');
      for (const table of tables) {
        const text = JSON.stringify((await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)).rows, (_k, v) =>
          typeof v === 'bigint' ? String(v) : v,
        );
        for (const secret of secrets) assert.ok(!text.includes(secret), `table ${table} holds a secret`);
      }
      const attempts = (await sql<{ state: string; sealed: string | null }>`select state, card_sealed as sealed from three_ds_attempts`.execute(db)).rows;
      assert.ok(attempts.some((a) => a.state === 'DONE'));
      assert.ok(
        attempts.every((a) => a.state !== 'DONE' || a.sealed === null),
        'a finished attempt keeps no card',
      );
    });

    test('/auth never answers: at THREEDS_TIMEOUT_MS the payment goes on without 3-D Secure (NORMAL)', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('0103', '4000100522');
      const { init, res } = await pay(m, pan);
      fake.script({ path: '/auth', action: 'hang' });
      const answered = await post(formOf(res.text, 'threeds-browser').action, BROWSER);
      assert.ok([200, 303].includes(answered.status));
      const [sent] = authorizationsOf(pan);
      assert.ok(sent && !Object.keys(sent.form).some((k) => k.includes('3dsecure')), 'authorized without 3-D Secure');
      assert.equal((await sessionOf(m, init.session.id)).state, 'COMPLETED');
    });

    test('a card not enrolled (305): NORMAL pays without 3-D Secure at once; FORCE refuses', async () => {
      const m = await merchantWith3DS();
      const pan = luhnPan('9999'); // no case: not enrolled
      const { res } = await pay(m, pan);
      assert.ok([200, 303].includes(res.status));
      const [sent] = authorizationsOf(pan);
      assert.ok(sent && !Object.keys(sent.form).some((k) => k.includes('3dsecure')));
      const forced = await pay(m, luhnPan('9998'), 'FORCE');
      assert.ok([200, 303].includes(forced.res.status));
      assert.equal((await sessionOf(m, forced.init.session.id)).errorCode, 'REJECTED_BY_SCA');
    });
  });
}
