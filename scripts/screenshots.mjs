#!/usr/bin/env node
// `npm run screenshots`: PNGs of the dashboard's main views for the README, in docs/screenshots/.
// Starts the service (bin/payments.mjs start) on a fresh temporary SQLite sandbox, seeds a merchant
// and a few payments through the public API like an integrator would (MOTO captured and partly
// refunded, MOTO authorized only, a declined card, one refunded in full, one voided, a CIT paid in
// the sandbox payment window and an MIT on its stored card), then signs in with headless Chromium
// (playwright-core; CHROMIUM_PATH, default /usr/bin/chromium) and saves 1280x800 shots (and the
// folded menu at 900 px). Needs the built dashboard (npm run build:dashboard).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'docs', 'screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const API = '/public/api/v1';
const VIEWPORT = { width: 1280, height: 800 };

if (!fs.existsSync(CHROMIUM)) fail(`Chromium not found at ${CHROMIUM} (set CHROMIUM_PATH, or apt-get install chromium).`);
if (!fs.existsSync(path.join(ROOT, 'dashboard', 'dist', 'index.html'))) fail('The dashboard is not built: run `npm run build:dashboard` first.');

function fail(message) {
  console.error(`screenshots: ${message}`);
  process.exit(1);
}

/** A port nothing listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(probe, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-screenshots-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const operatorKey = `op_${randomBytes(24).toString('base64url')}`;
// A clean environment: nothing of the caller's DATABASE_URL or keys reaches the throwaway service.
const service = spawn(process.execPath, [path.join(ROOT, 'bin', 'payments.mjs'), 'start'], {
  cwd: dataDir,
  env: {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    DATABASE_URL: path.join(dataDir, 'payments.db'),
    PORT: String(port),
    HOST: '127.0.0.1',
    PAYMENTS_PUBLIC_URL: base,
    PAYMENTS_OPERATOR_KEY: operatorKey,
    PAYMENTS_SANDBOX: '1',
    PAYMENTS_SANDBOX_LATENCY_MS: '0',
    PAYMENTS_ALLOW_PRIVATE_URLS: '1',
    PAYMENTS_RATE_LIMITS: 'off',
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
let exited = false;
service.on('exit', () => (exited = true));

async function stop() {
  if (!exited) {
    service.kill('SIGTERM');
    await waitUntil(async () => exited, 'the service to stop', 15_000).catch(() => service.kill('SIGKILL'));
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}

async function call(method, url, { token, body, idempotencyKey } = {}) {
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const res = await fetch(base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status} ${text}`);
  return json;
}

const card = (number) => ({ number, expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Alex Jensen' });

/** A merchant as the partner API makes one: account, activation, MOTO, an access token, an online point of sale. */
async function seedMerchant() {
  const op = { token: operatorKey };
  const { account } = await call('POST', `${API}/partner/accounts`, {
    ...op,
    body: { name: 'Nordic Coffee Roasters', email: 'shop@nordic-coffee.example', currencyCode: 'DKK', timezone: 'Europe/Copenhagen', domain: 'localhost' },
  });
  await call('PATCH', `${API}/partner/accounts/${account.id}/activate`, op);
  await call('PATCH', `${API}/partner/accounts/${account.id}/capabilities`, { ...op, body: { moto: true } });
  const { accessToken } = await call('POST', `${API}/partner/accounts/${account.id}/access-token`, { ...op, body: { environment: 'test' } });
  const { pointOfSale } = await call('POST', `${API}/management/point-of-sales`, {
    token: accessToken,
    body: { name: 'Web shop', domain: 'localhost', webhookAuthentication: `Bearer ${randomUUID()}`, type: 'ONLINE' },
  });
  await call('POST', `${API}/partner/accounts`, {
    ...op,
    body: { name: 'Harbour Bikes', email: 'hello@harbour-bikes.example', currencyCode: 'EUR', timezone: 'Europe/Berlin', domain: 'localhost' },
  });
  return { token: accessToken, pointOfSaleId: pointOfSale.id };
}

async function seedPayments(m) {
  const as = { token: m.token };
  const moto = (amount, reference, number) =>
    call('POST', `${API}/moto`, {
      ...as,
      idempotencyKey: randomUUID(),
      body: { transaction: { pointOfSaleId: m.pointOfSaleId, amount, currency: 'DKK', reference, instantCapture: 'OFF' }, card: card(number) },
    }).then((r) => r.transaction.id);

  const shown = await moto(24_900, 'order-1001', '4111111111111111');
  await call('POST', `${API}/transactions/${shown}/capture`, { ...as, idempotencyKey: randomUUID(), body: { amount: 24_900 } });
  await call('POST', `${API}/transactions/${shown}/refund`, { ...as, idempotencyKey: randomUUID(), body: { amount: 4_900 } });
  await moto(125_000, 'order-1002', '5555555555554444');
  await moto(8_000, 'order-1003', '4000000000000002').catch(() => null); // declined: FAILED, kept in the list
  // Refunded in full (shown as Refunded, not as a green success) and voided.
  const refunded = await moto(12_500, 'order-1004', '4111111111111111');
  await call('POST', `${API}/transactions/${refunded}/capture`, { ...as, idempotencyKey: randomUUID(), body: { amount: 12_500 } });
  await call('POST', `${API}/transactions/${refunded}/refund`, { ...as, idempotencyKey: randomUUID(), body: { amount: 12_500 } });
  const voided = await moto(3_000, 'order-1005', '4111111111111111');
  await call('POST', `${API}/transactions/${voided}/void`, { ...as, idempotencyKey: randomUUID(), body: { amount: -1 } });

  // CIT: a session paid in the sandbox payment window, which stores the card for later MITs.
  const cit = await call('POST', `${API}/cit`, {
    ...as,
    idempotencyKey: randomUUID(),
    body: {
      pointOfSaleId: m.pointOfSaleId,
      amount: 9_900,
      currency: 'DKK',
      reference: 'subscription-start',
      customerId: 'cust-42',
      subscription: { type: 'UNSCHEDULED' },
    },
  });
  await call('POST', `/sandbox/v1/sessions/${cit.session.id}/complete`, { token: operatorKey, body: { card: card('4111111111111111') } });
  const session = await waitUntil(async () => {
    const s = (await call('GET', `${API}/sessions/${cit.session.id}`, as)).session;
    return s.state === 'COMPLETED' ? s : null;
  }, 'the CIT session to complete');
  // MIT on the stored card; its callback goes to a port where nothing listens, so the jobs view has retries to show.
  const callbackPort = await freePort();
  await call('POST', `${API}/mit`, {
    ...as,
    idempotencyKey: randomUUID(),
    body: {
      subscriptionId: session.subscriptionId,
      amount: 9_900,
      currency: 'DKK',
      reference: 'subscription-month-2',
      notificationUrl: `http://localhost:${callbackPort}/callbacks`,
    },
  });
  return shown;
}

async function shoot(page, name) {
  await page.waitForLoadState('networkidle');
  // Chart.js animates for about a second; the shot is taken after it.
  await sleep(1200);
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
  console.log(`  docs/screenshots/${name}.png`);
}

let browser;
try {
  await waitUntil(async () => (await fetch(`${base}/healthz`)).ok, 'the service to answer /healthz', 60_000);
  const merchant = await seedMerchant();
  const detailId = await seedPayments(merchant);

  fs.mkdirSync(OUT, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const page = await (await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 })).newPage();
  const signIn = async (key, heading) => {
    await page.getByLabel('API key, access token or operator key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: heading }).first().waitFor();
  };
  const open = async (hash, heading) => {
    await page.goto(`${base}/dashboard/#${hash}`);
    await page.getByRole('heading', { name: heading }).first().waitFor();
  };

  console.log('Saving:');
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shoot(page, 'sign-in');

  await signIn(merchant.token, 'Payments');
  await open('/overview', 'Overview');
  await shoot(page, 'overview');
  await open('/payments', 'Payments');
  await page.locator('tbody tr').first().waitFor();
  await shoot(page, 'payments');
  await open(`/payments/${detailId}`, `Payment ${detailId}`);
  await page.locator('ol.timeline li').first().waitFor();
  await shoot(page, 'payment-detail');
  await open(`/points-of-sale/${merchant.pointOfSaleId}`, 'Point of sale Web shop');
  await page.getByText('Approved domain').first().waitFor();
  await shoot(page, 'point-of-sale');
  // Narrower than 1200 px the links fold into a menu: the menu open.
  await page.setViewportSize({ width: 900, height: 600 });
  await open('/payments', 'Payments');
  await page.getByRole('button', { name: 'Menu' }).click();
  await shoot(page, 'menu-narrow');
  await page.setViewportSize(VIEWPORT);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(operatorKey, 'Accounts');
  await page.locator('tbody tr').first().waitFor();
  await shoot(page, 'operator-accounts');
  await open('/jobs', 'Jobs');
  await page.getByRole('heading', { name: 'Dead jobs' }).waitFor();
  await shoot(page, 'operator-jobs');
  await open('/sandbox', 'Sandbox');
  await page.getByTestId('service-time').waitFor();
  await page.getByRole('button', { name: 'Run settlement' }).click();
  await page.getByText(/^Settlement run done/).waitFor();
  await shoot(page, 'operator-sandbox');
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await browser?.close();
  await stop();
}
