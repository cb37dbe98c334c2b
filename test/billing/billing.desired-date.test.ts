/**
 * INTERFACE §11.7: a billing agreement's desiredDate is the day of the month (1–31) monthly
 * charges aim for, set from the first nextChargeAt of a MONTH plan, null for other periods, kept
 * across short months and by resume. The sandbox clock walks through a year, charge by charge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import {
  startBillingSuite,
  chargesOf,
  createAgreement,
  createPlan,
  DAILY,
  getAgreement,
  MONTHLY,
  moveClockTo,
  now,
  ok,
  subscribe,
  waitForCharge,
} from './support.js';

const HOUR = 3_600_000;
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const at = (date: string) => `${date}T00:00:00.000Z`;

/** Day 31 through a year: the last day of every shorter month, the 31st again after it. */
function monthEnds(year: number): string[] {
  return [
    ...['01-31', isLeap(year) ? '02-29' : '02-28', '03-31', '04-30', '05-31', '06-30', '07-31', '08-31', '09-30', '10-31', '11-30', '12-31'].map((d) =>
      at(`${year}-${d}`),
    ),
    at(`${year + 1}-01-31`),
  ];
}

for (const kind of await availableStores()) {
  // Its own runtime: the clock walks a year and more, and every ACTIVE agreement catches up on it.
  describe(`billing agreement desiredDate (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => ({ t, m } = await startBillingSuite(kind)));
    after(() => t.close());

    test('set from the first nextChargeAt on a MONTH plan; null on DAY, WEEK and YEAR plans', async () => {
      const year = new Date(await now(t)).getUTCFullYear() + 1;
      const sub = await subscribe(t, m);
      const monthly = await createPlan(m.api, { interval: MONTHLY });
      assert.equal((await createAgreement(m.api, sub.subscriptionId, monthly.id, { nextChargeAt: `${year}-03-17T09:30:00.000Z` })).desiredDate, 17);
      assert.equal((await createAgreement(m.api, sub.subscriptionId, monthly.id, { nextChargeAt: `${year}-02-28` })).desiredDate, 28);
      // Without nextChargeAt: today + one month, and its day.
      const defaulted = await createAgreement(m.api, sub.subscriptionId, monthly.id);
      assert.equal(defaulted.desiredDate, new Date(defaulted.nextChargeAt).getUTCDate());
      assert.ok(Number.isInteger(defaulted.desiredDate));
      for (const interval of [DAILY, { period: 'WEEK', frequency: 2 }, { period: 'YEAR', frequency: 1 }]) {
        const plan = await createPlan(m.api, { interval });
        const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { nextChargeAt: `${year}-01-31` });
        assert.equal(agreement.desiredDate, null, interval.period);
        const listed = ok(await m.api.get(`${API}/subscriptions/billing/agreements?perPage=500`), 'list').items.find(
          (i: any) => i.billingAgreement.id === agreement.id,
        );
        assert.equal(listed.billingAgreement.desiredDate, null);
      }
      // Stop them all: the year walk below must not charge these.
      const all = ok(await m.api.get(`${API}/subscriptions/billing/agreements?perPage=500`), 'list').items;
      for (const { billingAgreement: a } of all) ok(await m.api.post(`${API}/subscriptions/billing/agreements/${a.id}/stop`), 'stop');
    });

    test('day 31 over a year, the clock moved charge by charge: every charge on its month end, desiredDate kept', async () => {
      const plan = await createPlan(m.api, { interval: MONTHLY, amount: 9900 });
      const sub = await subscribe(t, m);
      const year = new Date(await now(t)).getUTCFullYear() + 1;
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { nextChargeAt: `${year}-01-31` });
      assert.equal(agreement.desiredDate, 31);
      assert.equal(agreement.nextChargeAt, at(`${year}-01-31`));
      const dates = monthEnds(year);
      for (let i = 0; i < 12; i++) {
        // Just before the date: nothing new; just after it: the period's charge, nextChargeAt on the next month end.
        await moveClockTo(t, Date.parse(dates[i]!) - HOUR);
        assert.equal((await chargesOf(m.api, agreement.id)).length, i, `no charge before ${dates[i]}`);
        await moveClockTo(t, Date.parse(dates[i]!) + HOUR);
        const charges = await waitForCharge(m.api, agreement.id, (c) => c.length === i + 1 && c[0].state === 'SUCCESS', `charge of ${dates[i]}`);
        const charge = charges[0];
        assert.equal(charge.periodStart, dates[i], `charge ${i + 1} on ${dates[i]}`);
        assert.equal(charge.deadlineAt, dates[i + 1], `charge ${i + 1} runs until the next month end`);
        const current = await getAgreement(m.api, agreement.id);
        assert.equal(current.nextChargeAt, dates[i + 1]);
        assert.equal(current.desiredDate, 31, 'kept across short months');
      }
      const all = await chargesOf(m.api, agreement.id);
      assert.deepEqual(
        all.map((c) => c.periodStart).sort(),
        dates.slice(0, 12),
        'exactly one charge per month, on the 31st or the last day of a shorter month',
      );
      ok(await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/stop`), 'stop');
    });

    test('resume keeps desiredDate: resumed on the 10th, the charges after it are on the month ends again', async () => {
      const plan = await createPlan(m.api, { interval: MONTHLY });
      const sub = await subscribe(t, m);
      const year = new Date(await now(t)).getUTCFullYear() + 1;
      const agreement = await createAgreement(m.api, sub.subscriptionId, plan.id, { nextChargeAt: `${year}-01-31` });
      assert.equal(agreement.desiredDate, 31);
      const stopped = ok(await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/stop`), 'stop').billingAgreement;
      assert.equal(stopped.desiredDate, 31, 'stop keeps it too');
      const resumed = ok(
        await m.api.post(`${API}/subscriptions/billing/agreements/${agreement.id}/resume`, { nextChargeAt: `${year}-04-10` }),
        'resume',
      ).billingAgreement;
      assert.equal(resumed.state, 'ACTIVE');
      assert.equal(resumed.nextChargeAt, at(`${year}-04-10`));
      assert.equal(resumed.desiredDate, 31, 'resume keeps desiredDate');
      // One month after April 10, aiming for day 31: May 31; then June 30, July 31.
      const expected = [at(`${year}-04-10`), at(`${year}-05-31`), at(`${year}-06-30`), at(`${year}-07-31`)];
      for (let i = 0; i < 3; i++) {
        await moveClockTo(t, Date.parse(expected[i]!) + HOUR);
        const [charge] = await waitForCharge(m.api, agreement.id, (c) => c.length === i + 1, `charge on ${expected[i]}`);
        assert.equal(charge.periodStart, expected[i]);
        assert.equal(charge.deadlineAt, expected[i + 1]);
        const current = await getAgreement(m.api, agreement.id);
        assert.equal(current.nextChargeAt, expected[i + 1]);
        assert.equal(current.desiredDate, 31);
      }
    });
  });
}
