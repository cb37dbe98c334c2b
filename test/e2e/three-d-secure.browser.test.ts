/**
 * EMV 3-D Secure in the hosted payment window, driven by a real browser (headless Chromium, Debian's
 * /usr/bin/chromium through playwright-core): the service's app on a real 127.0.0.1 port whose
 * publicUrl is that very address (so the ACS's notifications reach it), the fake 3DS Server and ACS
 * (test/support/threeds-fake.ts) and the fake Clearhaus. The customer fills the card form and
 * presses Pay; the window's own pages run the 3DS Method in a hidden frame, post the browser's
 * fields, show the bank's challenge in a frame, and end at the success page or the form again:
 *   - frictionless Y with the 3DS Method (compInd Y, the real browser's fields, the ARes unchanged at Clearhaus);
 *   - frictionless without a method (compInd U), and with a method that never answers (10 s, compInd N);
 *   - challenges that pass (the RReq at Clearhaus), fail (REJECTED_BY_SCA, nothing at Clearhaus) and
 *     are decided by hand in the ACS frame ("Authenticate");
 *   - frictionless A and I (the ARes at Clearhaus), U (without 3-D Secure), N and R (refused before Clearhaus); a DS timeout (NORMAL: without 3-D Secure,
 *     FORCE: refused); a card not enrolled (NORMAL: without 3-D Secure);
 *   - the card form from the keyboard alone; no PAN or authentication value in the service log.
 * Skipped, saying so, when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ThreeDSecureIo } from '../../src/connectors/threeds/threedsecure-io.js';
import { declineMessage } from '../../src/pages/payment-window.js';
import { type ClearhausSetup, startClearhaus } from '../acquirers/clearhaus-support.js';
import { ok } from '../acquirers/support.js';
import { chromiumSkip, launchChromium, recordProblems } from '../support/browser.js';
import type { TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { luhnPan, merchantWith3DS as sharedMerchantWith3DS } from '../three-d-secure/support.js';
import { startThreeDSFake, type ThreeDSFake } from '../support/threeds-fake.js';
import { freePort } from './service.js';

const SKIP = chromiumSkip('3-D Secure browser test');

const AMOUNT = 2050;
const DONE = 'Thank you, the payment is complete';
const SCA_DECLINE = declineMessage('REJECTED_BY_SCA');

for (const kind of await availableStores()) {
  describe(`3-D Secure in the payment window, in Chromium (${kind})`, { skip: SKIP }, () => {
    let fake: ThreeDSFake;
    let client: ThreeDSecureIo;
    let ch: ClearhausSetup;
    let browser: Browser;
    const log: string[] = [];
    let prefixes = 20;
    /** A fresh 10-digit prefix for each PAN of this suite. */
    const pan = (last4: string) => luhnPan(last4, `40001005${String(prefixes++).padStart(2, '0')}`);

    before(async () => {
      fake = await startThreeDSFake();
      client = new ThreeDSecureIo({ baseUrl: fake.url, timeoutMs: 2_000 });
      // The service's publicUrl is its real address: the 3DS notification URLs the ACS posts to must reach it.
      const port = await freePort();
      const publicUrl = `http://127.0.0.1:${port}`;
      ch = await startClearhaus(kind, {
        config: { publicUrl, logLevel: 'info' },
        threeDSServer: client,
        logDestination: { write: (line: string) => void log.push(line) },
      });
      await ch.t.runtime.app.listen({ port, host: '127.0.0.1' });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await ch?.close();
      await client?.close();
      await fake?.close();
    });

    const merchantWith3DS = () => sharedMerchantWith3DS(ch, fake);

    let merchant: TestMerchant | null = null;
    const theMerchant = async () => (merchant ??= await merchantWith3DS());

    /**
     * A page in a fresh context; `blocked` rejects at the first CSP violation (a blocked frame
     * navigation otherwise shows only as a wait that never ends).
     */
    async function newPage(): Promise<{ page: Page; problems: string[]; blocked: Promise<never>; close: () => Promise<void> }> {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const blocked = new Promise<never>((_, reject) => {
        page.on('console', (msg) => {
          if (msg.type() === 'error' && /Content Security Policy/.test(msg.text())) reject(new Error(`CSP violation: ${msg.text()}`));
        });
      });
      blocked.catch(() => {});
      return { page, problems: recordProblems(page), blocked, close: () => context.close() };
    }

    /** A CIT session of the merchant: its id and window URL. */
    async function session(scaMode = 'NORMAL'): Promise<{ m: TestMerchant; id: string; url: string }> {
      const m = await theMerchant();
      const init = ok(await m.api.post('/public/api/v1/cit', { pointOfSaleId: m.onlinePointOfSaleId, amount: AMOUNT, currency: 'EUR', scaMode }), 'POST /cit');
      return { m, id: init.session.id as string, url: init.paymentWindowUrl as string };
    }

    async function fillCard(page: Page, number: string) {
      await page.getByLabel('Card number').fill(number);
      await page.getByLabel('Expiry month').fill('12');
      await page.getByLabel('Expiry year').fill('2030');
      await page.getByLabel('Security code (CVC)').fill('123');
      await page.getByLabel('Name on card').fill('Jane Doe');
    }

    const payButton = (page: Page) => page.getByRole('button', { name: 'Pay 20.50 EUR', exact: true });
    const sessionOf = async (m: TestMerchant, id: string) => ok(await m.api.get(`/public/api/v1/sessions/${id}`), 'session').session;
    const authorizationsOf = (number: string) => ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === number);
    const transactionOf = (number: string) => {
      const tx = fake.transactions.find((x) => x.pan === number);
      assert.ok(tx, `a 3DS transaction for the card`);
      return tx;
    };
    const areqOf = (number: string) => transactionOf(number).areq as Record<string, unknown>;

    /** Opens the window, pays with `number` and waits until the window shows the success page or the form again. */
    async function payInBrowser(number: string, o: { scaMode?: string; during?: (page: Page) => Promise<void> } = {}) {
      const s = await session(o.scaMode);
      const { page, problems, blocked, close } = await newPage();
      try {
        await page.goto(s.url);
        await fillCard(page, number);
        await payButton(page).click();
        if (o.during) await Promise.race([o.during(page), blocked]);
        const outcome = await Promise.race([
          blocked,
          page
            .getByText(DONE)
            .waitFor({ timeout: 20_000 })
            .then(() => 'done' as const),
          page
            .getByRole('alert')
            .waitFor({ timeout: 20_000 })
            .then(() => 'alert' as const),
        ]);
        const alert = outcome === 'alert' ? await page.getByRole('alert').innerText() : null;
        const html = await page.content();
        const formShown = outcome === 'alert' && (await page.getByLabel('Card number').isVisible());
        return { ...s, outcome, alert, html, formShown, problems: [...problems], url: page.url() };
      } finally {
        await close();
      }
    }

    /** The window ended at the success page, the session COMPLETED. */
    async function assertCompleted(r: Awaited<ReturnType<typeof payInBrowser>>) {
      assert.equal(r.outcome, 'done', `success page (alert: ${r.alert})`);
      assert.equal((await sessionOf(r.m, r.id)).state, 'COMPLETED');
    }

    /** Refused by 3-D Secure: the form again with the SCA message, nothing at Clearhaus, the session PENDING. */
    async function assertRefusedBySca(r: Awaited<ReturnType<typeof payInBrowser>>, number: string) {
      assert.equal(r.outcome, 'alert', 'the window shows a decline');
      assert.ok(r.formShown, 'the card form again');
      assert.match(r.alert ?? '', new RegExp(SCA_DECLINE.replace(/[.]/g, '\\.')));
      assert.equal(authorizationsOf(number).length, 0, 'nothing reached Clearhaus');
      const s = await sessionOf(r.m, r.id);
      assert.equal(s.state, 'PENDING');
      assert.equal(s.errorCode, 'REJECTED_BY_SCA');
      assert.ok(!r.html.includes(number), 'the card number is not on the page');
    }

    test('frictionless Y with the 3DS Method: compInd Y, the real browser fields, the ARes unchanged at Clearhaus', async () => {
      const number = pan('0003');
      const r = await payInBrowser(number);
      await assertCompleted(r);
      assert.deepEqual(r.problems, [], 'no script errors or CSP violations');
      const [sent] = authorizationsOf(number);
      assert.ok(sent, 'authorized at Clearhaus');
      const tx = transactionOf(number);
      assert.deepEqual(JSON.parse(sent.form['card[3dsecure][v2][ares]']!), tx.ares);
      const areq = areqOf(number);
      assert.equal(areq.threeDSCompInd, 'Y');
      assert.equal(areq.browserJavascriptEnabled, true);
      assert.match(String(areq.browserScreenWidth), /^[0-9]+$/);
      assert.match(String(areq.browserScreenHeight), /^[0-9]+$/);
      assert.match(String(areq.browserUserAgent), /Chrome|Headless/);
    });

    test('frictionless without a 3DS Method: compInd U', async () => {
      const number = pan('0103');
      const r = await payInBrowser(number);
      await assertCompleted(r);
      assert.equal(areqOf(number).threeDSCompInd, 'U');
      assert.ok(authorizationsOf(number)[0]?.form['card[3dsecure][v2][ares]']);
    });

    test('a 3DS Method that never answers: the window waits about 10 s, then goes on with compInd N', async () => {
      const number = pan('0203');
      const started = Date.now();
      const r = await payInBrowser(number);
      const took = Date.now() - started;
      await assertCompleted(r);
      assert.ok(took >= 9_000, `waited for the method (${took} ms)`);
      assert.equal(areqOf(number).threeDSCompInd, 'N');
    });

    test('a challenge that passes: the frame appears, the payment completes, the RReq unchanged at Clearhaus', async () => {
      const number = pan('0170');
      let framed = false;
      const r = await payInBrowser(number, {
        during: async (page) => {
          await page.locator('iframe[name="threeds-challenge"]').waitFor({ state: 'attached' });
          framed = true;
        },
      });
      assert.ok(framed, 'the challenge frame was shown');
      await assertCompleted(r);
      const [sent] = authorizationsOf(number);
      assert.ok(sent, 'authorized at Clearhaus');
      assert.deepEqual(JSON.parse(sent.form['card[3dsecure][v2][rreq]']!), transactionOf(number).rreq);
    });

    test('a challenge that fails: nothing at Clearhaus, the form again with the SCA message, the session PENDING', async () => {
      const number = pan('0171');
      const r = await payInBrowser(number);
      await assertRefusedBySca(r, number);
    });

    test('a challenge decided by hand: "Authenticate" in the ACS frame completes the payment', async () => {
      const number = pan('0172');
      const r = await payInBrowser(number, {
        during: async (page) => {
          await page.frameLocator('iframe[name="threeds-challenge"]').getByRole('button', { name: 'Authenticate' }).click();
        },
      });
      await assertCompleted(r);
      assert.ok(authorizationsOf(number)[0]?.form['card[3dsecure][v2][rreq]'], 'the RReq at Clearhaus');
    });

    test('frictionless A and I authorize with the ARes unchanged; U goes on without 3-D Secure (NORMAL)', async () => {
      for (const last4 of ['0123', '0143']) {
        const number = pan(last4);
        await assertCompleted(await payInBrowser(number));
        assert.deepEqual(JSON.parse(authorizationsOf(number)[0]!.form['card[3dsecure][v2][ares]']!), transactionOf(number).ares);
      }
      const u = pan('0153');
      await assertCompleted(await payInBrowser(u));
      const [sent] = authorizationsOf(u);
      assert.ok(sent && !Object.keys(sent.form).some((k) => k.includes('3dsecure')), 'U: authorized without 3-D Secure');
    });

    test('frictionless N and R: refused before Clearhaus, the form again', async () => {
      for (const last4 of ['0113', '0133']) {
        const number = pan(last4);
        const r = await payInBrowser(number);
        await assertRefusedBySca(r, number);
      }
    });

    test('a DS timeout (Erro 405, no 3DS Method): NORMAL authorizes without 3-D Secure; FORCE refuses, nothing sent', async () => {
      const normal = pan('0163');
      const r = await payInBrowser(normal);
      await assertCompleted(r);
      const [sent] = authorizationsOf(normal);
      assert.ok(sent, 'authorized at Clearhaus');
      assert.ok(!Object.keys(sent.form).some((k) => k.includes('3dsecure')), 'without 3-D Secure');

      const forced = pan('0163');
      const f = await payInBrowser(forced, { scaMode: 'FORCE' });
      assert.equal(f.outcome, 'alert', 'refused');
      assert.ok(f.formShown, 'the card form again');
      assert.equal(authorizationsOf(forced).length, 0, 'nothing reached Clearhaus');
      const s = await sessionOf(f.m, f.id);
      assert.equal(s.state, 'PENDING');
      assert.ok(s.errorCode, 'an error code');
    });

    test('a card not enrolled (305): NORMAL pays without 3-D Secure', async () => {
      const number = luhnPan('9999', `40001005${String(prefixes++).padStart(2, '0')}`);
      const r = await payInBrowser(number);
      await assertCompleted(r);
      const [sent] = authorizationsOf(number);
      assert.ok(sent && !Object.keys(sent.form).some((k) => k.includes('3dsecure')), 'without 3-D Secure');
    });

    test('the card form from the keyboard alone (Tab, typing, Enter), then frictionless with the method', async () => {
      const number = pan('0003');
      const s = await session();
      const { page, blocked, close } = await newPage();
      try {
        await page.goto(s.url);
        const focused = () => page.evaluate("document.activeElement?.getAttribute('autocomplete') ?? ''").then(String);
        for (let i = 0; i < 20 && (await focused()) !== 'cc-number'; i++) await page.keyboard.press('Tab');
        assert.equal(await focused(), 'cc-number', 'Tab reaches the card number');
        await page.keyboard.type(number);
        await page.keyboard.press('Tab');
        await page.keyboard.type('12');
        await page.keyboard.press('Tab');
        await page.keyboard.type('2030');
        await page.keyboard.press('Tab');
        await page.keyboard.type('123');
        await page.keyboard.press('Tab');
        assert.equal(await focused(), 'cc-name');
        await page.keyboard.type('Jane Doe');
        await page.keyboard.press('Enter');
        await Promise.race([blocked, page.getByText(DONE).waitFor({ timeout: 20_000 })]);
      } finally {
        await close();
      }
      assert.equal((await sessionOf(s.m, s.id)).state, 'COMPLETED');
      assert.equal(areqOf(number).threeDSCompInd, 'Y');
    });

    test('no card number and no authentication value in the service log', async () => {
      assert.ok(log.length > 0, 'the log was captured');
      const secrets = new Set<string>();
      for (const tx of fake.transactions) {
        secrets.add(tx.pan);
        for (const message of [tx.ares, tx.rreq]) {
          const av = (message as Record<string, unknown> | undefined)?.authenticationValue;
          if (typeof av === 'string') secrets.add(av);
        }
      }
      assert.ok(secrets.size > 10, 'the suite has run its payments first');
      for (const line of log) for (const secret of secrets) assert.ok(!line.includes(secret), `the log has a secret: ${line.slice(0, 300)}`);
    });
  });
}
