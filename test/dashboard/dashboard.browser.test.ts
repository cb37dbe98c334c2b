/**
 * The dashboard in a real browser (issue 12), on both stores: the service listening on a real
 * port (the test runtime), headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
 * signing in like a merchant's support person:
 *   - sign in with the access token in the one password field;
 *   - find a payment by its reference, open it, see its timeline;
 *   - refund part of it (amount, confirmation, Idempotency-Key) and see the refund in the timeline;
 *   - another merchant's payment is a "Payment not found" page;
 *   - a reference containing <script> is shown as text and never runs;
 *   - the operator signs in with the operator key and retries a dead job;
 *   - no Content-Security-Policy violation on the way.
 * Skipped, saying so, when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { chromiumSkip, ensureDashboardBuilt, launchChromium, listenOnRealPort, recordProblems } from '../support/browser.js';
import { motoBody } from '../online/helpers.js';

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

for (const kind of await availableStores()) {
  describe(`dashboard in Chromium (${kind})`, () => {
    test(
      'sign in, find by reference, timeline, partial refund; foreign payment 404; <script> reference as text; operator retries a dead job',
      { skip: SKIP, timeout: 120_000 },
      async (t) => {
        const rt = await startTestRuntime(kind);
        t.after(() => rt.close());
        const m = await rt.createMerchant({ physical: false });
        const other = await rt.createMerchant({ physical: false });
        const tag = Math.random().toString(36).slice(2, 8);
        const reference = `order-${tag}`;
        const id = await payment(m, reference, 1000);
        const hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">${tag}`;
        const hostileId = await payment(m, hostile, 0);
        const foreignId = await payment(other, `theirs-${tag}`, 0);

        const base = await listenOnRealPort(rt);

        const browser = await launchChromium();
        t.after(() => browser.close());
        const context = await browser.newContext();
        const page = await context.newPage();
        const problems = recordProblems(page);

        // Sign in: one labelled password field.
        await page.goto(`${base}/dashboard`);
        const key = page.getByLabel('API key, access token or operator key');
        assert.equal(await key.getAttribute('type'), 'password');
        await key.fill(m.token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Payments' }).waitFor();
        // The key is nowhere the page's script could read it.
        const stored = String(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie'));
        assert.ok(!stored.includes(m.token), 'the key is not stored in the browser');
        const cookies = await context.cookies();
        const sessionCookie = cookies.find((c) => c.name === 'payments_dashboard');
        assert.ok(sessionCookie?.httpOnly, 'HttpOnly session cookie');
        assert.equal(sessionCookie?.sameSite, 'Strict');

        // Find the payment by reference and open it.
        await page.getByLabel('Search by reference or id').fill(reference);
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        const link = page.getByRole('link', { name: id });
        await link.waitFor();
        // The newest payment is in the unfiltered list too: wait for the search's answer to replace it.
        const rows = page.locator('tbody tr');
        for (let waited = 0; (await rows.count()) !== 1 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
        assert.equal(await rows.count(), 1, 'only the matching payment');
        await link.click();
        await page.getByRole('heading', { name: `Payment ${id}` }).waitFor();
        const timeline = page.locator('ol.timeline');
        await timeline.locator('li[data-kind="OPERATION_FINISHED"]', { hasText: 'CAPTURE of 10.00 DKK: SUCCESS' }).waitFor();

        // Refund 4.00 of it: amount, review, confirm.
        await page.getByLabel('Action', { exact: true }).selectOption('refund');
        await page.getByLabel('Amount (DKK)').fill('4.00');
        await page.getByRole('button', { name: 'Review' }).click();
        await page.getByText(`Confirm refund of 4.00 DKK on payment ${id}?`).waitFor();
        await page.getByRole('button', { name: 'Confirm refund' }).click();
        await page.getByText('Refund of 4.00 DKK done.').waitFor();
        await timeline.locator('li[data-kind="OPERATION_FINISHED"]', { hasText: 'REFUND of 4.00 DKK: SUCCESS' }).waitFor();
        await timeline.locator('li[data-kind="EVENT"]', { hasText: 'transaction.refunded.v1' }).waitFor();
        assert.match(await page.getByTestId('aggregates').innerText(), /10\.00 DKK \/ 4\.00 DKK \/ 0\.00 DKK/);
        const detail = await m.api.get(`${API}/transactions/${id}`);
        assert.equal(detail.body.aggregates.refunded, 400, 'the refund happened, once');

        // Another merchant's payment: a not-found page, nothing of it shown.
        await page.goto(`${base}/dashboard/#/payments/${foreignId}`);
        await page.getByRole('heading', { name: 'Payment not found' }).waitFor();
        assert.ok(!(await page.content()).includes(`theirs-${tag}`));

        // The hostile reference is text, in the detail and in the list.
        await page.goto(`${base}/dashboard/#/payments/${hostileId}`);
        await page.getByRole('heading', { name: `Payment ${hostileId}` }).waitFor();
        assert.equal(await page.getByTestId('reference').innerText(), hostile);
        await page.goto(`${base}/dashboard/#/payments`);
        await page.getByLabel('Search by reference or id').fill('<script>');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await page.getByRole('link', { name: hostileId }).waitFor();
        assert.equal(await page.locator('td.reference').first().innerText(), hostile);
        assert.equal(await page.evaluate('typeof window.__pwned'), 'undefined', 'the reference never ran');
        assert.equal(await page.locator('td.reference script, td.reference img, dd.reference img').count(), 0);

        // Sign out ends the session.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        const after = await page.evaluate(async (url) => (await fetch(url)).status, `${base}${API}/transactions`);
        assert.equal(after, 401);

        // The operator retries a dead job.
        const { jobs } = rt.runtime.store;
        await jobs.enqueueMany([{ kind: 'dash.browser', payload: {}, maxAttempts: 1 }]);
        const [job] = await jobs.claim('w', { now: rt.runtime.clock.now(), wallNow: rt.runtime.clock.now() }, 60_000, 1, ['dash.browser']);
        await jobs.fail(job!.id, 'w', rt.runtime.clock.now(), 'gave up', null);
        page.on('dialog', (dialog) => void dialog.accept());
        await page.getByLabel('API key, access token or operator key').fill(rt.operatorKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('link', { name: 'Jobs' }).click();
        await page.getByRole('heading', { name: 'Dead jobs' }).waitFor();
        await page.getByRole('button', { name: `Retry job ${job!.id}` }).click();
        await page.getByText(`Job ${job!.id} queued again.`).waitFor();
        assert.ok(!(await jobs.listDead(200)).some((d) => d.id === job!.id), 'no longer dead');

        assert.deepEqual(problems, [], 'no script error or CSP violation');
      },
    );
  });
}
