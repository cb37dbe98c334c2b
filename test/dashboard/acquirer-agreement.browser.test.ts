/**
 * The operator's acquirer agreement view of the dashboard (INTERFACE §12.1) in a real browser, on
 * both stores, signed in with the operator key: an account without an agreement says so; the form
 * (acquirer, API key in a password input, MCC, text on statement) sets a clearhaus agreement through
 * the partner API, shows it without the key, and says a refusal (422) in words; the agreement is
 * removed after a confirmation, and a sandbox one set with the default MCC. The key is never in the
 * page. Skipped, saying so, when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { chromiumSkip, ensureDashboardBuilt, launchChromium, listenOnRealPort, recordProblems, signIn } from '../support/browser.js';
import { agreementUrl, createAccount, newApiKey } from '../acquirers/support.js';

const SKIP = chromiumSkip('acquirer agreement dashboard browser test');
if (!SKIP) ensureDashboardBuilt();

for (const kind of await availableStores()) {
  describe(`operator dashboard: acquirer agreement in Chromium (${kind})`, () => {
    test('shown without the key, set (clearhaus, a refusal, sandbox) and removed through the partner API', { skip: SKIP, timeout: 120_000 }, async (t) => {
      const rt = await startTestRuntime(kind, {}, { startWorkers: false, clearhausAvailable: true });
      t.after(() => rt.close());
      const accountId = await createAccount(rt);
      const name = (await rt.operator.get(`/public/api/v1/partner/accounts/${accountId}`)).body.account.name as string;
      const stored = async () => rt.operator.get(agreementUrl(accountId));

      const base = await listenOnRealPort(rt);
      const browser = await launchChromium();
      t.after(() => browser.close());
      const page = await (await browser.newContext()).newPage();
      const problems = recordProblems(page);

      await signIn(page, base, rt.operatorKey, 'Accounts');
      await page.getByRole('button', { name: `Acquirer agreement of ${name}` }).click();
      const panel = page.getByTestId('acquirer-agreement');
      await panel.getByRole('heading', { name: `Acquirer agreement of ${name}` }).waitFor();
      await panel.getByTestId('no-acquirer-agreement').waitFor();

      // clearhaus: the key goes in a password input.
      const key = newApiKey();
      await panel.getByLabel('Acquirer', { exact: true }).selectOption('clearhaus');
      const keyInput = panel.getByLabel('API key', { exact: true });
      assert.equal(await keyInput.getAttribute('type'), 'password');
      await keyInput.fill(key);
      await panel.getByLabel('MCC', { exact: true }).fill('5411');
      await panel.getByLabel('Text on statement', { exact: true }).fill('Corner Shop 42');
      await panel.getByRole('button', { name: 'Save agreement' }).click();
      await panel.getByText(`Acquirer agreement of ${name} saved: clearhaus, MCC 5411.`).waitFor();
      const facts = panel.getByTestId('acquirer-agreement-facts');
      await facts.getByText('set (never shown)').waitFor();
      assert.match(await facts.innerText(), /clearhaus[\s\S]*5411[\s\S]*Corner Shop 42/);
      const afterSave = await stored();
      assert.equal(afterSave.status, 200, afterSave.text);
      assert.deepEqual(
        {
          acquirer: afterSave.body.acquirerAgreement.acquirer,
          mcc: afterSave.body.acquirerAgreement.mcc,
          text: afterSave.body.acquirerAgreement.textOnStatement,
        },
        { acquirer: 'clearhaus', mcc: '5411', text: 'Corner Shop 42' },
      );
      assert.equal(
        rt.runtime.sealer.open((await rt.runtime.store.acquirerAgreements.current(accountId))!.apiKeySealed!),
        key,
        'the key typed is the key sealed',
      );
      assert.equal(await panel.getByLabel('API key', { exact: true }).inputValue(), '', 'the key leaves the form once saved');
      assert.ok(!(await page.content()).includes(key), 'the key is not in the page');

      // A refusal is said in words, and nothing changes.
      await panel.getByLabel('API key', { exact: true }).fill(newApiKey());
      await panel.getByLabel('MCC', { exact: true }).fill('54x1');
      await panel.getByRole('button', { name: 'Save agreement' }).click();
      await panel.locator('form [role="alert"]', { hasText: 'mcc: [regex]: must be 4 digits, e.g. 5999' }).waitFor();
      assert.equal((await stored()).body.acquirerAgreement.mcc, '5411');

      // Removed after a confirmation.
      await panel.getByRole('button', { name: `Remove the acquirer agreement of ${name}` }).click();
      await panel.getByRole('button', { name: `Confirm: Remove the acquirer agreement of ${name}` }).click();
      await panel.getByText(`Acquirer agreement of ${name} removed.`).waitFor();
      await panel.getByTestId('no-acquirer-agreement').waitFor();
      assert.equal((await stored()).status, 404);

      // sandbox with the default MCC: no key asked for.
      await panel.getByLabel('Acquirer', { exact: true }).selectOption('sandbox');
      assert.equal(await panel.getByLabel('API key', { exact: true }).count(), 0, 'no key input for the sandbox');
      await panel.getByLabel('MCC', { exact: true }).fill('');
      await panel.getByLabel('Text on statement', { exact: true }).fill('');
      await panel.getByRole('button', { name: 'Save agreement' }).click();
      await panel.getByText(`Acquirer agreement of ${name} saved: sandbox, MCC 5999.`).waitFor();
      await facts.getByText('none', { exact: true }).waitFor();
      assert.equal((await stored()).body.acquirerAgreement.acquirer, 'sandbox');

      await panel.getByRole('button', { name: 'Close' }).click();
      assert.equal(await page.getByTestId('acquirer-agreement').count(), 0);
      assert.ok(!(await page.content()).includes(key), 'the key is not in the page');
      assert.deepEqual(problems, [], 'no script error or CSP violation');
    });
  });
}
