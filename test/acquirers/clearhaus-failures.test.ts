/**
 * Clearhaus failing in every scripted way (test/support/clearhaus-fake.ts `script`, `refuse`), and
 * the at-most-once rule of INTERFACE §12.4 counted on the fake: an authorization in doubt (no
 * answer, a reset after the request was read, an HTTP 500) fails ACQUIRER_TIMEOUT and is never sent
 * again; a 50000 naming an id fails ACQUIRER_DOWN and that id is voided; a request refused before
 * it was written is sent again on the drive job's schedule; a capture, refund or credit in doubt
 * stays PROCESSING, is listed for the operator and resolved there (final state, aggregates,
 * callback); a slow answer within the timeout is simply applied.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordedRequest } from '../support/clearhaus-fake.js';
import { API, type TestMerchant } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { type CallbackReceiver, startReceiver, waitFor } from '../online/helpers.js';
import { capture, detail, eventually, refund, refusedWith, stored } from '../lifecycle/fixtures.js';
import { authorizationsOf, cardOf, type ClearhausSetup, clearhausIdOf, freshPan, startClearhaus, subscribeThroughWindow } from './clearhaus-support.js';

type Merchant = TestMerchant & { apiKey: string };

const IN_DOUBT = `${API}/partner/payments-in-doubt`;
const TIMEOUT_MS = 1500;

function ok(res: { status: number; text: string; body: any }, what: string): any {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of await availableStores()) {
  describe(`clearhaus: failures and at most once (${kind})`, () => {
    let s: ClearhausSetup;
    let m: Merchant;
    let rx: CallbackReceiver;
    before(async () => {
      s = await startClearhaus(kind, { timeoutMs: TIMEOUT_MS });
      m = await s.merchant();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await s.close();
    });

    const advance = async (seconds: number) => ok(await s.t.operator.post('/sandbox/v1/clock', { advanceSeconds: seconds }), 'clock');
    /** Minutes pass on the service clock and the job runner has its chance: nothing may be sent again. */
    const letJobsRun = async () => {
      await advance(300);
      await sleep(250);
      await advance(300);
      await sleep(250);
    };

    const motoRequest = (pan: string, amount = 1000, extra: Record<string, unknown> = {}) =>
      m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount, currency: 'DKK', reference: 'failures', instantCapture: 'OFF', ...extra },
        card: cardOf(pan),
      });
    const moto = async (pan: string, amount = 1000, extra: Record<string, unknown> = {}) =>
      ok(await motoRequest(pan, amount, extra), 'POST /moto').transaction as { id: string; state: string; errorCode: string | null; paymentMethodId: string };

    const motoRequests = (pan: string) => s.fake.requestsTo('/authorizations').filter((r) => r.form['moto[pan]'] === pan);
    const onPan = (pan: string) => (form: Record<string, string>) => form['moto[pan]'] === pan || form['card[pan]'] === pan;
    const inDoubtList = async () => ok(await s.t.operator.get(`${IN_DOUBT}?accountId=${m.accountId}`), 'GET payments-in-doubt').items as any[];
    const resolve = (operationId: string, outcome: 'SUCCEEDED' | 'FAILED') => s.t.operator.post(`${IN_DOUBT}/${operationId}/resolve`, { outcome });

    for (const action of ['hang', 'reset-after-read', 'http-500'] as const) {
      test(`authorization ${action}: FAILED ACQUIRER_TIMEOUT, one request whatever the jobs do later, nothing to void`, async () => {
        const pan = freshPan();
        const script = s.fake.script({ method: 'POST', path: '/authorizations', when: onPan(pan), action });
        const started = Date.now();
        const tx = await moto(pan);
        assert.equal(script.hits, 1);
        assert.equal(tx.state, 'FAILED', JSON.stringify(tx));
        assert.equal(tx.errorCode, 'ACQUIRER_TIMEOUT');
        if (action === 'hang') assert.ok(Date.now() - started >= TIMEOUT_MS - 100, 'waited for the timeout');
        await letJobsRun();
        assert.equal(motoRequests(pan).length, 1, 'never sent again');
        const d = await detail(m, tx.id);
        assert.equal(d.transaction.state, 'FAILED');
        const request = await s.t.runtime.store.acquirerRequests.find(d.operations[0]!.id);
        assert.ok(request?.inDoubtAt, 'recorded in doubt');
        assert.equal(request.resolution, 'FAILED', 'settled as failed by rule');
        assert.equal(
          (await inDoubtList()).some((i) => i.transactionId === tx.id),
          false,
          'an authorization is not for the operator',
        );
        assert.equal(s.fake.requestsTo(/\/voids$/).filter((r) => r.path.includes(String(motoRequests(pan)[0]!.reply?.body?.id))).length, 0, 'no id named');
      });
    }

    test('authorization status-50000 with an id: FAILED ACQUIRER_DOWN, and that id is voided at Clearhaus', async () => {
      const pan = freshPan();
      s.fake.script({ method: 'POST', path: '/authorizations', when: onPan(pan), action: 'status-50000' });
      const tx = await moto(pan);
      assert.equal(tx.state, 'FAILED');
      assert.equal(tx.errorCode, 'ACQUIRER_DOWN');
      const d = await detail(m, tx.id);
      assert.equal((d.transaction.externalStatusCodes as { acquirer: string }).acquirer, '50000');
      const [auth] = motoRequests(pan);
      const id = auth!.reply?.body?.id as string;
      assert.ok(id, 'Clearhaus named an id');
      const voids = await eventually(async () => {
        const found = s.fake.requestsTo(`/authorizations/${id}/voids`);
        return found.length > 0 ? found : null;
      }, 'the void of the named authorization');
      assert.equal(voids.length, 1);
      assert.equal(voids[0]!.signature, 'valid');
      assert.equal(s.fake.amounts(id).voided, true, 'released at Clearhaus');
      await letJobsRun();
      assert.equal(motoRequests(pan).length, 1, 'the authorization never again');
      assert.equal(s.fake.requestsTo(`/authorizations/${id}/voids`).length, 1, 'one void');
    });

    test('connection refused: nothing was written, so the payment waits and is sent on the drive schedule once Clearhaus is back', async () => {
      const pan = freshPan();
      await s.fake.refuse();
      let tx;
      try {
        tx = await moto(pan);
        assert.equal(tx.state, 'PROCESSING', 'not sent: not failed either');
        assert.equal(tx.errorCode, null);
        await advance(6);
        await sleep(300);
        assert.equal((await detail(m, tx.id)).transaction.state, 'PROCESSING', 'still refused: still waiting');
      } finally {
        await s.fake.resume();
      }
      assert.equal(motoRequests(pan).length, 0, 'nothing reached Clearhaus while it refused');
      const final = await waitFor(
        async () => {
          const d = await detail(m, tx.id);
          if (d.transaction.state !== 'PROCESSING') return d;
          await advance(10);
          return null;
        },
        'the drive job sends it',
        15_000,
      );
      assert.equal(final.transaction.state, 'SUCCESS', JSON.stringify(final.transaction));
      assert.equal(final.aggregates.authorized, 1000);
      await letJobsRun();
      assert.equal(motoRequests(pan).length, 1, 'exactly one request reached Clearhaus');
      assert.equal(motoRequests(pan)[0]!.form.reference, tx.id);
    });

    for (const action of ['hang', 'http-500'] as const) {
      test(`capture ${action} (carried out at Clearhaus): PROCESSING in doubt, listed, one request; resolved SUCCEEDED → the aggregates match Clearhaus`, async () => {
        const tx = await moto(freshPan(), 1000);
        const authId = clearhausIdOf(s.fake, tx.id);
        s.fake.script({ method: 'POST', path: `/authorizations/${authId}/captures`, action, applied: true });
        const body = refusedWith(await capture(m, tx.id, 300), 'ACQUIRER_TIMEOUT');
        assert.equal(body.state, 'PROCESSING');
        assert.match(body.errorCode.message, /in doubt/);
        assert.equal(s.fake.amounts(authId).captured, 300, 'Clearhaus did capture');
        await letJobsRun();
        assert.equal(s.fake.requestsTo(`/authorizations/${authId}/captures`).length, 1, 'never sent twice');
        assert.equal((await stored(s.t, tx.id)).pending, 300, 'the amount stays reserved');
        const d = await detail(m, tx.id);
        assert.equal(d.operations.find((o) => o.id === body.operationId)?.state, 'PROCESSING');
        assert.equal(d.aggregates.captured, 0);

        const item = (await inDoubtList()).find((i) => i.operationId === body.operationId);
        assert.ok(item, 'listed for the operator');
        assert.deepEqual([item.acquirer, item.call, item.amount, item.currency, item.transactionId], ['clearhaus', 'capture', 300, 'DKK', tx.id]);
        const resolved = ok(await resolve(body.operationId, 'SUCCEEDED'), 'resolve');
        assert.equal(resolved.state, 'SUCCESS');
        const after = await detail(m, tx.id);
        assert.equal(after.aggregates.captured, s.fake.amounts(authId).captured, 'our books match Clearhaus');
        assert.equal((await stored(s.t, tx.id)).pending, 0);
        assert.equal(
          (await inDoubtList()).some((i) => i.operationId === body.operationId),
          false,
        );
        assert.equal((await resolve(body.operationId, 'FAILED')).status, 404, 'resolved once');
        // The rest captures normally.
        assert.equal((await capture(m, tx.id, 700)).body.success, true);
        assert.deepEqual([s.fake.amounts(authId).captured, (await detail(m, tx.id)).aggregates.captured], [1000, 1000]);
      });
    }

    test('capture http-500 that did not happen at Clearhaus: resolved FAILED releases the reservation; the whole amount is capturable', async () => {
      const tx = await moto(freshPan(), 1000);
      const authId = clearhausIdOf(s.fake, tx.id);
      s.fake.script({ method: 'POST', path: `/authorizations/${authId}/captures`, action: 'http-500', applied: false });
      const body = refusedWith(await capture(m, tx.id, 400), 'ACQUIRER_TIMEOUT');
      assert.equal(s.fake.amounts(authId).captured, 0);
      ok(await resolve(body.operationId, 'FAILED'), 'resolve');
      assert.equal((await stored(s.t, tx.id)).pending, 0);
      assert.equal((await detail(m, tx.id)).aggregates.captured, 0);
      assert.equal((await capture(m, tx.id, 1000)).body.success, true);
      assert.equal(s.fake.amounts(authId).captured, 1000);
    });

    test('refund in doubt (not carried out): PROCESSING, listed as a refund; resolved FAILED → the reservation is released and the refund can be made', async () => {
      const tx = await moto(freshPan(), 1000);
      const authId = clearhausIdOf(s.fake, tx.id);
      assert.equal((await capture(m, tx.id, 1000)).body.success, true);
      s.fake.script({ method: 'POST', path: `/authorizations/${authId}/refunds`, action: 'hang', applied: false });
      const res = await refund(m, tx.id, 600);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.success, false, res.text);
      const op = res.body.operations?.[0] ?? res.body;
      assert.equal(op.state, 'PROCESSING', res.text);
      assert.equal((await stored(s.t, tx.id)).pendingRefund, 600, 'held');
      await letJobsRun();
      assert.equal(s.fake.requestsTo(`/authorizations/${authId}/refunds`).length, 1);
      const item = (await inDoubtList()).find((i) => i.transactionId === tx.id);
      assert.ok(item);
      assert.deepEqual([item.call, item.amount], ['refund', 600]);
      ok(await resolve(item.operationId, 'FAILED'), 'resolve');
      assert.equal((await stored(s.t, tx.id)).pendingRefund, 0, 'released');
      assert.equal((await detail(m, tx.id)).aggregates.refunded, 0);
      assert.equal(s.fake.amounts(authId).refunded, 0);
      assert.equal((await refund(m, tx.id, 1000)).body.success, true, 'the whole capture is refundable again');
      assert.deepEqual([s.fake.amounts(authId).refunded, (await detail(m, tx.id)).aggregates.refunded], [1000, 1000]);
    });

    test('payout (credit) in doubt: the transaction stays unfinished and listed; resolved SUCCEEDED → SUCCESS with its callback', async () => {
      const pan = freshPan();
      const paymentMethodId = (await moto(pan, 500, { customerId: 'cust-credit' })).paymentMethodId;
      s.fake.script({ method: 'POST', path: '/credits', when: (form) => form['card[pan]'] === pan, action: 'hang' });
      const path = rx.newPath('payout');
      const queued = ok(
        await m.api.post(`${API}/payout`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 750,
          currency: 'DKK',
          paymentMethodId,
          notificationUrl: rx.url(path),
        }),
        'POST /payout',
      ).transaction;
      const item = await eventually(
        async () => (await inDoubtList()).find((i) => i.transactionId === queued.id),
        'the credit listed in doubt',
        TIMEOUT_MS + 5000,
      );
      assert.deepEqual([item.call, item.amount, item.acquirer], ['payout', 750, 'clearhaus']);
      await letJobsRun();
      const credits = () => s.fake.requestsTo('/credits').filter((r: RecordedRequest) => r.form.reference === queued.id);
      assert.equal(credits().length, 1, 'one credit');
      assert.equal(rx.at(path).length, 0, 'no callback while in doubt');
      const pending = await detail(m, queued.id);
      assert.ok(['PENDING', 'PROCESSING'].includes(pending.transaction.state as string), 'neither succeeded nor failed');
      assert.equal(pending.operations[0]?.state, 'PROCESSING');
      assert.equal(pending.aggregates.paidOut, 0);

      const resolved = ok(await resolve(item.operationId, 'SUCCEEDED'), 'resolve');
      assert.deepEqual([resolved.state, resolved.transactionState], ['SUCCESS', 'SUCCESS']);
      const hit = await waitFor(() => rx.at(path)[0], 'the payout callback');
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.equal(hit.body.aggregates.paidOut, 750);
      assert.equal((await detail(m, queued.id)).aggregates.paidOut, 750);
    });

    test('an asynchronous payout whose credit is in doubt reads PROCESSING (its request went out), not PENDING', async () => {
      const pan = freshPan();
      const paymentMethodId = (await moto(pan, 500, { customerId: 'cust-credit-state' })).paymentMethodId;
      s.fake.script({ method: 'POST', path: '/credits', when: (form) => form['card[pan]'] === pan, action: 'http-500', applied: true });
      const queued = ok(
        await m.api.post(`${API}/payout`, {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 450,
          currency: 'DKK',
          paymentMethodId,
          notificationUrl: rx.url(rx.newPath('payout-state')),
        }),
        'POST /payout',
      ).transaction;
      const item = await eventually(async () => (await inDoubtList()).find((i) => i.transactionId === queued.id), 'the credit listed in doubt');
      try {
        assert.equal((await detail(m, queued.id)).transaction.state, 'PROCESSING', 'the credit went out: the payout is processing, not pending');
      } finally {
        ok(await resolve(item.operationId, 'SUCCEEDED'), 'resolve');
      }
    });

    test('payout-sync in doubt: answered PROCESSING; resolved FAILED → FAILED, nothing paid out', async () => {
      const pan = freshPan();
      const paymentMethodId = (await moto(pan, 500, { customerId: 'cust-credit-sync' })).paymentMethodId;
      s.fake.script({ method: 'POST', path: '/credits', when: (form) => form['card[pan]'] === pan, action: 'http-500' });
      const res = ok(
        await m.api.post(`${API}/payout-sync`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 640, currency: 'DKK', paymentMethodId }),
        'POST /payout-sync',
      );
      assert.equal(res.transaction.state, 'PROCESSING', JSON.stringify(res.transaction));
      const item = (await inDoubtList()).find((i) => i.transactionId === res.transaction.id);
      assert.ok(item, 'listed');
      await letJobsRun();
      assert.equal(s.fake.requestsTo('/credits').filter((r) => r.form.reference === res.transaction.id).length, 1);
      const resolved = ok(await resolve(item.operationId, 'FAILED'), 'resolve');
      assert.deepEqual([resolved.state, resolved.transactionState], ['FAILED', 'FAILED']);
      const d = await detail(m, res.transaction.id);
      assert.equal(d.transaction.state, 'FAILED');
      assert.equal(d.transaction.errorCode, 'ACQUIRER_TIMEOUT');
      assert.equal(d.aggregates.paidOut, 0);
      assert.equal(
        (await inDoubtList()).some((i) => i.transactionId === res.transaction.id),
        false,
      );
    });

    test('slow answers within the timeout are simply applied (authorization, capture, refund, void)', async () => {
      const pan = freshPan();
      s.fake.script({ method: 'POST', path: '/authorizations', when: onPan(pan), action: { slow: 500 } });
      const tx = await moto(pan, 900);
      assert.equal(tx.state, 'SUCCESS', JSON.stringify(tx));
      const authId = clearhausIdOf(s.fake, tx.id);
      s.fake.script({ method: 'POST', path: `/authorizations/${authId}/captures`, action: { slow: 400 } });
      assert.equal((await capture(m, tx.id, 900)).body.success, true);
      s.fake.script({ method: 'POST', path: `/authorizations/${authId}/refunds`, action: { slow: 400 } });
      assert.equal((await refund(m, tx.id, 100)).body.success, true);
      const d = await detail(m, tx.id);
      const fake = s.fake.amounts(authId);
      assert.deepEqual([d.aggregates.captured, d.aggregates.refunded], [fake.captured, fake.refunded]);
      assert.deepEqual([fake.captured, fake.refunded], [900, 100]);

      const other = await moto(freshPan(), 300);
      const otherId = clearhausIdOf(s.fake, other.id);
      s.fake.script({ method: 'POST', path: `/authorizations/${otherId}/voids`, action: { slow: 400 } });
      assert.equal((await m.api.post(`${API}/transactions/${other.id}/void`, { amount: -1 })).body.success, true);
      assert.equal(s.fake.amounts(otherId).voided, true);
      assert.equal(s.fake.requestsTo(`/authorizations/${otherId}/voids`).length, 1);
    });

    test('a MIT whose authorization hangs: its callback reports FAILED ACQUIRER_TIMEOUT, after one request', async () => {
      const pan = freshPan();
      const session = await subscribeThroughWindow(s.t, m, pan, 'cust-hang', { type: 'UNSCHEDULED' });

      s.fake.script({
        method: 'POST',
        path: '/authorizations',
        when: (f) => f['card[pan]'] === pan && f['series[previous][id]'] !== undefined,
        action: 'hang',
      });
      const path = rx.newPath('mit-hang');
      const tx = ok(
        await m.api.post(`${API}/mit`, {
          subscriptionId: session.subscriptionId,
          amount: 700,
          currency: 'DKK',
          reference: 'hang',
          notificationUrl: rx.url(path),
        }),
        'POST /mit',
      ).transaction;
      const hit = await waitFor(() => rx.at(path)[0], 'the MIT callback', TIMEOUT_MS + 10_000);
      assert.deepEqual([hit.body.transaction.state, hit.body.transaction.errorCode], ['FAILED', 'ACQUIRER_TIMEOUT']);
      await letJobsRun();
      assert.equal(authorizationsOf(s.fake, tx.id).length, 1, 'one request');
      assert.equal(rx.at(path).length, 1, 'one callback');
      const sub = ok(await m.api.get(`${API}/subscriptions/${session.subscriptionId}`), 'GET subscription').subscription;
      assert.equal(sub.state, 'ACTIVE', 'a timeout does not disable the subscription');
    });

    test('a silent Clearhaus does not hold up the sandbox merchants', async () => {
      const pan = freshPan();
      s.fake.script({ method: 'POST', path: '/authorizations', when: onPan(pan), action: 'hang' });
      const plain = await s.t.createMerchant();
      const slow = moto(pan);
      await sleep(100);
      const started = Date.now();
      const res = await plain.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: plain.onlinePointOfSaleId, amount: 500, currency: 'DKK', reference: 'sandbox', instantCapture: 'OFF' },
        card: cardOf('4111111111111111'),
      });
      const took = Date.now() - started;
      assert.equal(res.body.transaction.state, 'SUCCESS', res.text);
      assert.ok(took < TIMEOUT_MS - 200, `answered in ${took} ms while Clearhaus was silent`);
      assert.equal((await slow).errorCode, 'ACQUIRER_TIMEOUT');
    });
  });
}
