/**
 * The relay's look-back (webhooks.jobs.ts): most runs read the events of the last few seconds
 * behind the newest event fanned out; every FULL_LOOKBACK_EVERY_MS a run reads the full two
 * minutes, which finds an event committed late. Both stores, then the runs' schedule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Job, JobContext, JobQueue } from '../../src/jobs/job.js';
import type { UnfannedFrom } from '../../src/modules/webhooks/webhooks.repository.js';
import type { WebhooksService } from '../../src/modules/webhooks/webhooks.service.js';
import { FULL_LOOKBACK_EVERY_MS, FULL_LOOKBACK_MS, RECENT_LOOKBACK_MS, webhookRelayJob } from '../../src/modules/webhooks/webhooks.jobs.js';
import { iso, openTestStore, seedAccount, T0, type TestStore } from '../foundation/fixtures.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`relay look-back (${kind})`, () => {
    let t: TestStore;
    const ids: Record<string, string> = {};
    before(async () => {
      t = await openTestStore(kind);
      const account = await seedAccount(t.store);
      const append = async (name: string, atMs: number) => {
        t.clock.ms = atMs;
        ids[name] = await t.store.transaction((repos) => repos.events.append(account.id, 'transaction.captured', { name }));
      };
      await append('old', T0);
      await append('newest', T0 + 60_000);
      // Fanned out: the newest at T0 + 60 s.
      await t.store.webhooks.claimFanouts(
        [
          { event: { id: ids.old!, createdAt: iso(T0) }, deliveries: 0 },
          { event: { id: ids.newest!, createdAt: iso(T0 + 60_000) }, deliveries: 0 },
        ],
        iso(T0 + 60_000),
      );
      // Committed late: created 30 s before the newest fanned out, not fanned out yet.
      await append('late', T0 + 30_000);
      await append('recent', T0 + 58_000);
    });
    after(() => t.close());

    const read = async (from: UnfannedFrom) => (await t.store.webhooks.unfannedEvents(10, from)).map((e) => e.id);

    test('a recent look-back reads the last seconds only; the full one finds the late event too', async () => {
      assert.deepEqual(await read({ lookbackMs: RECENT_LOOKBACK_MS }), [ids.recent]);
      assert.deepEqual(await read({ lookbackMs: FULL_LOOKBACK_MS }), [ids.late, ids.recent]);
      assert.deepEqual(await read({ after: { id: ids.old!, createdAt: iso(T0) } }), [ids.late, ids.recent]);
    });
  });
}

describe('relay runs: a full look-back first, then recent ones, full again every FULL_LOOKBACK_EVERY_MS', () => {
  test('the look-back each run asks for', async () => {
    const asked: UnfannedFrom[] = [];
    const service = { fanOut: async (_limit: number, from: UnfannedFrom) => (asked.push(from), []) } as unknown as WebhooksService;
    const jobs = { enqueue: async () => undefined } as unknown as JobQueue;
    const relay = webhookRelayJob({ service, jobs });
    let now = T0;
    const ctx = { job: {} as Job, attempt: 1, now: () => now, settleIn: async () => undefined } as JobContext;
    for (const at of [0, 1_000, 2_000, FULL_LOOKBACK_EVERY_MS - 1, FULL_LOOKBACK_EVERY_MS, FULL_LOOKBACK_EVERY_MS + 1_000]) {
      now = T0 + at;
      await relay.handle({}, ctx);
    }
    const full = { lookbackMs: FULL_LOOKBACK_MS };
    const recent = { lookbackMs: RECENT_LOOKBACK_MS };
    assert.deepEqual(asked, [full, recent, recent, recent, full, recent]);
  });
});
