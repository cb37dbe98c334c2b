/**
 * The relay's fan-out marks on both stores: one statement marks a batch of events, and says which
 * of them this run marked — an event another run marked first is left to that run (exactly once).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { iso, openTestStore, T0, type TestStore } from '../foundation/fixtures.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`webhook fan-out marks (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    test('a batch is marked in one statement; events marked before by another run are not claimed again', async () => {
      const [a, b, c] = [newId(), newId(), newId()];
      const event = (id: string, offset: number) => ({ id, createdAt: iso(T0 + offset) });
      t.store.counters.start();
      const first = await t.store.webhooks.claimFanouts(
        [
          { event: event(a, 0), deliveries: 2 },
          { event: event(b, 1), deliveries: 0 },
        ],
        iso(T0 + 10),
      );
      const counted = t.store.counters.stop();
      assert.deepEqual(first, new Set([a, b]));
      assert.equal(counted.writes, 1, 'one insert for the batch');

      // A second run that read b and c: b is the first run's.
      const second = await t.store.webhooks.claimFanouts(
        [
          { event: event(b, 1), deliveries: 5 },
          { event: event(c, 2), deliveries: 1 },
        ],
        iso(T0 + 20),
      );
      assert.deepEqual(second, new Set([c]));
      const rows = await t.store.db
        .selectFrom('webhookEventFanouts')
        .select(['eventId', 'deliveries', 'createdAt'])
        .where('eventId', 'in', [a, b, c])
        .orderBy('eventCreatedAt')
        .execute();
      assert.deepEqual(
        rows.map((r) => ({ ...r, deliveries: Number(r.deliveries) })),
        [
          { eventId: a, deliveries: 2, createdAt: iso(T0 + 10) },
          { eventId: b, deliveries: 0, createdAt: iso(T0 + 10) },
          { eventId: c, deliveries: 1, createdAt: iso(T0 + 20) },
        ],
        'the first mark of each event stays',
      );
      assert.deepEqual(await t.store.webhooks.claimFanouts([], iso(T0)), new Set());
    });
  });
}
