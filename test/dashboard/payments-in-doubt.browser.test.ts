/**
 * The operator's payments in doubt in the dashboard (issue 44, INTERFACE §12.4) in a real browser,
 * on both stores: a scripted acquirer that, like Clearhaus, takes no capture twice times out on two
 * captures, which stay PROCESSING and are listed with their account, transaction, amount (major
 * units) and reason. One is marked succeeded by keyboard after its confirmation (which names the
 * amount and the consequence; Escape cancels it and gives the focus back), the other marked failed:
 * each row leaves the list with a line saying the final state, and the captured and held amounts are
 * checked through the API. An empty list says so; a merchant sign-in has no such entry. Skipped,
 * saying so, when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Locator } from 'playwright-core';
import { API, startTestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { chromiumSkip, ensureDashboardBuilt, launchChromium, listenOnRealPort, recordProblems, signIn } from '../support/browser.js';
import { capture, detail, eventually, refusedWith, seedAuthorized, stored } from '../lifecycle/fixtures.js';

const SKIP = chromiumSkip('payments in doubt dashboard browser test');
if (!SKIP) ensureDashboardBuilt();

const IN_DOUBT = `${API}/partner/payments-in-doubt`;
/** Whether the element has the page's focus (tests are compiled without the DOM types). */
const focused = (locator: Locator) => locator.evaluate((el: any) => el === el.ownerDocument.activeElement);
/** Waits for the focus to reach the element (the view moves it in an effect, after its render). */
const focusOn = (locator: Locator, what: string) => eventually(async () => ((await focused(locator)) ? true : null), what);

for (const kind of await availableStores()) {
  describe(`operator dashboard: payments in doubt in Chromium (${kind})`, () => {
    test('listed with what was sent, resolved as succeeded and as failed after a confirmation', { skip: SKIP, timeout: 120_000 }, async (t) => {
      const acquirer = new ScriptedAcquirer();
      acquirer.repeatable = new Set(['void']);
      const rt = await startTestRuntime(kind, {}, { acquirer });
      t.after(() => rt.close());
      const m = await rt.createMerchant();
      const name = (await rt.operator.get(`${API}/partner/accounts/${m.accountId}`)).body.account.name as string;

      const base = await listenOnRealPort(rt);
      const browser = await launchChromium();
      t.after(() => browser.close());
      const page = await (await browser.newContext()).newPage();
      const problems = recordProblems(page);

      // Nothing in doubt yet: the view says so.
      await signIn(page, base, rt.operatorKey, 'Accounts');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments in doubt' }).click();
      await page.getByRole('heading', { name: 'Payments in doubt' }).waitFor();
      assert.match(await page.getByTestId('in-doubt-explanation').innerText(), /Check with the acquirer first/);
      await page.getByTestId('in-doubt-empty').waitFor();

      // Two captures time out at an acquirer that takes no capture twice: in doubt, PROCESSING, amounts held.
      const inDoubt = async (amount: number) => {
        const tx = await seedAuthorized(rt, m, { amount: 1000 });
        acquirer.script(tx.id, 'capture', ['timeout', 'approve']);
        const body = refusedWith(await capture(m, tx.id, amount), 'ACQUIRER_TIMEOUT');
        await eventually(async () => {
          const list = await rt.operator.get(`${IN_DOUBT}?accountId=${m.accountId}`);
          return list.body.items.some((i: { operationId: string }) => i.operationId === body.operationId) ? true : null;
        }, 'the capture listed in doubt');
        return { tx, operationId: body.operationId as string };
      };
      const first = await inDoubt(300);
      const second = await inDoubt(1000);
      assert.equal((await stored(rt, first.tx.id)).pending, 300, 'the amount stays held');

      await page.getByRole('button', { name: 'Refresh' }).click();
      const row = page.locator(`tr[data-operation="${first.operationId}"]`);
      await row.waitFor();
      const cells = await row.locator('td').allInnerTexts();
      assert.match(cells[0]!, new RegExp(`${name}[\\s\\S]*${m.accountId}`), 'the account by name and id');
      assert.deepEqual(cells.slice(1, 5), [first.tx.id, 'capture', '3.00 DKK', 'scripted']);
      assert.match(cells[5]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/, 'sent at');
      assert.match(cells[6]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/, 'in doubt since');
      assert.ok(cells[7]!.trim().length > 0, 'a reason');
      assert.match(await page.locator(`tr[data-operation="${second.operationId}"]`).innerText(), /10\.00 DKK/);
      const order = await page.locator('tr[data-operation]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-operation')));
      assert.deepEqual(order, [first.operationId, second.operationId], 'oldest first');

      // The confirmation names the amount and the consequence; Escape cancels it and gives the focus back.
      const markSucceeded = page.getByRole('button', { name: `Mark the capture of 3.00 DKK on transaction ${first.tx.id} succeeded` });
      await markSucceeded.click();
      const question = page.getByRole('group', { name: `Mark the capture of 3.00 DKK on transaction ${first.tx.id} as succeeded?`, exact: false });
      assert.equal(await markSucceeded.getAttribute('aria-expanded'), 'true');
      assert.match(await question.innerText(), /capture of 3\.00 DKK[\s\S]*as succeeded\? 3\.00 DKK counts as captured[\s\S]*cannot be undone/);
      const confirmSucceeded = question.getByRole('button', { name: 'Confirm: mark succeeded' });
      await focusOn(confirmSucceeded, 'the focus on the confirm button');
      await page.keyboard.press('Escape');
      await question.waitFor({ state: 'detached' });
      assert.equal(await markSucceeded.getAttribute('aria-expanded'), 'false');
      await focusOn(markSucceeded, 'the focus back on the button that opened the confirmation');
      assert.equal((await stored(rt, first.tx.id)).pending, 300, 'nothing resolved by a cancel');

      // Marked succeeded by keyboard: the row leaves, the final state is said, the capture counts.
      await page.keyboard.press('Enter');
      await focusOn(confirmSucceeded, 'the focus on the confirm button');
      await page.keyboard.press('Enter');
      const outcome = page.getByTestId('in-doubt-outcome');
      await outcome.getByText(`Capture of 3.00 DKK on transaction ${first.tx.id} marked succeeded: the capture is SUCCESS, the transaction SUCCESS.`).waitFor();
      await focusOn(outcome, 'the focus on the outcome line');
      await row.waitFor({ state: 'detached' });
      const resolved = await detail(m, first.tx.id);
      assert.equal(resolved.aggregates.captured, 300);
      assert.equal(resolved.operations.find((o) => o.id === first.operationId)?.state, 'SUCCESS');
      assert.equal((await stored(rt, first.tx.id)).pending, 0);
      assert.equal(acquirer.callsOf(first.tx.id, 'capture').length, 1, 'never sent again');
      assert.equal((await rt.operator.post(`${IN_DOUBT}/${first.operationId}/resolve`, { outcome: 'FAILED' })).status, 404, 'no longer in doubt');

      // Marked failed: the held amount is released, nothing is captured, and the list is empty.
      await page.getByRole('button', { name: `Mark the capture of 10.00 DKK on transaction ${second.tx.id} failed` }).click();
      const secondQuestion = page.locator(`tr[data-confirm="${second.operationId}"]`).getByRole('group');
      assert.match(await secondQuestion.innerText(), /as failed\? .*ACQUIRER_TIMEOUT.*the 10\.00 DKK held is released/);
      await secondQuestion.getByRole('button', { name: 'Confirm: mark failed' }).click();
      await outcome.getByText(`Capture of 10.00 DKK on transaction ${second.tx.id} marked failed: the capture is FAILED, the transaction SUCCESS.`).waitFor();
      await page.getByTestId('in-doubt-empty').waitFor();
      assert.equal((await detail(m, second.tx.id)).aggregates.captured, 0);
      assert.equal((await stored(rt, second.tx.id)).pending, 0);
      assert.deepEqual((await rt.operator.get(`${IN_DOUBT}?accountId=${m.accountId}`)).body.items, []);
      assert.deepEqual(problems, [], 'no script error or CSP violation');

      // A merchant sign-in has no such entry (and the API answers 403 to its key).
      const merchantPage = await (await browser.newContext()).newPage();
      await signIn(merchantPage, base, m.token, 'Payments');
      assert.equal(await merchantPage.getByRole('link', { name: 'Payments in doubt' }).count(), 0);
      await merchantPage.goto(`${base}/dashboard/#/payments-in-doubt`);
      await merchantPage.getByRole('heading', { name: 'Payments' }).waitFor();
      assert.equal(await merchantPage.getByRole('heading', { name: 'Payments in doubt' }).count(), 0);
      assert.equal((await m.api.get(IN_DOUBT)).status, 403);
    });
  });
}
