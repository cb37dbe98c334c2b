/**
 * Counting ahead (src/modules/mit/ingestion-cap.ts): on PostgreSQL the ingestion count is taken
 * in a short commit of its own before the commit that writes the MITs, and given back when that
 * commit fails or creates nothing. The store's counters on both stores, then the service's rules
 * with a store whose commit is made to fail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ServiceClock } from '../../src/clock.js';
import { IngestionCap, type IngestionCountersRepository } from '../../src/modules/mit/ingestion-cap.js';
import { MitService, type MitRepos } from '../../src/modules/mit/mit.service.js';
import type { PaymentRequest } from '../../src/modules/transactions/payment-engine.js';
import type { Transaction } from '../../src/modules/transactions/transaction.js';
import { iso, openTestStore, seedAccount, T0, type TestStore } from '../foundation/fixtures.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`ingestion counters counted ahead (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    test('addAhead counts within the limit, refuses past it, and subtract gives a count back', async () => {
      const counters = t.store.ingestionCounters;
      assert.equal(counters.countsAhead, kind === 'postgres', 'PostgreSQL counts ahead; SQLite in the commit');
      const { id } = await seedAccount(t.store);
      const window = iso(T0);
      assert.equal(await counters.addAhead(id, 'mit', window, 2, 3), 2);
      assert.equal(await counters.addAhead(id, 'mit', window, 1, 3), 3);
      assert.equal(await counters.addAhead(id, 'mit', window, 1, 3), null, 'past the cap');
      await counters.subtract(id, 'mit', window, 2);
      assert.equal(await counters.current(id, 'mit', window), 1);
      assert.equal(await counters.addAhead(id, 'mit', window, 2, 3), 3, 'the count given back is free again');
    });
  });
}

describe('MIT service counting ahead', () => {
  /** A store's counters that count ahead, in memory. */
  function aheadCounters() {
    const counts = new Map<string, number>();
    const key = (a: string, c: string, w: string) => `${a}|${c}|${w}`;
    const counters: IngestionCountersRepository = {
      countsAhead: true,
      addWithin: async () => assert.fail('counted in the commit although the store counts ahead'),
      async addAhead(a, c, w, count, limit) {
        const total = (counts.get(key(a, c, w)) ?? 0) + count;
        if (total > limit) return null;
        counts.set(key(a, c, w), total);
        return total;
      },
      async subtract(a, c, w, count) {
        counts.set(key(a, c, w), (counts.get(key(a, c, w)) ?? 0) - count);
      },
      current: async (a, c, w) => counts.get(key(a, c, w)) ?? 0,
      pruneBefore: async () => undefined,
    };
    return { counters, total: () => [...counts.values()].reduce((s, n) => s + n, 0) };
  }

  const chargeable = {
    subscription: { id: 's1', pointOfSaleId: 'p1', currency: 'DKK', customerId: null },
    paymentMethod: { id: 'pm1', type: 'CARD' },
    pointOfSale: { id: 'p1', domain: 'example.com', descriptor: null },
    sealed: { pan: null, webhookAuthentication: null },
  } as never;

  function service(submitMany: (requests: PaymentRequest<MitRepos>[]) => Promise<Transaction[]>) {
    const { counters, total } = aheadCounters();
    const clock = new ServiceClock(null, false);
    const mit = new MitService<MitRepos>({
      subscriptions: {
        requireChargeable: async () => chargeable,
        requireChargeableMany: async (_account, ids) => new Map(ids.map((id) => [id, chargeable])),
      },
      urlPolicy: { check: async () => undefined },
      authorization: { submitMany },
      overload: { isOverloaded: async () => false, retryAfterSeconds: () => 5 },
      ingestion: new IngestionCap({ caps: { mit: 10, mitBatch: 100 }, clock, counters }),
    });
    const body = { subscriptionId: '00000000-0000-4000-8000-000000000001', amount: 100, currency: 'DKK', notificationUrl: 'https://example.com/cb' };
    return { mit, body, total };
  }
  /** What the engine does with the create commit's hook: it runs inside the commit. */
  const commits = async (requests: PaymentRequest<MitRepos>[]) => {
    await requests[0]!.inCommit?.({} as MitRepos, {} as never);
    return requests.map(() => ({ id: 'T1' }) as Transaction);
  };

  test('kept when the commit creates the transactions', async () => {
    const { mit, body, total } = service(commits);
    await mit.create('a1', body as never, null);
    assert.equal(total(), 1);
    await mit.batch('a1', [body, body, { amount: 'bad' }], null);
    assert.equal(total(), 3, 'the accepted entries of the batch');
  });

  test('given back when the commit fails, or when it creates nothing (a retry that found its transactions)', async () => {
    const failing = service(async (requests) => {
      await commits(requests);
      throw new Error('the commit failed');
    });
    await assert.rejects(failing.mit.create('a1', failing.body as never, null), /the commit failed/);
    assert.equal(failing.total(), 0);

    const found = service(async (requests) => requests.map(() => ({ id: 'T-existing' }) as Transaction));
    await found.mit.create('a1', found.body as never, null);
    assert.equal(found.total(), 0);
  });
});
