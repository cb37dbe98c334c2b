import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS, sleep, startReceiver, waitFor } from './helpers.js';
import { finalTransaction, LATER_MIT_DECLINED, mitBody, ok, storedCard } from './cit-flows.js';

for (const kind of await availableStores()) {
  describe(`MIT: happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let visa: Awaited<ReturnType<typeof storedCard>>;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      rx = await startReceiver();
      visa = await storedCard(t, m, 'cust-visa');
    });
    after(async () => {
      await rx.close();
      await t.close();
    });

    test('POST /mit → PENDING transaction at once; the job authorizes it (SUCCESS) and one callback follows', async () => {
      const path = rx.newPath('mit');
      const tx = ok(
        await m.api.post(`${API}/mit`, mitBody(visa.subscriptionId, rx.url(path), { amount: 1234, currency: undefined, textOnStatement: 'Monthly box' })),
        'POST /mit',
      ).transaction;
      assert.ok(['PENDING', 'PROCESSING'].includes(tx.state), tx.state);
      assert.equal(tx.amount, 1234);
      assert.equal(tx.currency, 'DKK', 'the subscription currency by default');
      assert.equal(tx.subscriptionId, visa.subscriptionId);
      assert.equal(tx.paymentMethodId, visa.paymentMethodId);
      assert.equal(tx.customerId, 'cust-visa');
      assert.equal(tx.type, 'PAYMENT');
      assert.equal(tx.scaMode, 'SKIP', 'no SCA on a merchant-initiated payment (INTERFACE §11.1)');
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.transaction.id, tx.id);
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.equal(hit.body.subscription.id, visa.subscriptionId);
      assert.equal(hit.body.session, null);
      const detail = ok(await m.api.get(`${API}/transactions/${tx.id}`), 'GET tx');
      assert.equal(detail.transaction.state, 'SUCCESS');
      assert.equal(detail.aggregates.authorized, 1234);
      assert.deepEqual(
        detail.operations.map((o: any) => [o.type, o.state]),
        [['AUTHORIZATION', 'SUCCESS']],
      );
      await sleep(300);
      assert.equal(rx.at(path).length, 1, 'exactly one callback');
    });

    test('a card that declines every later MIT → FAILED with DECLINED_BY_ISSUER_OR_SCHEME and the raw codes', async () => {
      const declining = await storedCard(t, m, 'cust-0341', LATER_MIT_DECLINED);
      const path = rx.newPath('mit');
      const tx = ok(await m.api.post(`${API}/mit`, mitBody(declining.subscriptionId, rx.url(path))), 'POST /mit').transaction;
      const final = await finalTransaction(m, tx.id);
      assert.equal(final.state, 'FAILED');
      assert.equal(final.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.equal(final.externalStatusCodes.acquirer, '05');
      const hit = await waitFor(() => rx.at(path)[0], 'MIT callback');
      assert.equal(hit.body.transaction.state, 'FAILED');
    });

    test('instantCapture VOID captures at once', async () => {
      const tx = ok(
        await m.api.post(`${API}/mit`, mitBody(visa.subscriptionId, rx.url(rx.newPath('mit')), { amount: 500, instantCapture: 'VOID' })),
        'POST /mit',
      ).transaction;
      const captured = await waitFor(async () => {
        const d = (await m.api.get(`${API}/transactions/${tx.id}`)).body;
        return d.aggregates.captured === 500 ? d : null;
      }, 'captured');
      assert.equal(captured.transaction.state, 'SUCCESS');
    });

    test('Idempotency-Key: a retry replays the same transaction; only one is created', async () => {
      const body = mitBody(visa.subscriptionId, rx.url(rx.newPath('mit')), { reference: 'idem-1' });
      const first = ok(await m.api.post(`${API}/mit`, body, { idempotencyKey: 'mit-key-1' }), 'first');
      const second = await m.api.post(`${API}/mit`, body, { idempotencyKey: 'mit-key-1' });
      assert.equal(second.status, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body.transaction.id, first.transaction.id);
      const list = ok(await m.api.get(`${API}/transactions?reference=idem-1`), 'list');
      assert.equal(list.items.length, 1);
    });

    test('batch: results in request order, invalid entries refused one by one, accepted ones charged with one callback each', async () => {
      const disabled = await storedCard(t, m, 'cust-disabled');
      assert.equal((await m.api.delete(`${API}/subscriptions/${disabled.subscriptionId}`)).status, 200);
      const paths = [0, 1, 2, 3].map(() => rx.newPath('batch'));
      const entries: Record<string, unknown>[] = paths.map((p, i) => mitBody(visa.subscriptionId, rx.url(p), { amount: 100 + i, reference: `batch-${i}` }));
      delete entries[1]!.amount;
      entries[2] = mitBody(disabled.subscriptionId, rx.url(paths[2]!), { reference: 'batch-2' });
      const body = ok(await m.api.post(`${API}/mit/batch`, { transactions: [...entries, 42] }), 'POST /mit/batch');
      const results = body.transactions;
      assert.equal(results.length, 5);
      assert.deepEqual(
        results.map((r: any) => r.reference),
        ['batch-0', 'batch-1', 'batch-2', 'batch-3', null],
      );
      assert.equal(results[0].transaction.amount, 100);
      assert.equal(results[3].transaction.amount, 103);
      assert.equal(results[0].error, null);
      assert.equal(results[1].transaction, null);
      assert.deepEqual(results[1].error.errors, { amount: ['[required]: the field is required'] });
      assert.equal(results[2].error.errorCode, 'VALIDATION_ERROR');
      assert.ok(results[2].error.errors.subscriptionId[0].startsWith('[in:ACTIVE]'));
      assert.equal(results[4].error.errorCode, 'VALIDATION_ERROR');
      for (const i of [0, 3]) {
        const hit = await waitFor(() => rx.at(paths[i]!)[0], `callback ${i}`);
        assert.equal(hit.body.transaction.id, results[i].transaction.id);
        assert.equal(hit.body.transaction.state, 'SUCCESS');
      }
      await sleep(300);
      assert.equal(rx.at(paths[1]!).length + rx.at(paths[2]!).length, 0, 'no callback for refused entries');
    });

    test('a disabled subscription keeps its existing MIT authorization capturable', async () => {
      const sub = await storedCard(t, m, 'cust-capture', CARDS.VISA);
      const tx = ok(await m.api.post(`${API}/mit`, mitBody(sub.subscriptionId, rx.url(rx.newPath('mit')), { amount: 700 })), 'POST /mit').transaction;
      assert.equal((await finalTransaction(m, tx.id)).state, 'SUCCESS');
      assert.equal((await m.api.delete(`${API}/subscriptions/${sub.subscriptionId}`)).status, 200);
      const capture = ok(await m.api.post(`${API}/transactions/${tx.id}/capture`, { amount: 700 }), 'capture');
      assert.equal(capture.success, true);
    });

    test('a disabled subscription keeps its existing MIT authorizations voidable and refundable', async () => {
      const sub = await storedCard(t, m, 'cust-void-refund', CARDS.VISA);
      const mit = async (amount: number) =>
        ok(await m.api.post(`${API}/mit`, mitBody(sub.subscriptionId, rx.url(rx.newPath('mit')), { amount })), 'POST /mit').transaction;
      const toRefund = await mit(800);
      const toVoid = await mit(600);
      assert.equal((await finalTransaction(m, toRefund.id)).state, 'SUCCESS');
      assert.equal((await finalTransaction(m, toVoid.id)).state, 'SUCCESS');
      assert.equal((await m.api.delete(`${API}/subscriptions/${sub.subscriptionId}`)).status, 200);
      assert.equal(ok(await m.api.get(`${API}/subscriptions/${sub.subscriptionId}`), 'GET').subscription.state, 'DISABLED');
      assert.equal((await m.api.post(`${API}/mit`, mitBody(sub.subscriptionId, rx.url(rx.newPath('mit'))))).status, 422, 'no new payment');

      const voided = ok(await m.api.post(`${API}/transactions/${toVoid.id}/void`, { amount: -1 }), 'void');
      assert.deepEqual([voided.success, voided.state, voided.errorCode], [true, 'SUCCESS', null]);
      const afterVoid = ok(await m.api.get(`${API}/transactions/${toVoid.id}`), 'GET tx');
      assert.deepEqual(afterVoid.aggregates, { authorized: 600, captured: 0, refunded: 0, voided: 600, remaining: 0, paidOut: 0 });

      const captured = ok(await m.api.post(`${API}/transactions/${toRefund.id}/capture`, { amount: 800 }), 'capture');
      assert.equal(captured.success, true);
      const refunded = ok(await m.api.post(`${API}/transactions/${toRefund.id}/refund`, { amount: 300 }), 'refund');
      assert.equal(refunded.success, true, refunded);
      assert.deepEqual(
        refunded.operations.map((o: any) => [o.success, o.state]),
        [[true, 'SUCCESS']],
      );
      const afterRefund = ok(await m.api.get(`${API}/transactions/${toRefund.id}`), 'GET tx');
      assert.deepEqual(afterRefund.aggregates, { authorized: 800, captured: 800, refunded: 300, voided: 0, remaining: 0, paidOut: 0 });
      assert.deepEqual(
        afterRefund.operations.map((o: any) => [o.type, o.state, o.amount]),
        [
          ['AUTHORIZATION', 'SUCCESS', 800],
          ['CAPTURE', 'SUCCESS', 800],
          ['REFUND', 'SUCCESS', 300],
        ],
      );
    });
  });
}
