/**
 * Overload is survivable (INTERFACE §3): once the backlog of due jobs is at PAYMENTS_MAX_BACKLOG,
 * asynchronous work (POST /mit, POST /mit/batch, POST /payout) is refused with 503
 * SERVICE_UNAVAILABLE and Retry-After before anything is stored, and the same Idempotency-Key is
 * accepted once the workers have caught up; synchronous work (MOTO, payout-sync, capture, reads)
 * goes on. No background runner: accepted work piles up and the test drains it with runner.drain().
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKLOG_RETRY_AFTER_S, DUE_HORIZON_MS } from '../../src/jobs/backlog.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import { CALLBACK_JOB, DRIVE_JOB } from '../../src/modules/transactions/payment-engine.js';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, ok, storedCard } from './cit-flows.js';
import { motoBody, startReceiver } from './helpers.js';

const BOUND = 4;
const REFUSAL = {
  success: false,
  errorCode: 'SERVICE_UNAVAILABLE',
  message: 'The backlog of accepted work is at its bound; retry after the time given in Retry-After.',
};

function expectRefused(res: TestResponse): void {
  assert.equal(res.status, 503, res.text);
  assert.deepEqual(res.body, REFUSAL);
  assert.equal(res.headers['retry-after'], String(BACKLOG_RETRY_AFTER_S));
  assert.equal(res.headers['idempotent-replayed'], undefined);
}

for (const kind of await availableStores()) {
  describe(`overload: the backlog bound (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let subscriptionId: string;
    let paymentMethodId: string;
    let cb: string;

    before(async () => {
      // A count at every check (refresh 0): the figure a request is judged by is the current one.
      t = await startTestRuntime(kind, { maxBacklog: BOUND }, { startWorkers: false, backlogRefreshMs: 0 });
      // Callbacks are answered 200, so that a drained MIT leaves no callback retry to come due later.
      rx = await startReceiver();
      cb = rx.url('/cb');
      m = await t.createMerchant({ capabilities: { moto: true, syncPayout: true } });
      ({ subscriptionId, paymentMethodId } = await storedCard(t, m, 'cust-backlog'));
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    /** Due jobs not yet done (within the gauge's horizon), counted exactly (the bound is far below 1 000). */
    const due = () => t.runtime.store.jobs.countBacklog(t.runtime.clock.now() + DUE_HORIZON_MS, 1_000);
    const driveJobs = async () => (await t.runtime.store.jobs.countsByState()).filter((r) => r.kind === DRIVE_JOB).reduce((n, r) => n + r.count, 0);
    const transactionIds = async () =>
      (ok(await m.api.get(`${API}/transactions?perPage=500`), 'list').items as Array<{ transaction: { id: string } }>).map((i) => i.transaction.id).sort();
    const payoutBody = (reference: string) => ({
      pointOfSaleId: m.onlinePointOfSaleId,
      amount: 300,
      currency: 'DKK',
      paymentMethodId,
      reference,
      notificationUrl: cb,
    });

    /**
     * Drains, then sends MITs until one is refused. Without a runner the backlog only grows, so a
     * MIT accepted means the backlog was below the bound before it, and a refusal means it is at
     * the bound after it (periodic jobs such as the webhook relay may come due meanwhile: the
     * checks hold whatever they add).
     */
    async function fillToTheBound(): Promise<{ accepted: number; refused: TestResponse }> {
      await t.runtime.runner.drain();
      assert.ok((await due()) < BOUND, 'drained: below the bound');
      let accepted = 0;
      for (let i = 0; i <= BOUND; i++) {
        const before = await due();
        const res = await m.api.post(`${API}/mit`, mitBody(subscriptionId, cb));
        if (res.status === 200) {
          assert.ok(before < BOUND, `accepted with ${before} due jobs, bound ${BOUND}`);
          assert.equal(res.body.transaction.state, 'PENDING');
          accepted++;
          continue;
        }
        expectRefused(res);
        assert.ok((await due()) >= BOUND, 'refused only at the bound');
        assert.equal(await t.runtime.services.backlog.isOverloaded(), true);
        return { accepted, refused: res };
      }
      assert.fail(`${BOUND + 1} MITs accepted with a bound of ${BOUND}`);
    }

    test('MITs are accepted until the backlog reaches the bound, then 503 with Retry-After; nothing stored; the same key works once drained', async () => {
      const { accepted } = await fillToTheBound();
      assert.ok(accepted >= 1 && accepted <= BOUND, `${accepted} accepted`);

      const ids = await transactionIds();
      const drives = await driveJobs();
      const body = mitBody(subscriptionId, cb, { reference: 'after-the-bound' });
      expectRefused(await m.api.post(`${API}/mit`, body, { idempotencyKey: 'backlog-mit-1' }));
      // Still at the bound: the same key is refused the same way again (not stored as its answer, not in use).
      expectRefused(await m.api.post(`${API}/mit`, body, { idempotencyKey: 'backlog-mit-1' }));
      assert.deepEqual(await transactionIds(), ids, 'no transaction created');
      assert.equal(await driveJobs(), drives, 'no job enqueued');
      // Refused at the door (http/overload-hook.ts), before the key is claimed: nothing to store or reopen.
      const record = await t.runtime.store.db.selectFrom('idempotencyKeys').select(['state']).where('key', '=', 'backlog-mit-1').executeTakeFirst();
      assert.equal(record, undefined, 'the 503 claims nothing');

      await t.runtime.runner.drain();
      assert.equal(await t.runtime.services.backlog.isOverloaded(), false);
      const res = await m.api.post(`${API}/mit`, body, { idempotencyKey: 'backlog-mit-1' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.reference, 'after-the-bound');
      const replay = await m.api.post(`${API}/mit`, body, { idempotencyKey: 'backlog-mit-1' });
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.transaction.id, res.body.transaction.id);
      assert.deepEqual(await transactionIds(), [...ids, res.body.transaction.id].sort(), 'exactly one transaction for the key');
    });

    test('at the bound a batch is refused whole and an asynchronous payout too; both go through with their keys once drained', async () => {
      await fillToTheBound();
      const ids = await transactionIds();
      const drives = await driveJobs();
      const batch = { transactions: [mitBody(subscriptionId, cb, { reference: 'batch-a' }), mitBody(subscriptionId, cb, { reference: 'batch-b' })] };
      expectRefused(await m.api.post(`${API}/mit/batch`, batch, { idempotencyKey: 'backlog-batch-1' }));
      expectRefused(await m.api.post(`${API}/payout`, payoutBody('payout-a'), { idempotencyKey: 'backlog-payout-1' }));
      assert.deepEqual(await transactionIds(), ids, 'no transaction created');
      assert.equal(await driveJobs(), drives, 'no job enqueued');

      await t.runtime.runner.drain();
      const batched = await m.api.post(`${API}/mit/batch`, batch, { idempotencyKey: 'backlog-batch-1' });
      assert.equal(batched.status, 200, batched.text);
      assert.deepEqual(
        batched.body.transactions.map((r: { error: unknown; reference: string }) => [r.error, r.reference]),
        [
          [null, 'batch-a'],
          [null, 'batch-b'],
        ],
      );
      const payout = await m.api.post(`${API}/payout`, payoutBody('payout-a'), { idempotencyKey: 'backlog-payout-1' });
      assert.equal(payout.status, 200, payout.text);
      assert.equal(payout.body.transaction.type, 'PAYOUT');
      assert.equal((await transactionIds()).length, ids.length + 3);
    });

    test('synchronous work is not refused at the bound: MOTO, capture, payout-sync, reads; /metrics shows the backlog', async () => {
      await fillToTheBound();
      const moto = await m.api.post(`${API}/moto`, motoBody(m));
      assert.equal(moto.status, 200, moto.text);
      const capture = await m.api.post(`${API}/transactions/${moto.body.transaction.id}/capture`, { amount: 1000 });
      assert.equal(capture.status, 200, capture.text);
      assert.equal(capture.body.success, true, capture.text);
      const sync = await m.api.post(`${API}/payout-sync`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 200, currency: 'DKK', paymentMethodId });
      assert.equal(sync.status, 200, sync.text);
      assert.equal((await m.api.get(`${API}/transactions/${moto.body.transaction.id}`)).status, 200);
      assert.equal(await t.runtime.services.backlog.isOverloaded(), true, 'still at the bound');

      const metrics = (await t.client(null).get('/metrics')).text;
      assert.match(metrics, new RegExp(`^payments_job_backlog ${BOUND}$`, 'm'), 'counted up to the bound');
      assert.match(metrics, new RegExp(`^payments_job_backlog_bound ${BOUND}$`, 'm'));
    });

    test('under a backlog a payment is finished before the next one is started: its callback is queued in the place of its operation', async () => {
      await t.runtime.runner.drain();
      const first = ok(await m.api.post(`${API}/mit`, mitBody(subscriptionId, cb)), 'first MIT').transaction.id as string;
      await t.runtime.clock.advance(2);
      const second = ok(await m.api.post(`${API}/mit`, mitBody(subscriptionId, cb)), 'second MIT').transaction.id as string;
      await t.runtime.clock.advance(2);
      // One job at a time, oldest first: the order the workers would take them in under a backlog.
      const ran: string[] = [];
      const definitions = t.runtime.services.jobs
        .filter((d) => d.kind === DRIVE_JOB || d.kind === CALLBACK_JOB)
        .map((d) => ({
          ...d,
          handle: async (payload: never, ctx: Parameters<typeof d.handle>[1]) => {
            ran.push(d.kind);
            await d.handle(payload, ctx);
          },
        }));
      const runner = new JobRunner({ store: t.runtime.store.jobs, clock: t.runtime.clock, logger: createLogger('silent'), definitions, concurrency: 1 });
      await runner.drain();
      // The first MIT's callback (queued when its answer came, 4 s after it was accepted) goes
      // before the second MIT's drive (accepted 2 s after the first).
      assert.deepEqual(ran, [DRIVE_JOB, CALLBACK_JOB, DRIVE_JOB, CALLBACK_JOB]);
      for (const id of [first, second]) {
        const tx = ok(await m.api.get(`${API}/transactions/${id}`), 'read').transaction;
        const [notification] = ok(await m.api.get(`${API}/transactions/${id}/notifications`), 'notifications').notifications;
        assert.equal(notification.state, 'DELIVERED', `${id} ${tx.state}`);
      }
    });
  });
}
