/**
 * Exactly once and crash safety: concurrent runs settle each operation once; a run that dies
 * between commits leaves whole batches in an invisible OPEN transfer that the next run completes;
 * the daily job runs on the service clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SANDBOX_FEE_SCHEDULE } from '../../src/modules/settlements/fees.js';
import { SettlementsService, type SettlementsRepos } from '../../src/modules/settlements/settlements.service.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { waitFor } from '../terminal/support.js';
import { authorize, capture, minor, refund, runSettlements, walk } from './support.js';

/** An engine on the runtime's store with small batches (many commits) and a hook into each commit. */
function engine(t: TestRuntime, batchSize: number, wrap: (repos: SettlementsRepos, commit: number) => SettlementsRepos = (r) => r) {
  const store = t.runtime.store;
  let commits = 0;
  return new SettlementsService({
    settlements: store.settlements,
    transaction: (fn) => store.transaction((repos) => fn(wrap(repos, ++commits))),
    settings: store.settings,
    clock: t.runtime.clock,
    schedule: SANDBOX_FEE_SCHEDULE,
    batchSize,
  });
}

async function settledRows(t: TestRuntime, accountId: string) {
  return t.runtime.store.db.selectFrom('settlementTransactions').selectAll().where('accountId', '=', accountId).execute();
}

async function transferRows(t: TestRuntime, accountId: string) {
  return t.runtime.store.db.selectFrom('settlementTransfers').selectAll().where('accountId', '=', accountId).execute();
}

/** Checks that every stored transfer's totals equal the sums of its rows. */
async function assertTotalsMatchRows(t: TestRuntime, accountId: string) {
  const rows = await settledRows(t, accountId);
  for (const tr of await transferRows(t, accountId)) {
    const mine = rows.filter((r) => r.settlementTransferId === tr.id);
    assert.equal(tr.transactionsCount, mine.length, `count of ${tr.state} transfer`);
    assert.equal(
      tr.grossAmount,
      mine.reduce((s, r) => s + r.grossAmount, 0),
    );
    assert.equal(
      tr.transactionsNetAmount,
      mine.reduce((s, r) => s + r.netAmount, 0),
    );
    assert.equal(
      tr.acquirerFeeAmount,
      mine.reduce((s, r) => s + r.acquirerFee, 0),
    );
  }
}

async function captures(m: TestMerchant, n: number, amount = 1000): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await authorize(m, amount + i);
    await capture(m, id, amount + i);
    ids.push(id);
  }
  return ids;
}

for (const kind of await availableStores()) {
  describe(`settlements exactly once and crash safety (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind);
    });
    after(() => t?.close());

    test('two concurrent runs over HTTP settle each operation exactly once', async () => {
      const m = await t.createMerchant();
      const ids = await captures(m, 12);
      await refund(m, ids[0]!, 100);
      const [one, two] = await Promise.all([runSettlements(t), runSettlements(t)]);
      const transfers = [...one!, ...two!];
      assert.ok(transfers.length >= 1 && transfers.length <= 2, JSON.stringify(transfers));
      const items = (await Promise.all(transfers.map((tr) => walk(m.api, `/settlements/transfers/${tr.id}/transactions`, 500)))).flat();
      assert.equal(items.length, 13, '12 captures and a refund');
      assert.deepEqual([...new Set(items.map((i) => i.transaction.id))].sort(), [...ids].sort());
      await assertTotalsMatchRows(t, m.accountId);
    });

    test('two engines racing in batches of 2 claim each operation once; totals equal rows at every transfer', async () => {
      const m = await t.createMerchant();
      const ids = await captures(m, 15, 2000);
      for (const id of ids.slice(0, 3)) await refund(m, id, 500);
      const [x, y] = await Promise.all([engine(t, 2).run(), engine(t, 2).run()]);
      assert.equal(x.settled + y.settled, 18, `settled ${x.settled} + ${y.settled}`);
      const rows = await settledRows(t, m.accountId);
      assert.equal(rows.length, 18);
      assert.equal(new Set(rows.map((r) => r.operationId)).size, 18, 'no operation twice');
      await assertTotalsMatchRows(t, m.accountId);
      const transfers = await transferRows(t, m.accountId);
      assert.ok(
        transfers.every((tr) => tr.state === 'READY'),
        'nothing left OPEN',
      );
      const gross = rows.reduce((s, r) => s + r.grossAmount, 0);
      assert.equal(gross, ids.reduce((s, _, i) => s + 2000 + i, 0) - 1500);
      const listedNet = (await walk(m.api, '/settlements/transfers', 25)).reduce((s, i) => s + minor(i.settlementTransfer.netAmount), 0n);
      assert.equal(listedNet, BigInt(rows.reduce((s, r) => s + r.netAmount, 0)), 'the listed transfers carry every net to the cent');
    });

    test('a run failing inside a batch commits nothing of that batch; a run dying before completion leaves an invisible OPEN transfer the next run completes', async () => {
      const m = await t.createMerchant();
      const ids = await captures(m, 5, 3000);
      // Dies in the second batch after inserting its rows, before adding them to the transfer.
      const crashing = engine(t, 2, (repos, commit) =>
        commit === 2
          ? { ...repos, settlements: Object.assign(Object.create(repos.settlements), { addToTransfer: () => Promise.reject(new Error('crash')) }) }
          : repos,
      );
      await assert.rejects(crashing.run(), /crash/);
      let rows = await settledRows(t, m.accountId);
      assert.equal(rows.length, 2, 'only the first batch committed');
      let [open] = await transferRows(t, m.accountId);
      assert.equal(open!.state, 'OPEN');
      await assertTotalsMatchRows(t, m.accountId);
      for (const path of ['/settlements/transfers', `/settlements/transfers/${open!.id}`]) {
        const res = await m.api.get(`${API}${path}`);
        if (path.endsWith(open!.id)) assert.equal(res.status, 404, 'an OPEN transfer is not visible');
        else assert.deepEqual(res.body.items, []);
      }

      // Dies when completing (the event append fails): every batch committed, still OPEN.
      const dying = engine(t, 2, (repos) => ({ ...repos, events: { ...repos.events, append: () => Promise.reject(new Error('crash at completion')) } }));
      await assert.rejects(dying.run(), /crash at completion/);
      rows = await settledRows(t, m.accountId);
      assert.equal(rows.length, 5);
      [open] = await transferRows(t, m.accountId);
      assert.equal(open!.state, 'OPEN');
      await assertTotalsMatchRows(t, m.accountId);

      const [done] = await runSettlements(t);
      assert.equal(done.id, open!.id, 'the next run continues and completes the OPEN transfer');
      const items = await walk(m.api, `/settlements/transfers/${done.id}/transactions`, 500);
      assert.deepEqual(items.map((i) => i.transaction.id).sort(), [...ids].sort());
      assert.equal(
        minor(done.netAmount),
        items.reduce((s, i) => s + minor(i.settlementTransaction.settlementNetAmount), 0n),
      );
    });
  });

  describe(`settlements daily job (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind);
    });
    after(() => t?.close());

    test('the next UTC midnight on the service clock settles what is due, posting on that date', async () => {
      const m = await t.createMerchant();
      // An API key: the access token would expire when the clock moves a day.
      const key = await m.api.post(`${API}/management/api-keys`, { name: 'settlements' });
      assert.equal(key.status, 200, key.text);
      const api = t.client(key.body.key);
      const id = await authorize(m, 4200);
      await capture(m, id, 4200);
      const now = Date.parse((await t.operator.get('/sandbox/v1/clock')).body.now);
      const tomorrow = new Date((Math.floor(now / 86_400_000) + 1) * 86_400_000).toISOString().slice(0, 10);
      assert.equal((await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 86_400 })).status, 200);
      const listed = await waitFor(async () => {
        const res = await api.get(`${API}/settlements/transfers`);
        return res.body.items?.length ? res.body.items : null;
      }, 'the daily settlement run');
      assert.equal(listed.length, 1);
      assert.equal(listed[0].settlementTransfer.postingDate, tomorrow);
      const items = await walk(api, `/settlements/transfers/${listed[0].settlementTransfer.id}/transactions`, 25);
      assert.deepEqual(
        items.map((i) => i.transaction.id),
        [id],
      );
    });
  });
}
