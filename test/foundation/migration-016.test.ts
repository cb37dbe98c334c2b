/**
 * 016_ingestion_caps on a database that already holds rows: billing agreements' desired_date
 * (a YYYY-MM-DD anchor before) becomes the day of the month on MONTH plans and null on the others
 * (INTERFACE §11.7), and the new columns refuse what the contract refuses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { connect, type Connection } from '../../src/storage/connect.js';
import { migrate } from '../../src/storage/migrate.js';
import { createStore, type Store } from '../../src/storage/store.js';
import { availableStores, createTestDatabase, type TestDatabase } from '../support/stores.js';
import { iso, seedAccount, T0 } from './fixtures.js';

/** Every migration before 016 (whatever 014 and 015 are named). */
const BEFORE_016 = '015~';

for (const kind of await availableStores()) {
  describe(`migration 016_ingestion_caps on existing rows (${kind})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    let store: Store;
    const agreements: Record<string, string> = {};
    let accountId: string;

    before(async () => {
      database = await createTestDatabase(kind);
      connection = connect(database.config, database.schema ? { schema: database.schema } : {});
      await migrate(connection, { until: BEFORE_016 });
      store = createStore(connection, { now: () => T0 });
      const account = await seedAccount(store);
      accountId = account.id;
      const plan = async (period: string) => {
        const id = newId();
        await store.billingPlans.insert({
          id,
          accountId: account.id,
          name: period,
          amount: 100,
          currency: 'DKK',
          maxAttempts: 1,
          interval: { period: period as 'MONTH', frequency: 1 },
          instantCapture: 'OFF',
          color: null,
          emoji: null,
          createdAt: iso(T0),
        });
        return id;
      };
      const plans = { MONTH: await plan('MONTH'), DAY: await plan('DAY'), YEAR: await plan('YEAR') };
      const agreement = async (name: string, billingPlanId: string, desiredDate: string | null) => {
        const id = newId();
        agreements[name] = id;
        // As the service wrote it before 016: desired_date a YYYY-MM-DD text.
        await sql`insert into billing_agreements (id, account_id, billing_plan_id, state, next_charge_at, desired_date, state_changed_at, created_at, updated_at)
          values (${id}, ${account.id}, ${billingPlanId}, 'ACTIVE', ${iso(T0)}, ${desiredDate}, ${iso(T0)}, ${iso(T0)}, ${iso(T0)})`.execute(connection.db);
      };
      await agreement('month31', plans.MONTH, '2030-01-31');
      await agreement('month05', plans.MONTH, '2030-02-05');
      await agreement('monthNull', plans.MONTH, null);
      await agreement('day', plans.DAY, '2030-01-31');
      await agreement('year', plans.YEAR, '2024-02-29');
      await migrate(connection);
    });
    after(async () => {
      await store.close();
      await database.drop();
    });

    test('desired_date becomes the day of the month on MONTH plans, null on the others', async () => {
      const desired = async (name: string) => (await store.billingAgreements.findById(accountId, agreements[name]!))?.desiredDate;
      assert.equal(await desired('month31'), 31);
      assert.equal(await desired('month05'), 5);
      assert.equal(await desired('monthNull'), null);
      assert.equal(await desired('day'), null);
      assert.equal(await desired('year'), null);
    });

    test('the new columns refuse values out of the contract', async () => {
      const refused = (statement: ReturnType<typeof sql>) => assert.rejects(statement.execute(connection.db), /check|constraint/i);
      await refused(sql`update billing_agreements set desired_date = 32 where id = ${agreements.month31!}`);
      await refused(sql`update billing_agreements set desired_date = 0 where id = ${agreements.month31!}`);
      await refused(sql`insert into ingestion_counters (account_id, channel, window_start, count) values (${accountId}, 'moto', ${iso(T0)}, 1)`);
      await refused(sql`insert into ingestion_counters (account_id, channel, window_start, count) values (${accountId}, 'mit', ${iso(T0)}, -1)`);
    });
  });
}
