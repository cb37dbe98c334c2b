/**
 * The operator's views of the dashboard in a real browser (issue 12), on both stores: the service
 * listening on a real port, headless Chromium (/usr/bin/chromium through playwright-core) signed in
 * with the operator key:
 *   - accounts: create one through the form, activate it, grant MOTO, delete it — each checked
 *     through the partner API;
 *   - jobs: a dead job (seeded through the job store) is listed and retried;
 *   - sandbox: the service clock is shown and moved forward a day; a settlement run settles the
 *     captured payment and lists its transfer;
 *   - no script error or CSP violation on the way.
 * Skipped, saying so, when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { chromiumSkip, ensureDashboardBuilt, launchChromium, listenOnRealPort, recordProblems, signIn } from '../support/browser.js';
import { motoBody } from '../online/helpers.js';

const SKIP = chromiumSkip('operator dashboard browser test');
if (!SKIP) ensureDashboardBuilt();

for (const kind of await availableStores()) {
  describe(`operator dashboard in Chromium (${kind})`, () => {
    test('accounts (create, activate, capabilities, delete), dead job retry, sandbox clock and settlement run', { skip: SKIP, timeout: 120_000 }, async (t) => {
      const rt = await startTestRuntime(kind, {}, { startWorkers: false });
      t.after(() => rt.close());
      // A captured payment for the settlement run to settle.
      const m = await rt.createMerchant({ physical: false });
      const paid = await m.api.post(`${API}/moto`, motoBody(m, { amount: 2500 }));
      assert.equal(paid.status, 200, paid.text);
      const captured = await m.api.post(`${API}/transactions/${paid.body.transaction.id}/capture`, { amount: 2500 });
      assert.equal(captured.body.success, true, captured.text);
      // A dead job: claimed once and failed with no attempts left.
      const { jobs } = rt.runtime.store;
      await jobs.enqueueMany([{ kind: 'dash.operator', payload: {}, maxAttempts: 1 }]);
      const [job] = await jobs.claim('w', { now: rt.runtime.clock.now(), wallNow: rt.runtime.clock.now() }, 60_000, 1, ['dash.operator']);
      await jobs.fail(job!.id, 'w', rt.runtime.clock.now(), 'receiver said 500', null);

      const base = await listenOnRealPort(rt);
      const browser = await launchChromium();
      t.after(() => browser.close());
      const page = await (await browser.newContext()).newPage();
      const problems = recordProblems(page);
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });

      await signIn(page, base, rt.operatorKey, 'Accounts');
      await page.locator(`tr[data-account="${m.accountId}"]`).waitFor();

      // Create an account through the form.
      const name = `Shop ${Math.random().toString(36).slice(2, 8)}`;
      await page.getByText('New account').click();
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email', { exact: true }).fill('owner@shop.example');
      await page.getByLabel('Currency', { exact: true }).fill('zzz');
      await page.getByLabel('Time zone', { exact: true }).fill('Europe/Berlin');
      await page.getByLabel('Domain', { exact: true }).fill('shop.example');
      // A refusal of the API is said in the form, and nothing is created.
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.locator('details.create [role="alert"]', { hasText: 'currencyCode' }).waitFor();
      const accountsNow = async () =>
        (await rt.operator.get(`${API}/partner/accounts?perPage=100`)).body.items.map((i: { account: { id: string; name: string } }) => i.account);
      assert.ok(!(await accountsNow()).some((a: { name: string }) => a.name === name), 'nothing created');
      await page.getByLabel('Currency', { exact: true }).fill('eur');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByText(`Account ${name} created (PENDING).`).waitFor();
      const created = (await accountsNow()).find((a: { name: string }) => a.name === name);
      assert.ok(created, 'created through the partner API');
      assert.equal(created.currencyCode, 'EUR');
      const account = async () => (await rt.operator.get(`${API}/partner/accounts/${created.id}`)).body.account;
      const row = page.locator(`tr[data-account="${created.id}"]`);
      assert.match(await row.innerText(), /PENDING/);

      // Activate, grant MOTO, delete (after a confirmation).
      await page.getByRole('button', { name: `Activate ${name}` }).click();
      await page.getByText(`${name} activated.`).waitFor();
      assert.equal((await account()).status, 'ACTIVE');
      assert.equal(await page.getByRole('button', { name: `Activate ${name}` }).count(), 0, 'no activate button once active');
      const moto = page.getByLabel(`MOTO for ${name}`);
      assert.equal(await moto.isChecked(), false);
      await moto.check();
      await page.getByText(`MOTO granted to ${name}.`).waitFor();
      assert.deepEqual((await account()).capabilities, { moto: true, syncPayout: false });
      assert.equal(await page.getByLabel(`MOTO for ${name}`).isChecked(), true, 'the list shows the stored capability');
      await page.getByRole('button', { name: `Delete ${name}` }).click();
      await page.getByText(`${name} deleted.`).waitFor();
      assert.match(dialogs.at(-1) ?? '', new RegExp(`Delete the account ${name}\\?`));
      assert.equal((await account()).status, 'CLOSED');
      assert.match(await row.innerText(), /CLOSED/);
      assert.equal(await page.getByLabel(`MOTO for ${name}`).isDisabled(), true, 'a deleted account cannot be changed');

      // Jobs: the dead job, retried.
      await page.getByRole('link', { name: 'Jobs' }).click();
      await page.getByRole('heading', { name: 'Dead jobs' }).waitFor();
      assert.match(await page.locator('tr', { hasText: 'receiver said 500' }).innerText(), /dash\.operator/);
      await page.getByRole('button', { name: `Retry job ${job!.id}` }).click();
      await page.getByText(`Job ${job!.id} queued again.`).waitFor();
      await page.getByText('No dead jobs.').waitFor();
      assert.ok(!(await jobs.listDead(200)).some((d) => d.id === job!.id), 'no longer dead');

      // Sandbox: the clock, moved forward one day.
      await page.getByRole('link', { name: 'Sandbox' }).click();
      const shown = page.getByTestId('service-time');
      await shown.waitFor();
      const before = Date.parse((await rt.operator.get('/sandbox/v1/clock')).body.now);
      assert.ok(Math.abs(Date.parse((await shown.innerText()).replace(' ', 'T')) - before) < 5_000, 'the page shows the service time');
      await page.getByLabel('Move forward by').selectOption({ label: '1 day' });
      await page.getByRole('button', { name: 'Move clock' }).click();
      await page.getByText(/^Clock moved to /).waitFor();
      const after = Date.parse((await rt.operator.get('/sandbox/v1/clock')).body.now);
      assert.ok(after - before >= 86_400_000 && after - before < 86_400_000 + 30_000, `moved one day: ${after - before} ms`);
      // Sessions live in real time: the day the sandbox clock jumped did not sign the operator out.
      await page.getByRole('button', { name: 'Refresh' }).click();
      await shown.waitFor();
      assert.ok(Math.abs(Date.parse((await shown.innerText()).replace(' ', 'T')) - after) < 5_000, 'the page shows the new time');

      // Settlement run: the captured payment becomes one transfer, listed on the page.
      await page.getByRole('button', { name: 'Run settlement' }).click();
      await page.getByText('Settlement run done: 1 transfer.').waitFor();
      // The merchant's first access token has expired with the day the clock moved (8 h of service time): a fresh one.
      const { accessToken } = (await rt.operator.post(`${API}/partner/accounts/${m.accountId}/access-token`, { environment: 'test' })).body;
      const transferPage = await rt.client(accessToken).get(`${API}/settlements/transfers`);
      assert.equal(transferPage.status, 200, transferPage.text);
      const transfers = transferPage.body.items;
      assert.equal(transfers.length, 1);
      const transfer = transfers[0].settlementTransfer;
      await page.getByRole('cell', { name: transfer.id }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Run settlement' }).isEnabled(), true, 'the run can be started again');
      await page.getByRole('button', { name: 'Run settlement' }).click();
      await page.getByText('Settlement run done: nothing was waiting to be settled.').waitFor();

      assert.deepEqual(problems, [], 'no script error or CSP violation');
    });
  });
}
