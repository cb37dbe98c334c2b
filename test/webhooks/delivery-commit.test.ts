/**
 * A webhook delivery's record and its job's end (both stores): a delivered attempt ends its job in
 * the commit that records it, and that commit may linger (it waits for nobody); a failed attempt
 * commits at once and leaves its job to the runner's retry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JobOutcome, JobQueue } from '../../src/jobs/job.js';
import { DELIVERY_RECORD_LINGER_MS, type UnitOptions } from '../../src/shared/unit-of-work.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { emit, type Receiver, register, startReceiver } from './support.js';

for (const kind of await availableStores()) {
  describe(`webhook delivery commit (${kind})`, () => {
    let t: TestRuntime;
    let rx: Receiver;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      rx = await startReceiver();
      m = await t.createMerchant();
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    /** A pending delivery of a new webhook (its receiver answering `status`). */
    async function pendingDelivery(status: number): Promise<string> {
      const { webhook, path } = await register(m, rx, ['transaction.captured.v1']);
      rx.answer(path, status);
      await emit(t, m, 'transaction.captured.v1');
      await t.runtime.services.webhooks.fanOut(200);
      const row = await t.runtime.store.db.selectFrom('webhookDeliveries').select('id').where('webhookId', '=', webhook.id).executeTakeFirstOrThrow();
      return row.id;
    }

    /** Delivers once, recording each commit's unit options and the job outcomes settled inside a commit. */
    async function deliverObserved(deliveryId: string) {
      const store = t.runtime.store;
      const original = store.transaction.bind(store);
      const units: UnitOptions[] = [];
      const settled: Array<{ outcome: JobOutcome; inCommit: boolean }> = [];
      let open = 0;
      store.transaction = (async (fn: Parameters<typeof original>[0], unit?: UnitOptions) => {
        units.push(unit ?? {});
        open++;
        try {
          return await original(fn, unit);
        } finally {
          open--;
        }
      }) as typeof store.transaction;
      const settleIn = async (_jobs: JobQueue, outcome: JobOutcome) => void settled.push({ outcome, inCommit: open > 0 });
      try {
        const error = await t.runtime.services.webhooks.deliver(deliveryId, { settleIn }).then(
          () => null,
          (err: Error) => err,
        );
        return { units, settled, error };
      } finally {
        store.transaction = original;
      }
    }

    test('a delivered attempt ends its job in the commit that records it, and that commit may linger', async () => {
      const id = await pendingDelivery(200);
      const { units, settled, error } = await deliverObserved(id);
      assert.equal(error, null);
      assert.deepEqual(settled, [{ outcome: { done: true }, inCommit: true }]);
      assert.deepEqual(units, [{ lingerMs: DELIVERY_RECORD_LINGER_MS }]);
      assert.equal((await t.runtime.store.webhooks.findDelivery(id))?.state, 'DELIVERED');
    });

    test('a failed attempt commits at once and leaves its job to the retry', async () => {
      const id = await pendingDelivery(500);
      const { units, settled, error } = await deliverObserved(id);
      assert.match(String(error?.message), /attempt 1 failed/);
      assert.deepEqual(settled, []);
      assert.deepEqual(units, [{}]);
      const delivery = await t.runtime.store.webhooks.findDelivery(id);
      assert.equal(delivery?.state, 'PENDING');
      assert.equal(delivery?.attempts, 1);
    });
  });
}
