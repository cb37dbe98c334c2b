/**
 * Counting ahead (src/modules/mit/ingestion-cap.ts): on PostgreSQL the ingestion count is taken
 * in a short commit of its own before the commit that writes the MITs — for POST /mit in the same
 * statement as the subscription's read — and given back when that commit fails or creates nothing.
 * The store's counters on both stores, then the service's rules with a store whose commit is made
 * to fail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ServiceClock } from '../../src/clock.js';
import { IngestionCap, type IngestionCountersRepository } from '../../src/modules/mit/ingestion-cap.js';
import { MitService, type MitRepos } from '../../src/modules/mit/mit.service.js';
import type { PaymentRequest } from '../../src/modules/transactions/payment-engine.js';
import type { Transaction } from '../../src/modules/transactions/transaction.js';
import { AppError } from '../../src/shared/errors.js';
import { iso, openTestStore, seedAccount, T0, type TestStore } from '../foundation/fixtures.js';
import { startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { describeLog, touches } from '../support/statements.js';
import { storedCard } from './cit-flows.js';

/** The tables a charge's read and its count touch. */
const CHARGE_TABLES = new Set(['subscriptions', 'payment_methods', 'points_of_sale', 'ingestion_counters']);

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
      await counters.subtract(id, 'mit', window, 3);
      const rows = await t.store.db.selectFrom('ingestionCounters').select('count').where('accountId', '=', id).execute();
      assert.deepEqual(rows, [], 'a counter given back to zero leaves no row');
    });
  });
}

for (const kind of await availableStores()) {
  test(`the subscription's charge read and the count in one statement (${kind}): PostgreSQL only`, async () => {
    const t = await startTestRuntime(kind, {}, { startWorkers: false });
    try {
      const counters = t.runtime.store.ingestionCounters;
      if (kind === 'sqlite') {
        assert.equal(counters.countsAhead, false, 'SQLite counts in the commit: a MIT reads its subscription alone');
        return;
      }
      const m = await t.createMerchant();
      const { subscriptionId } = await storedCard(t, m, 'cust-fold');
      const window = iso(T0);
      const counter = t.runtime.store.counters;
      counter.log = [];
      counter.start();
      const first = await counters.addAheadReading!(m.accountId, 'mit', window, 1, 2, subscriptionId);
      counter.stop();
      // By what they touch: a connection's own setup, when the pool opens one, is not this call's work.
      const touching = counter.logged().filter(({ tables }) => tables && [...tables.reads, ...tables.writes].some((table) => CHARGE_TABLES.has(table)));
      assert.equal(touching.length, 1, `one statement:\n${describeLog(counter)}`);
      assert.ok(
        touches(touching[0]!, { reads: ['subscriptions'], writes: ['ingestion_counters'] }),
        `it reads the subscription and counts:\n${describeLog(counter)}`,
      );
      counter.log = null;
      assert.equal(first.total, 1);
      assert.equal(first.read?.subscription.id, subscriptionId);
      assert.equal(first.read?.subscription.state, 'ACTIVE');
      assert.ok(first.read?.paymentMethod && first.read.pointOfSale, 'with its payment method and point of sale');
      assert.ok(first.read?.sealed.pan, 'and the sealed number the drive needs');
      const plain = await t.runtime.store.subscriptions.findForCharge(m.accountId, subscriptionId);
      assert.deepEqual(first.read, plain, 'the same read as findForCharge');

      const missing = await counters.addAheadReading!(m.accountId, 'mit', window, 1, 2, '00000000-0000-4000-8000-00000000dead');
      assert.deepEqual(missing, { read: null, total: 2 }, 'a missing subscription is counted all the same (the caller gives it back)');
      const refused = await counters.addAheadReading!(m.accountId, 'mit', window, 1, 2, subscriptionId);
      assert.equal(refused.total, null, 'past the cap');
      assert.equal(refused.read?.subscription.id, subscriptionId);
      assert.equal(await counters.current(m.accountId, 'mit', window), 2);
      const stranger = await t.createMerchant();
      const other = await counters.addAheadReading!(stranger.accountId, 'mit', window, 1, 2, subscriptionId);
      assert.equal(other.read, null, "another merchant's subscription reads as none");
    } finally {
      await t.close();
    }
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

  /** aheadCounters that also count with the subscription's read (the folded POST /mit). */
  function foldingCounters(read: unknown) {
    const ahead = aheadCounters();
    const reads: string[] = [];
    ahead.counters.addAheadReading = async (a, c, w, count, limit, subscriptionId) => {
      reads.push(subscriptionId);
      return { read: read as never, total: await ahead.counters.addAhead(a, c, w, count, limit) };
    };
    return { ...ahead, reads };
  }

  const chargeable = {
    subscription: { id: 's1', pointOfSaleId: 'p1', currency: 'DKK', customerId: null },
    paymentMethod: { id: 'pm1', type: 'CARD' },
    pointOfSale: { id: 'p1', domain: 'example.com', descriptor: null },
    sealed: { pan: null, webhookAuthentication: null },
  } as never;

  function service(
    submitMany: (requests: PaymentRequest<MitRepos>[]) => Promise<Transaction[]>,
    store: { counters: IngestionCountersRepository; total: () => number } = aheadCounters(),
    options: { cap?: number; check?: (read: unknown) => Promise<never> | Promise<typeof chargeable>; url?: () => Promise<void> } = {},
  ) {
    const { counters, total } = store;
    const clock = new ServiceClock(null, false);
    const mit = new MitService<MitRepos>({
      subscriptions: {
        requireChargeable: async () => chargeable,
        chargeableOf: async (read) => (options.check ? options.check(read) : chargeable),
        requireChargeableMany: async (_account, ids) => new Map(ids.map((id) => [id, chargeable])),
      },
      urlPolicy: { check: options.url ?? (async () => undefined) },
      payments: { submitMany },
      overload: { isOverloaded: async () => false, retryAfterSeconds: () => 5 },
      ingestion: new IngestionCap({ caps: { mit: options.cap ?? 10, mitBatch: 100 }, clock, counters }),
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

  test('folded with the read (POST /mit): kept when created, given back when the commit fails', async () => {
    const kept = foldingCounters(chargeable);
    const ok = service(commits, kept);
    await ok.mit.create('a1', ok.body as never, null);
    assert.equal(kept.total(), 1);
    assert.deepEqual(kept.reads, [ok.body.subscriptionId], 'the subscription read with the count');

    const failing = foldingCounters(chargeable);
    const broken = service(async (requests) => {
      await commits(requests);
      throw new Error('the commit failed');
    }, failing);
    await assert.rejects(broken.mit.create('a1', broken.body as never, null), /the commit failed/);
    assert.equal(failing.total(), 0);
  });

  test('folded: a refused subscription or callback URL answers its 422 and gives the count back; past the cap, that 422 comes before the 429', async () => {
    const refusedRead = async () => {
      throw new AppError('VALIDATION_ERROR', 'no ACTIVE subscription with this id exists');
    };
    const noSubscription = foldingCounters(null);
    const a = service(commits, noSubscription, { check: refusedRead });
    await assert.rejects(a.mit.create('a1', a.body as never, null), (err: AppError) => err.code === 'VALIDATION_ERROR');
    assert.equal(noSubscription.total(), 0, 'given back');

    const badUrl = foldingCounters(chargeable);
    const b = service(commits, badUrl, {
      url: async () => {
        throw new AppError('VALIDATION_ERROR', 'not on the approved domain');
      },
    });
    await assert.rejects(b.mit.create('a1', b.body as never, null), (err: AppError) => err.code === 'VALIDATION_ERROR');
    assert.equal(badUrl.total(), 0, 'given back');

    const full = foldingCounters(chargeable);
    const c = service(commits, full, { cap: 1 });
    await c.mit.create('a1', c.body as never, null);
    await assert.rejects(c.mit.create('a1', c.body as never, null), (err: AppError) => err.code === 'RATE_LIMIT_REACHED');
    assert.equal(full.total(), 1, 'the refused one counted nothing');
    const fullAndMissing = service(commits, full, { cap: 1, check: refusedRead });
    await assert.rejects(fullAndMissing.mit.create('a1', fullAndMissing.body as never, null), (err: AppError) => err.code === 'VALIDATION_ERROR');
    assert.equal(full.total(), 1);
  });
});
