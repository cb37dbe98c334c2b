/**
 * Counts held from a block (held-counts.ts): on a store that counts in the payment's commit, a
 * single MIT at a large cap takes a block of counts and the next MITs of its minute use them
 * without a statement; the cap is still reached exactly, never passed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Clock } from '../../src/clock.js';
import { blockExtra, HELD_BLOCK } from '../../src/modules/mit/held-counts.js';
import { IngestionCap, type IngestionCountersRepository, type IngestionRepos } from '../../src/modules/mit/ingestion-cap.js';
import { AppError } from '../../src/shared/errors.js';
import { API, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { statementsTouching } from '../support/statements.js';
import { mitBody, ok, storedCard } from './cit-flows.js';

/** A store's counters that count in the commit, in memory; `adds` logs every upsert's count. */
function inCommitCounters() {
  const counts = new Map<string, number>();
  const adds: number[] = [];
  const key = (a: string, c: string, w: string) => `${a}|${c}|${w}`;
  const counters: IngestionCountersRepository = {
    countsAhead: false,
    addAhead: async () => assert.fail('counted ahead although the store counts in the commit'),
    subtract: async () => assert.fail('nothing is given back when the count is in the commit'),
    async addWithin(a, c, w, count, limit) {
      adds.push(count);
      const total = (counts.get(key(a, c, w)) ?? 0) + count;
      if (total > limit) return null;
      counts.set(key(a, c, w), total);
      return total;
    },
    current: async (a, c, w) => counts.get(key(a, c, w)) ?? 0,
    pruneBefore: async () => undefined,
  };
  return { counters, adds, counted: () => [...counts.values()].reduce((s, n) => s + n, 0) };
}

/** A commit: its after-commit work runs once it is done, or never when it rolls back. */
function commit(counters: IngestionCountersRepository) {
  const after: Array<() => void> = [];
  const repos: IngestionRepos = { ingestionCounters: counters, afterCommit: (fn) => after.push(fn) };
  return { repos, done: () => after.splice(0).forEach((fn) => fn()) };
}

/** A clock the test moves. */
function testClock(at = Date.parse('2026-11-29T10:00:30Z')) {
  return {
    at,
    now() {
      return this.at;
    },
    nowIso() {
      return new Date(this.at).toISOString();
    },
  } satisfies Clock & { at: number };
}

function cap(limit: number, counters: IngestionCountersRepository, clock: Clock = testClock()) {
  return new IngestionCap({ caps: { mit: limit, mitBatch: limit }, clock, counters });
}

/** takeInCommit of one MIT in a commit of its own; true when counted, false on the 429. */
async function oneMit(ingestion: IngestionCap, counters: IngestionCountersRepository, account = 'a1'): Promise<boolean> {
  const { repos, done } = commit(counters);
  try {
    await ingestion.takeInCommit(repos, account, 'mit', 1);
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'RATE_LIMIT_REACHED', String(err));
    return false;
  }
  done();
  return true;
}

describe('ingestion counts held from a block', () => {
  test('the block: none at small caps, up to 16 with the MIT itself at large ones', () => {
    assert.equal(blockExtra(3), 0);
    assert.equal(blockExtra(63), 0);
    assert.equal(blockExtra(64), 1);
    assert.equal(blockExtra(300), 4, 'the default cap');
    assert.equal(blockExtra(1_000_000), HELD_BLOCK - 1);
  });

  test('one upsert takes a block; the next MITs of the minute use it without a statement', async () => {
    const { counters, adds, counted } = inCommitCounters();
    const ingestion = cap(1_000_000, counters);
    for (let i = 0; i < 3 * HELD_BLOCK; i++) assert.ok(await oneMit(ingestion, counters));
    assert.deepEqual(adds, [HELD_BLOCK, HELD_BLOCK, HELD_BLOCK]);
    assert.equal(counted(), 3 * HELD_BLOCK, 'every count taken is used');
  });

  test('while a block’s commit is not done, the others count one by one', async () => {
    const { counters, adds } = inCommitCounters();
    const ingestion = cap(1_000_000, counters);
    const first = commit(counters);
    await ingestion.takeInCommit(first.repos, 'a1', 'mit', 1);
    assert.ok(await oneMit(ingestion, counters));
    assert.ok(await oneMit(ingestion, counters));
    assert.deepEqual(adds, [HELD_BLOCK, 1, 1], 'the block is not used before its commit is done');
    first.done();
    assert.ok(await oneMit(ingestion, counters));
    assert.deepEqual(adds, [HELD_BLOCK, 1, 1], 'then it is');
  });

  test('a block whose commit rolled back is not used, and the cap is never passed', async () => {
    const { counters, adds, counted } = inCommitCounters();
    const ingestion = cap(64, counters);
    // The commit rolls back: its after-commit work never runs (the fake keeps the count: stricter).
    await ingestion.takeInCommit(commit(counters).repos, 'a1', 'mit', 1);
    assert.deepEqual(adds, [2]);
    let accepted = 0;
    while (await oneMit(ingestion, counters)) accepted++;
    assert.equal(accepted, 62, 'the two counts of the lost block are not used again');
    assert.equal(counted(), 64);
  });

  test('near the cap the last counts are taken one by one: exactly the cap is accepted', async () => {
    for (const limit of [64, 300, 1000]) {
      const { counters, adds, counted } = inCommitCounters();
      const ingestion = cap(limit, counters);
      let accepted = 0;
      while (await oneMit(ingestion, counters)) accepted++;
      assert.equal(accepted, limit, `cap ${limit}`);
      assert.equal(counted(), limit);
      assert.ok(adds.length < limit, `cap ${limit}: ${adds.length} upserts for ${limit} MITs`);
    }
  });

  test('counts held in one minute are not used in the next, nor by another merchant', async () => {
    const { counters, adds } = inCommitCounters();
    const clock = testClock(Date.parse('2026-11-29T10:00:30Z'));
    const ingestion = cap(1_000_000, counters, clock);
    assert.ok(await oneMit(ingestion, counters));
    assert.ok(await oneMit(ingestion, counters, 'a2'));
    clock.at = Date.parse('2026-11-29T10:01:00Z');
    assert.ok(await oneMit(ingestion, counters));
    assert.deepEqual(adds, [HELD_BLOCK, HELD_BLOCK, HELD_BLOCK]);
  });

  test('a batch counts its entries exactly, and takes no block', async () => {
    const { counters, adds } = inCommitCounters();
    const ingestion = cap(1_000_000, counters);
    const { repos, done } = commit(counters);
    await ingestion.takeInCommit(repos, 'a1', 'mit_batch', 500);
    done();
    assert.deepEqual(adds, [500]);
  });
});

for (const kind of await availableStores()) {
  describe(`ingestion cap with held counts, through the API (${kind})`, () => {
    test('at a cap of 128 a minute, exactly 128 MITs are accepted, then 429 with nothing left', async () => {
      const t = await startTestRuntime(kind, { mitCapPerMinute: 128 });
      try {
        const m = await t.createMerchant({ physical: false });
        const { subscriptionId } = await storedCard(t, m, 'cust-held');
        // A fresh minute with 50 s of it left.
        const now = Date.parse(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
        ok(await t.operator.post('/sandbox/v1/clock', { now: new Date(Math.floor(now / 60_000) * 60_000 + 61_000).toISOString() }), 'move clock');
        const counters = t.runtime.store.counters;
        counters.log = [];
        counters.start();
        const statuses: number[] = [];
        for (let i = 0; i < 130; i++)
          statuses.push((await m.api.post(`${API}/mit`, mitBody(subscriptionId, 'http://localhost:9/cb', { reference: `held-${i}` }))).status);
        counters.stop();
        const counterWrites = statementsTouching(counters, { kind: 'write', writes: ['ingestion_counters'] }).length;
        counters.log = null;
        assert.deepEqual(statuses, [...Array(128).fill(200), 429, 429]);
        const refused = await m.api.post(`${API}/mit`, mitBody(subscriptionId, 'http://localhost:9/cb', { reference: 'held-over' }));
        assert.equal(refused.headers['x-ratelimit-remaining'], '0');
        if (kind === 'sqlite') assert.ok(counterWrites <= 130 / 2, `${counterWrites} writes of the counters for 130 MITs`);
      } finally {
        await t.close();
      }
    });
  });
}
