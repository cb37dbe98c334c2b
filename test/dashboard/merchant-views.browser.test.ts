/**
 * The merchant views of the dashboard (issue 12) in a real browser, on both stores: the service
 * on a real port, headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core), a
 * merchant signed in with its access token:
 *   - a billing agreement stopped (confirmation, Idempotency-Key) and resumed, seen in the page and via the API;
 *   - a payment link and a multi-link created from the form, each showing its QR image;
 *   - a webhook created, paused and resumed, and its deliveries page;
 *   - a settlement transfer with the fees of its transactions, and its CSV;
 *   - an API key created and shown once; points of sale and a terminal;
 *   - a reference `<script>alert(1)</script>` shown as literal text in the payments list and detail, never run;
 *   - another merchant's payment id is the "Payment not found" page.
 * The browser part is skipped, saying so, when /usr/bin/chromium is missing; the unit checks of
 * the page's pure helpers always run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { csvField, csvLine } from '../../dashboard/src/csv.js';
import { failureRate } from '../../dashboard/src/webhook-stats.js';
import type { Delivery } from '../../dashboard/src/types.js';
import { API, startTestRuntime, type TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { chromiumSkip, ensureDashboardBuilt, launchChromium, listenOnRealPort, recordProblems, signIn } from '../support/browser.js';
import { motoBody } from '../online/helpers.js';
import { createAgreement, createPlan, getAgreement, subscribe } from '../billing/support.js';

const SKIP = chromiumSkip('dashboard browser test');
if (!SKIP) ensureDashboardBuilt();

async function payment(m: TestMerchant, reference: string, capture: number) {
  const body = motoBody(m, { amount: 1000 });
  body.transaction.reference = reference;
  const res = await m.api.post(`${API}/moto`, body);
  assert.equal(res.status, 200, res.text);
  const id = res.body.transaction.id as string;
  if (capture) assert.equal((await m.api.post(`${API}/transactions/${id}/capture`, { amount: capture })).body.success, true);
  return id;
}

/** The natural width of the image matched by `selector` once it has loaded (0 if it never does). */
async function imageLoaded(page: Page, selector: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    // `any`: the test is compiled without the DOM library; the function runs in the page.
    const width = await page.locator(selector).evaluate((img: any) => (img.complete ? Number(img.naturalWidth) : 0));
    if (width > 0 || Date.now() > deadline) return width;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('merchant views: pure helpers', () => {
  test('webhook failure rate counts the attempts of the last 7 days', () => {
    const now = Date.parse('2026-11-25T12:00:00.000Z');
    const attempt = (at: string, success: boolean) => ({ attempt: 1, attemptedAt: at, success, httpStatus: success ? 200 : 500, error: null, durationMs: 5 });
    const deliveries = [
      { attemptLog: [attempt('2026-11-25T11:00:00.000Z', false), attempt('2026-11-25T11:01:00.000Z', true)] },
      { attemptLog: [attempt('2026-11-24T11:00:00.000Z', false)] },
      { attemptLog: [attempt('2026-11-01T11:00:00.000Z', false)] }, // outside the window
    ] as unknown as Delivery[];
    assert.deepEqual(failureRate(deliveries, now), { failed: 2, attempts: 3, percent: 67 });
    assert.equal(failureRate([], now), null);
  });

  test('settlement CSV fields: quoting, formulas neutralised, negative amounts kept as numbers', () => {
    assert.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
    assert.equal(csvField('@cmd'), "'@cmd");
    assert.equal(csvField('-1.25'), '-1.25');
    assert.equal(csvField('-1+2'), "'-1+2");
    assert.equal(csvField(null), '');
    assert.equal(csvLine(['a,b', 'line\nbreak', 3]), '"a,b","line\nbreak",3\r\n');
  });
});

for (const kind of await availableStores()) {
  describe(`merchant views in Chromium (${kind})`, () => {
    test(
      'agreements stop/resume, links with QR, webhook pause/resume, settlements, keys, terminals; <script> reference as text; foreign payment 404',
      { skip: SKIP, timeout: 180_000 },
      async (t) => {
        const rt = await startTestRuntime(kind);
        t.after(() => rt.close());
        const m = await rt.createMerchant({ physical: true });
        const other = await rt.createMerchant({ physical: false });
        const tag = Math.random().toString(36).slice(2, 8);

        const hostile = `<script>alert(1)</script>${tag}`;
        const hostileId = await payment(m, hostile, 0);
        const foreignId = await payment(other, `theirs-${tag}`, 0);
        const settledId = await payment(m, `settled-${tag}`, 1000);
        const sub = await subscribe(rt, m);
        const plan = await createPlan(m.api, { name: `Plan ${tag}` });
        const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { reference: `agr-${tag}` });
        assert.equal(agreement.state, 'ACTIVE');
        const run = await rt.operator.post('/sandbox/v1/settlements/run', {});
        assert.equal(run.status, 200, run.text);
        const transferId = (run.body.settlementTransfers as Array<{ settlementTransfer: { id: string; currency: string } }>).find(
          (s) => s.settlementTransfer.currency === 'DKK',
        )?.settlementTransfer.id;
        assert.ok(transferId, 'a DKK transfer');

        const base = await listenOnRealPort(rt);

        const browser = await launchChromium();
        t.after(() => browser.close());
        const context = await browser.newContext({ acceptDownloads: true });
        const page = await context.newPage();
        const problems = recordProblems(page);
        const dialogs: string[] = [];
        page.on('dialog', (dialog) => {
          dialogs.push(dialog.message());
          void dialog.dismiss();
        });
        const stateChanging: Array<{ method: string; url: string; idempotencyKey: string | undefined; csrf: string | undefined }> = [];
        page.on('request', (req) => {
          if (req.method() !== 'GET' && req.url().includes('/public/api/v1/')) {
            const headers = req.headers();
            stateChanging.push({ method: req.method(), url: req.url(), idempotencyKey: headers['idempotency-key'], csrf: headers['x-csrf-token'] });
          }
        });

        await signIn(page, base, m.token, 'Payments');

        // Billing agreement: stop behind a confirmation, then resume.
        await page.getByRole('link', { name: 'Billing agreements' }).click();
        await page.getByRole('heading', { name: 'Billing agreements' }).waitFor();
        await page.getByRole('link', { name: agreement.id }).click();
        await page.getByRole('heading', { name: `Billing agreement ${agreement.id}` }).waitFor();
        assert.equal(await page.getByTestId('agreement-state').innerText(), 'ACTIVE');
        await page.getByRole('button', { name: 'Stop agreement', exact: true }).click();
        await page.getByText(`Stop billing agreement ${agreement.id}?`).waitFor();
        assert.equal((await getAgreement(m.api, agreement.id)).state, 'ACTIVE', 'nothing happens before the confirmation');
        await page.getByRole('button', { name: 'Confirm: Stop agreement' }).click();
        await page.getByRole('status').filter({ hasText: 'The agreement is stopped.' }).waitFor();
        await page.getByTestId('agreement-state').filter({ hasText: 'STOPPED' }).waitFor();
        const stopped = await getAgreement(m.api, agreement.id);
        assert.equal(stopped.state, 'STOPPED');
        assert.equal(stopped.nextChargeAt, null);
        const stopCall = stateChanging.find((r) => r.url.endsWith(`/agreements/${agreement.id}/stop`));
        assert.ok(stopCall?.idempotencyKey, 'the stop carries an Idempotency-Key');
        assert.ok(stopCall?.csrf, 'and the CSRF token');
        await page.getByRole('button', { name: 'Resume agreement', exact: true }).click();
        await page.getByRole('button', { name: 'Confirm: Resume agreement' }).click();
        await page.getByTestId('agreement-state').filter({ hasText: 'ACTIVE' }).waitFor();
        assert.equal((await getAgreement(m.api, agreement.id)).state, 'ACTIVE');

        // The subscription behind it, from the list with a filter.
        await page.getByRole('link', { name: 'Subscriptions' }).click();
        await page.getByLabel('State').selectOption('ACTIVE');
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.getByRole('link', { name: sub.subscriptionId }).click();
        await page.getByRole('heading', { name: `Subscription ${sub.subscriptionId}` }).waitFor();
        assert.equal(await page.getByTestId('subscription-state').innerText(), 'ACTIVE');

        // A payment link and a multi-link from the form, each with its QR image.
        await page.getByRole('link', { name: 'Payment links' }).click();
        await page.getByRole('heading', { name: 'New link' }).waitFor();
        await page.getByRole('option', { name: 'Web shop (localhost)' }).waitFor({ state: 'attached' });
        await page.getByLabel('Amount', { exact: true }).fill('12.50');
        await page.getByLabel('Reference (optional)').fill(`link-${tag}`);
        await page.getByRole('button', { name: 'Create link' }).click();
        await page.getByRole('img', { name: 'QR code of the payment link' }).waitFor();
        assert.ok((await imageLoaded(page, 'figure.qr img')) > 0, 'the payment link QR is a real image');
        const links = (await m.api.get(`${API}/payment-links`)).body.items as Array<{ paymentLink: { id: string; amount: number; state: string } }>;
        assert.equal(links.length, 1);
        assert.equal(links[0]!.paymentLink.amount, 1250);
        const linkId = links[0]!.paymentLink.id;
        await page.getByRole('button', { name: `Deactivate payment link ${linkId}`, exact: true }).click();
        await page.getByRole('button', { name: `Confirm: Deactivate payment link ${linkId}` }).click();
        await page.getByRole('status').filter({ hasText: 'Deactivated.' }).waitFor();
        assert.equal((await m.api.get(`${API}/payment-links/${linkId}`)).body.paymentLink.state, 'CANCELLED');

        await page.getByLabel('Kind').selectOption('multi');
        await page.getByLabel('Reference (optional)').fill('');
        await page.getByRole('button', { name: 'Create link' }).click();
        await page.getByRole('img', { name: 'QR code of the multi-link' }).waitFor();
        assert.ok((await imageLoaded(page, 'figure.qr img')) > 0, 'the multi-link QR (qrUrl) loads from the service');
        const multi = (await m.api.get(`${API}/multi-links`)).body.items as Array<{ multiLink: { id: string } }>;
        assert.equal(multi.length, 1);
        await page.getByRole('cell', { name: multi[0]!.multiLink.id, exact: true }).waitFor();

        // A webhook: create, pause, resume, its deliveries page.
        const hookUrl = `http://localhost:9/hooks/${tag}`;
        await page.getByRole('link', { name: 'Webhooks' }).click();
        await page.getByText('No webhooks yet.').waitFor();
        await page.getByLabel('Webhook URL').fill(hookUrl);
        await page.getByLabel('Secret (sent as the Authorization header)').fill(`whsec-${tag}`);
        await page.getByLabel('transaction.success.v1').check();
        await page.getByRole('button', { name: 'Create webhook' }).click();
        await page.getByRole('status').filter({ hasText: 'Webhook created.' }).waitFor();
        const webhookStatus = page.getByTestId('webhook-status');
        await webhookStatus.filter({ hasText: 'Active' }).waitFor();
        await page.getByRole('button', { name: `Pause webhook ${hookUrl}` }).click();
        await webhookStatus.filter({ hasText: 'Paused (PAUSED_BY_MERCHANT)' }).waitFor();
        const [hook] = (await m.api.get(`${API}/webhooks`)).body.items as Array<{ id: string; pausedAt: string | null; pauseReason: string | null }>;
        assert.ok(hook!.pausedAt, 'paused via the API too');
        assert.equal(hook!.pauseReason, 'PAUSED_BY_MERCHANT');
        await page.getByRole('button', { name: `Resume webhook ${hookUrl}` }).click();
        await webhookStatus.filter({ hasText: 'Active' }).waitFor();
        assert.equal((await m.api.get(`${API}/webhooks/${hook!.id}`)).body.webhook.pausedAt, null, 'resumed via the API too');
        await page.getByRole('link', { name: hookUrl }).click();
        await page.getByRole('heading', { name: 'Recent deliveries' }).waitFor();
        await page.getByText('No deliveries yet.').waitFor();
        assert.equal(await page.getByTestId('failure-rate').innerText(), 'no attempts');

        // Settlements: the transfer, the fees of its transactions, the CSV.
        await page.getByRole('link', { name: 'Settlements' }).click();
        await page.getByRole('link', { name: transferId }).click();
        await page.getByRole('heading', { name: `Settlement transfer ${transferId}` }).waitFor();
        const feeRow = page.locator('tbody tr', { hasText: settledId });
        await feeRow.waitFor();
        assert.match(await feeRow.innerText(), /-\d+\.\d\d/, 'a negative acquirer fee is shown');
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download fees as CSV' }).click()]);
        const csv = fs.readFileSync((await download.path())!, 'utf8');
        const lines = csv.trim().split('\r\n');
        assert.equal(
          lines[0],
          'settlementTransactionId,transactionId,type,amount,merchantReference,acquirerReference,postingDate,ACQUIRER_FEE,INTERCHANGE_FEE,SCHEME_FEE,settlementNetAmount,settlementCurrency,createdAt',
        );
        const settledLine = lines.find((l) => l.includes(settledId));
        assert.ok(settledLine, 'the settled capture is in the CSV');
        assert.match(settledLine, new RegExp(`,settled-${tag},`));

        // An API key, shown once, works as a credential.
        await page.getByRole('link', { name: 'API keys' }).click();
        await page.getByLabel('Key name').fill(`dashboard-${tag}`);
        await page.getByRole('button', { name: 'Create key' }).click();
        const secret = await page.getByLabel('Secret key (shown once)').inputValue();
        assert.equal((await rt.client(secret).get(`${API}/transactions?perPage=1`)).status, 200, 'the new key authenticates');
        await page.getByRole('button', { name: 'Done, hide it' }).click();
        assert.ok(!(await page.content()).includes(secret), 'hidden again');

        // Points of sale and a terminal.
        await page.getByRole('link', { name: 'Points of sale' }).click();
        await page.getByRole('link', { name: 'Shop', exact: true }).click();
        await page.getByRole('heading', { name: 'Point of sale Shop' }).waitFor();
        await page.getByRole('link', { name: m.terminalIds[0]! }).click();
        await page.getByRole('heading', { name: 'Terminal Till 1' }).waitFor();

        // The hostile reference is literal text, in the list and in the detail; nothing ran.
        await page.getByRole('link', { name: 'Payments', exact: true }).click();
        await page.locator('tbody tr').first().waitFor(); // the unfiltered first page, before searching
        await page.getByLabel('Search by reference or id').fill('<script>alert(1)');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        // The search result: only the hostile payment is left in the table.
        await page.locator('tbody tr').filter({ hasNotText: hostileId }).first().waitFor({ state: 'detached' });
        assert.equal(await page.locator('tbody tr').count(), 1);
        assert.equal(await page.locator('tbody tr', { hasText: hostileId }).locator('td.reference').innerText(), hostile);
        await page.getByText(hostile).first().waitFor({ state: 'visible' });
        await page.getByRole('link', { name: hostileId }).click();
        await page.getByRole('heading', { name: `Payment ${hostileId}` }).waitFor();
        assert.equal(await page.getByTestId('reference').innerText(), hostile);
        assert.equal(await page.locator('main script').count(), 0, 'no script element was made');
        assert.deepEqual(dialogs, [], 'alert(1) never ran');

        // Another merchant's payment: the not-found page, nothing of it shown.
        await page.goto(`${base}/dashboard/#/payments/${foreignId}`);
        await page.getByRole('heading', { name: 'Payment not found' }).waitFor();
        assert.ok(!(await page.content()).includes(`theirs-${tag}`));

        // Every state-changing API call carried the session's CSRF token.
        assert.ok(stateChanging.length > 0);
        for (const r of stateChanging) assert.ok(r.csrf, `${r.method} ${r.url} has X-CSRF-Token`);
        assert.deepEqual(problems, [], 'no script error or CSP violation');
      },
    );
  });
}
