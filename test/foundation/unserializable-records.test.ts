/**
 * Reads never die of one row (issue 9, point 3): a row that slipped below the constraints (written
 * here with SQLite's CHECK constraints switched off) fails only itself — logged with its id, a 500
 * for that record, and left out of lists that keep answering with the other records.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openSqlite } from '../../src/storage/sqlite/driver.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';

const CARD = { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' };

describe('one unserializable row (sqlite)', () => {
  let t: TestRuntime;
  let m: TestMerchant;
  const log: string[] = [];
  before(async () => {
    t = await startTestRuntime('sqlite', { logLevel: 'info' }, { startWorkers: false, logDestination: { write: (line) => void log.push(line) } });
    m = await t.createMerchant();
  });
  after(() => t.close());

  /** Writes below the constraints, as a bug or a manual edit might have. */
  const corrupt = (statement: string, ...params: unknown[]) => {
    const raw = openSqlite(t.database.config.kind === 'sqlite' ? t.database.config.path : '');
    try {
      raw.pragma('ignore_check_constraints = ON');
      assert.equal(raw.prepare(statement).run(...params).changes, 1);
    } finally {
      raw.close();
    }
  };

  test('a transaction with a non-finite amount is a 500 of its own; the lists answer with the others', async () => {
    const ids: string[] = [];
    for (const amount of [100, 200, 300]) {
      const res = await m.api.post(`${API}/moto`, { transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount, currency: 'DKK' }, card: CARD });
      assert.equal(res.status, 200, res.text);
      ids.push(res.body.transaction.id);
    }
    const bad = ids[1]!;
    corrupt('update transactions set amount = 9e999 where id = ?', bad);

    const single = await m.api.get(`${API}/transactions/${bad}`);
    assert.equal(single.status, 500);
    assert.equal(single.body.errorCode, 'SERVER_ERROR');
    assert.ok(
      log.some((line) => line.includes(bad) && line.includes('"level":50')),
      'the failing record is logged with its id',
    );

    const list = await m.api.get(`${API}/transactions`);
    assert.equal(list.status, 200, list.text);
    const listed = list.body.items.map((item: { transaction: { id: string } }) => item.transaction.id).sort();
    assert.deepEqual(listed, [ids[0], ids[2]].sort(), 'the other records are listed');
    assert.ok(log.some((line) => line.includes('records left out of a list') && line.includes(bad)));
    assert.equal((await m.api.get(`${API}/transactions/${ids[0]}`)).status, 200, 'the other records still read');
  });

  test('a billing plan with a text amount leaves the plan list working', async () => {
    const plans: string[] = [];
    for (const name of ['Basic', 'Plus']) {
      const res = await m.api.post(`${API}/subscriptions/billing/plans`, {
        name,
        amount: 1000,
        currency: 'DKK',
        maxAttempts: 3,
        interval: { period: 'MONTH', frequency: 1 },
      });
      assert.equal(res.status, 200, res.text);
      plans.push(res.body.billingPlan.id);
    }
    corrupt("update billing_plans set amount = 'lots' where id = ?", plans[0]);
    const list = await m.api.get(`${API}/subscriptions/billing/plans`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((item: { billingPlan: { id: string } }) => item.billingPlan.id),
      [plans[1]],
    );
    assert.equal((await m.api.get(`${API}/subscriptions/billing/plans/${plans[0]}`)).status, 500);
  });
});
