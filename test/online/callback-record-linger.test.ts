/**
 * The answer a MIT's drive job applies, and the delivered callback's record — the attempt, the row's
 * counters and its job's end — are each one commit that may linger (src/storage/unit-commits.ts):
 * unless a commit is due to start, it waits for the next one another unit starts instead of paying
 * its own (on SQLite the group commit, whose rules are tested in sqlite-driver.test.ts; on
 * PostgreSQL the next joinable statement). Both stores record the delivery.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { UnitKind } from '../../src/shared/unit-of-work.js';
import { unitCommit } from '../../src/storage/unit-commits.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, storedCard } from './cit-flows.js';
import { startReceiver, waitFor } from './helpers.js';

for (const kind of await availableStores()) {
  describe(`callback record commit (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await t.close();
    });

    test('the answer applied by a job and the record of its delivered callback are commits that may linger; the row says DELIVERED', async () => {
      const { subscriptionId } = await storedCard(t, m, 'cust-linger');
      const store = t.runtime.store;
      const original = store.transaction.bind(store);
      const units: Array<UnitKind | undefined> = [];
      store.transaction = ((fn: Parameters<typeof original>[0], kind?: UnitKind) => {
        units.push(kind);
        return original(fn, kind);
      }) as typeof store.transaction;
      try {
        const path = rx.newPath('linger');
        const res = await m.api.post(`${API}/mit`, mitBody(subscriptionId, rx.url(path)));
        assert.equal(res.status, 200, res.text);
        const id = res.body.transaction.id as string;
        await waitFor(() => rx.at(path).length > 0 || null, 'the callback');
        const row = await waitFor(async () => {
          const found = await store.db.selectFrom('notifications').select(['state', 'attempts']).where('transactionId', '=', id).executeTakeFirst();
          return found?.state === 'DELIVERED' ? found : null;
        }, 'the delivery recorded');
        assert.equal(Number(row.attempts), 1);
        assert.deepEqual(
          units.filter((kind) => unitCommit(kind).lingerMs !== undefined),
          ['background-answer', 'delivery-record'],
          'the answer applied by the drive job, then the record: each one commit, allowed to linger (and to run again: they write only through their repositories)',
        );
      } finally {
        store.transaction = original;
      }
    });
  });
}
