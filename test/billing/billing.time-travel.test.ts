import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { startBillingSuite, chargesOf, createAgreement, createPlan, getAgreement, MONTHLY, moveClockTo, now, subscribe, waitForCharge } from './support.js';

// Its own runtime: every ACTIVE agreement catches up on a year, so other suites' daily agreements
// would add 365 charges each.
for (const kind of await availableStores()) {
  describe(`billing time travel (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => ({ t, m } = await startBillingSuite(kind)));
    after(() => t.close());

    test('a year of sandbox time on a monthly agreement makes exactly 12 charges, one per month in order, month ends kept', async () => {
      const plan = await createPlan(m.api, { interval: MONTHLY, amount: 9900 });
      const sub = await subscribe(t, m);
      const year = new Date(await now(t)).getUTCFullYear() + 1;
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { nextChargeAt: `${year}-01-31` });
      assert.equal(agreement.desiredDate, 31);
      await moveClockTo(t, Date.parse(`${year}-01-30T12:00:00.000Z`));
      assert.deepEqual(await chargesOf(m.api, agreement.id), []);
      await moveClockTo(t, Date.parse(`${year + 1}-01-30T12:00:00.000Z`));
      const charges = await waitForCharge(m.api, agreement.id, (c) => c.length >= 12 && c.every((x) => x.state === 'SUCCESS'), '12 charges', 60_000);
      await new Promise((r) => setTimeout(r, 500));
      const final = await chargesOf(m.api, agreement.id);
      assert.equal(final.length, 12, 'exactly one charge per missed period');
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      const expected = ['01-31', leap ? '02-29' : '02-28', '03-31', '04-30', '05-31', '06-30', '07-31', '08-31', '09-30', '10-31', '11-30', '12-31'].map(
        (d) => `${year}-${d}T00:00:00.000Z`,
      );
      const byPeriod = [...charges].sort((a, b) => a.periodStart.localeCompare(b.periodStart));
      assert.deepEqual(
        byPeriod.map((c) => c.periodStart),
        expected,
        'one charge per month, month ends kept',
      );
      for (const [i, c] of byPeriod.entries()) {
        assert.equal(c.deadlineAt, expected[i + 1] ?? `${year + 1}-01-31T00:00:00.000Z`);
        if (i > 0) assert.ok(c.createdAt >= byPeriod[i - 1].createdAt, 'each period is charged after the one before it');
      }
      const after = await getAgreement(m.api, agreement.id);
      assert.equal(after.nextChargeAt, `${year + 1}-01-31T00:00:00.000Z`);
      assert.ok(after.lastChargeAt);
    });
  });
}
