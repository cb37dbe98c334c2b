/**
 * The hosted payment window in a real browser: the service as a child process (src/main.ts over
 * real HTTP, PAYMENTS_PUBLIC_URL on its port), a merchant with an ONLINE point of sale on
 * `localhost`, a CIT session with a subscription, and headless Chromium (Debian's
 * /usr/bin/chromium, driven by playwright-core) that pays like a customer:
 *   - the page shows the merchant, the formatted amount and the currency, and every input has a label;
 *   - a declined card (4000000000000002) gives a clear message and the form again, without the card number;
 *   - an approved card (4111111111111111) ends at the shop's successUrl;
 *   - the session is COMPLETED, its transaction SUCCESS, the subscription ACTIVE and the stored card
 *     masked; the full card number never appears in a page the browser got, nor in the service log.
 * Skipped, saying so, when /usr/bin/chromium is missing (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../support/browser.js';
import { API, bootstrapMerchant, freshDatabase, newKeys, type ServiceProcess, sleep, startService } from './service.js';

const SKIP = chromiumSkip('browser test');

const DECLINED = '4000000000000002';
const VISA = '4111111111111111';
/** Escaped on the page: the heading must read exactly this. */
const MERCHANT = 'Nordlys Café & Bageri';
const AMOUNT = 123456;
const AMOUNT_TEXT = '1,234.56 DKK';

/** The shop: records where the browser is sent back to and answers a small page; `/pre-auth/deny` answers 403 (a refusing preAuthUrl). */
async function startShop() {
  const visits: Array<{ path: string; search: string; referer: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    visits.push({ path: url.pathname, search: url.search, referer: req.headers.referer });
    if (url.pathname.startsWith('/pre-auth/')) {
      req.resume();
      res.writeHead(url.pathname === '/pre-auth/deny' ? 403 : 200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Shop</title><h1>Shop: ${url.pathname}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    visits,
    url: (path: string) => `http://localhost:${port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * SIGTERM and wait for the exit. Not `service.stop()`: its 15 s fallback timer is not cleared and
 * keeps the test process alive that long after the service has gone.
 */
async function stopGracefully(service: ServiceProcess) {
  const gone = () => {
    try {
      process.kill(service.pid, 0);
      return false;
    } catch {
      return true;
    }
  };
  if (!gone()) process.kill(service.pid, 'SIGTERM');
  for (const deadline = Date.now() + 15_000; !gone() && Date.now() < deadline;) await sleep(50);
  await service.kill(); // SIGKILL only if still running; waits for the exit either way
}

async function fillCard(page: Page, number: string) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month').fill('12');
  await page.getByLabel('Expiry year').fill('2030');
  await page.getByLabel('Security code (CVC)').fill('123');
  await page.getByLabel('Name on card').fill('Test Holder');
}

test(
  'hosted payment window in Chromium: decline message, then pay, redirect to successUrl, stored card masked',
  { skip: SKIP, timeout: 120_000 },
  async (t) => {
    const started = Date.now();
    // Undone last-in first-out (node:test runs t.after hooks in the order they were added).
    const cleanups: Array<() => Promise<unknown>> = [];
    t.after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    const db = await freshDatabase('sqlite', 'browser');
    cleanups.push(() => db.drop());
    const keys = newKeys();
    // LOG_LEVEL info: one line per request, so that the log can be searched for the card number.
    const service = await startService({ databaseUrl: db.url, dir: db.dir, ...keys, label: 'browser', env: { LOG_LEVEL: 'info' } });
    cleanups.push(() => stopGracefully(service));
    const shop = await startShop();
    cleanups.push(() => shop.close());

    const merchant = await bootstrapMerchant(service, MERCHANT);
    const customerId = `cust-browser-${Date.now()}`;
    const successUrl = shop.url('/checkout/success?order=42');
    const failureUrl = shop.url('/checkout/failure?order=42');
    const cit = await merchant.api.must('POST', `${API}/cit`, {
      pointOfSaleId: merchant.pointOfSaleId,
      amount: AMOUNT,
      currency: 'DKK',
      reference: 'order-42',
      customerId,
      successUrl,
      failureUrl,
      maxAttempts: 3,
      subscription: { type: 'UNSCHEDULED' },
    });
    const paymentWindowUrl: string = cit.paymentWindowUrl;
    assert.ok(paymentWindowUrl.startsWith(`${service.baseUrl}/pay/`), `paymentWindowUrl ${paymentWindowUrl} is on the service (${service.baseUrl})`);
    const sessionId: string = cit.session.id;

    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);

    // Every document the browser receives after the first submit (redirects have no body).
    let submitted = false;
    const documents: Array<Promise<{ url: string; status: number; body: string }>> = [];
    page.on('response', (response: Response) => {
      if (!submitted || response.request().resourceType() !== 'document') return;
      documents.push(
        response.text().then(
          (body) => ({ url: response.url(), status: response.status(), body }),
          () => ({ url: response.url(), status: response.status(), body: '' }),
        ),
      );
    });

    // --- the window as the customer first sees it ---------------------------------------------
    const first = await page.goto(paymentWindowUrl);
    assert.equal(first?.status(), 200);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), MERCHANT);
    assert.equal(await page.getByRole('main', { name: MERCHANT }).count(), 1, 'main is labelled by the merchant heading');
    const amountText = (await page.locator('.amount').innerText()).trim();
    assert.match(amountText, new RegExp(`${AMOUNT_TEXT.replace('.', '\\.')}$`), `amount shown: ${amountText}`);
    assert.ok(amountText.includes('DKK'), 'currency shown');
    assert.match(await page.title(), new RegExp(`Pay ${AMOUNT_TEXT.replace('.', '\\.')} – ${MERCHANT}`));
    assert.equal(await page.getByRole('alert').count(), 0, 'no alert before any attempt');
    // Every input can be found by its label (label[for] ↔ input[id]), and the expiry fields are grouped.
    for (const label of ['Card number', 'Expiry month', 'Expiry year', 'Security code (CVC)', 'Name on card']) {
      assert.equal(await page.getByLabel(label, { exact: true }).count(), 1, `one input labelled "${label}"`);
    }
    assert.equal(await page.getByRole('group', { name: 'Expiry date' }).count(), 1, 'expiry fields in a fieldset with a legend');
    assert.equal(await page.getByLabel('Card number').getAttribute('autocomplete'), 'cc-number');
    const pay = page.getByRole('button', { name: `Pay ${AMOUNT_TEXT}` });
    assert.equal(await pay.count(), 1);

    // --- declined card: a clear message, the form again -----------------------------------------
    await fillCard(page, DECLINED);
    submitted = true;
    const [declineResponse] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === paymentWindowUrl), pay.click()]);
    assert.equal(declineResponse.status(), 200);
    await page.waitForLoadState('domcontentloaded');
    const alert = page.getByRole('alert');
    await alert.waitFor({ state: 'visible' });
    assert.equal(await alert.getByRole('heading').textContent(), 'The payment did not go through');
    assert.match(await alert.innerText(), /declined by the card issuer\. Please use another card\./);
    assert.doesNotMatch(await alert.innerText(), /DECLINED_BY_ISSUER_OR_SCHEME/, 'no internal error code for the customer');
    // The form is still there: the card number and CVC are empty, the rest is kept.
    assert.ok(await page.getByLabel('Card number').isVisible(), 'card form still shown');
    assert.equal(await page.getByLabel('Card number').inputValue(), '');
    assert.equal(await page.getByLabel('Security code (CVC)').inputValue(), '');
    assert.equal(await page.getByLabel('Expiry month').inputValue(), '12');
    assert.equal(await page.getByLabel('Name on card').inputValue(), 'Test Holder');
    assert.match(await page.locator('form').innerText(), /You have 2 attempts\./);
    assert.ok(!(await page.content()).includes(DECLINED), 'the declined card number is not on the page');
    const afterDecline = (await merchant.api.must('GET', `${API}/sessions/${sessionId}`)).session;
    assert.equal(afterDecline.state, 'PENDING');
    assert.equal(afterDecline.attempts, 1);

    // --- approved card: back to the shop's successUrl -------------------------------------------
    await fillCard(page, VISA);
    await Promise.all([page.waitForURL(successUrl), page.getByRole('button', { name: `Pay ${AMOUNT_TEXT}` }).click()]);
    assert.equal(page.url(), successUrl);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Shop: /checkout/success');
    const visit = shop.visits.find((v) => v.path === '/checkout/success');
    assert.ok(visit, 'the shop saw the customer come back');
    assert.equal(visit.search, '?order=42');
    assert.ok(!(visit.referer ?? '').includes(cit.key), 'the session key does not leak to the shop in Referer');

    // --- the result through the API -------------------------------------------------------------
    let session: any = null;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(50)) {
      session = (await merchant.api.must('GET', `${API}/sessions/${sessionId}`)).session;
      if (session.state === 'COMPLETED') break;
    }
    assert.equal(session.state, 'COMPLETED');
    assert.equal(session.attempts, 2);
    assert.ok(session.transactionId, 'session has its transactionId');
    const { transaction } = await merchant.api.must('GET', `${API}/transactions/${session.transactionId}`);
    assert.equal(transaction.state, 'SUCCESS');
    assert.equal(transaction.amount, AMOUNT);
    assert.equal(transaction.currency, 'DKK');
    assert.equal(transaction.sessionId, sessionId);
    const sub = await merchant.api.must('GET', `${API}/subscriptions/${session.subscriptionId}`);
    assert.equal(sub.subscription.state, 'ACTIVE');
    assert.equal(sub.subscription.type, 'UNSCHEDULED');
    assert.equal(sub.subscription.customerId, customerId);
    const { paymentMethod } = await merchant.api.must('GET', `${API}/payment-methods/${session.paymentMethodId}`);
    assert.equal(paymentMethod.displayText, '41111111XXXX1111');
    assert.equal(sub.paymentMethod.id, paymentMethod.id);

    // The window, opened again, says the payment is complete.
    const again = await context.newPage();
    await again.goto(paymentWindowUrl);
    await again.getByRole('status').waitFor();
    assert.match(await again.getByRole('status').innerText(), /the payment is complete/);
    assert.equal(await again.getByRole('link', { name: `Return to ${MERCHANT}` }).getAttribute('href'), successUrl);
    await again.close();

    // --- no full card number anywhere after submission -----------------------------------------
    const received = await Promise.all(documents);
    assert.ok(
      received.some((d) => d.url === paymentWindowUrl && d.status === 200 && d.body.includes('The payment did not go through')),
      'the decline page was captured',
    );
    for (const d of received) {
      for (const pan of [DECLINED, VISA]) assert.ok(!d.body.includes(pan), `${d.url} (HTTP ${d.status}) contains a full card number`);
    }
    assert.ok(!(await page.content()).includes(VISA));
    const log = fs.readFileSync(service.logPath, 'utf8');
    assert.ok(log.includes('/pay/'), 'the service log has the page requests');
    for (const pan of [DECLINED, VISA]) assert.ok(!log.includes(pan), 'the service log contains a full card number');

    t.diagnostic(`browser flow took ${Date.now() - started} ms`);
  },
);

test(
  'hosted payment window in Chromium: age step, retryUrl after a failed attempt, dynamic amount, wallets limited by allowedPaymentMethods',
  { skip: SKIP, timeout: 120_000 },
  async (t) => {
    const cleanups: Array<() => Promise<unknown>> = [];
    t.after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    const db = await freshDatabase('sqlite', 'browser-cit');
    cleanups.push(() => db.drop());
    const keys = newKeys();
    const service = await startService({ databaseUrl: db.url, dir: db.dir, ...keys, label: 'browser-cit' });
    cleanups.push(() => stopGracefully(service));
    const shop = await startShop();
    cleanups.push(() => shop.close());
    const merchant = await bootstrapMerchant(service, MERCHANT);
    const successUrl = shop.url('/checkout/success');
    const retryUrl = shop.url('/checkout/retry');

    const browser = await launchChromium(['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']);
    cleanups.push(() => browser.close());
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);

    // --- 1. age step, retry redirect, then a dynamic amount paid with an allowed wallet ----------
    const cit = await merchant.api.must('POST', `${API}/cit`, {
      pointOfSaleId: merchant.pointOfSaleId,
      amount: 5000,
      currency: 'DKK',
      reference: 'order-43',
      customerId: 'cust-browser-age',
      dynamicAmount: true,
      allowedPaymentMethods: ['KLARNA', 'VIPPS_MOBILEPAY'],
      ageVerification: { minimumAge: 18, country: 'DK' },
      preAuthUrl: shop.url('/pre-auth/allow'),
      maxAttempts: 3,
      successUrl,
      retryUrl,
      failureUrl: shop.url('/checkout/failure'),
    });
    const windowUrl: string = cit.paymentWindowUrl;
    await page.goto(windowUrl);
    assert.equal(await page.getByRole('heading', { level: 2, name: 'Verify your age' }).count(), 1);
    assert.equal(await page.getByLabel('Card number').count(), 0, 'no payment form before the age step');
    const tooYoung = `${new Date().getUTCFullYear() - 10}-01-01`;
    await page.getByLabel('Date of birth (sandbox eID)').fill(tooYoung);
    await Promise.all([page.waitForURL(retryUrl), page.getByRole('button', { name: 'Verify age' }).click()]);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Shop: /checkout/retry');
    let session = (await merchant.api.must('GET', `${API}/sessions/${cit.session.id}`)).session;
    assert.equal(session.state, 'PENDING');
    assert.equal(session.attempts, 1);
    assert.equal(session.errorCode, 'AGE_VERIFICATION_NOT_COMPLETED');

    // Back in the window: the reason, the age step again; of age this time.
    await page.goto(windowUrl);
    assert.match(await page.getByRole('alert').innerText(), /Your age could not be verified/);
    await page.getByLabel('Date of birth (sandbox eID)').fill('1990-05-17');
    await page.getByRole('button', { name: 'Verify age' }).click();
    // Redirected back to the window (the same URL it was on): wait for the payment form.
    await page.getByLabel('Amount (DKK)').waitFor();
    assert.equal(page.url(), windowUrl);

    // The payment form: only the allowed wallets, no card form, the amount to enter.
    assert.equal(await page.getByLabel('Card number').count(), 0, 'CARD is not allowed');
    const walletButtons = (await page.locator('button.wallet').allInnerTexts()).map((s) => s.trim());
    assert.deepEqual(walletButtons, ['Pay with Vipps MobilePay', 'Pay with Klarna']);
    assert.equal(await page.getByRole('button', { name: 'Pay with Apple Pay' }).count(), 0);
    const amount = page.getByLabel('Amount (DKK)');
    assert.equal(await amount.inputValue(), '50.00', 'the session amount is the default');
    await amount.fill('0');
    await page.getByRole('button', { name: 'Pay with Klarna' }).click();
    await page.getByText('Enter an amount greater than 0').first().waitFor();
    assert.equal(await page.getByLabel('Amount (DKK)').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Amount (DKK)').fill('12.34');
    await Promise.all([page.waitForURL(successUrl), page.getByRole('button', { name: 'Pay with Klarna' }).click()]);
    session = (await merchant.api.must('GET', `${API}/sessions/${cit.session.id}`)).session;
    assert.equal(session.state, 'COMPLETED');
    assert.equal(session.ageVerified, true);
    assert.equal(session.amount, 1234);
    const { transaction } = await merchant.api.must('GET', `${API}/transactions/${session.transactionId}`);
    assert.equal(transaction.state, 'SUCCESS');
    assert.equal(transaction.amount, 1234);
    assert.equal(transaction.paymentMethodType, 'KLARNA');
    assert.ok(
      shop.visits.some((v) => v.path === '/pre-auth/allow'),
      'the preAuthUrl was called',
    );

    // --- 2. a card refused by the merchant's preAuthUrl: the customer goes to retryUrl -----------
    const refused = await merchant.api.must('POST', `${API}/cit`, {
      pointOfSaleId: merchant.pointOfSaleId,
      amount: AMOUNT,
      currency: 'DKK',
      preAuthUrl: shop.url('/pre-auth/deny'),
      retryUrl: shop.url('/checkout/retry?order=44'),
      successUrl,
    });
    await page.goto(refused.paymentWindowUrl);
    await fillCard(page, VISA);
    await Promise.all([page.waitForURL(shop.url('/checkout/retry?order=44')), page.getByRole('button', { name: `Pay ${AMOUNT_TEXT}` }).click()]);
    const after = (await merchant.api.must('GET', `${API}/sessions/${refused.session.id}`)).session;
    assert.equal(after.state, 'PENDING');
    assert.equal(after.errorCode, 'REJECTED_BY_MERCHANT');
    await page.goto(refused.paymentWindowUrl);
    assert.match(await page.getByRole('alert').innerText(), /The shop did not accept this payment/);
    assert.match(await page.locator('form').innerText(), /You have 2 attempts\./);
  },
);
