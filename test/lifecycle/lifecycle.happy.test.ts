import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { capture, detail, eventually, ok, refund, refusedWith, renew, seedAuthorized, stored, voidTx } from './fixtures.js';
import { storedEvents } from '../support/events.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const kind of await availableStores()) {
  describe(`lifecycle happy paths (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      m = await t.createMerchant();
    });
    after(() => t.close());

    // The lifecycle events of one transaction (other modules append their own, e.g. transaction.success.v1).
    const LIFECYCLE_EVENTS = ['transaction.captured.v1', 'transaction.refunded.v1', 'transaction.voided.v1', 'transaction.renewed.v1'];
    const eventsOf = async (transactionId: string) =>
      (await storedEvents(t.runtime.store)).filter(
        (e) => LIFECYCLE_EVENTS.includes(e.event) && (e.data as { transaction?: { id: string } }).transaction?.id === transactionId,
      );

    test('partial captures: 300, then 800 refused (AMOUNT_EXCEEDS_REMAINING), then the remaining 700', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const first = ok(await capture(m, tx.id, 300));
      assert.match(first.operationId, UUID);
      assert.equal(first.state, 'SUCCESS');
      assert.equal(first.errorCode, null);
      const over = refusedWith(await capture(m, tx.id, 800), 'AMOUNT_EXCEEDS_REMAINING');
      assert.equal(over.operationId, null, 'nothing recorded for a refusal');
      assert.equal(over.state, 'FAILED', 'a refused operation is FAILED (INTERFACE §11.1)');
      assert.match(over.errorCode.message, /700 available/);
      const second = ok(await capture(m, tx.id, 700));

      const d = await detail(m, tx.id);
      assert.deepEqual(d.aggregates, { authorized: 1000, captured: 1000, refunded: 0, voided: 0, remaining: 0, paidOut: 0 });
      const authorization = d.operations.find((o) => o.type === 'AUTHORIZATION')!;
      const captures = d.operations.filter((o) => o.type === 'CAPTURE');
      assert.deepEqual(
        captures.map((o) => [o.id, o.amount, o.state]),
        [
          [first.operationId, 300, 'SUCCESS'],
          [second.operationId, 700, 'SUCCESS'],
        ],
      );
      for (const c of captures) {
        assert.equal(c.referenceTransactionOperationId, authorization.id, 'a capture refers to the authorization');
        assert.ok(c.finalizedAt);
      }
      assert.deepEqual({ ...(await stored(t, tx.id)) }, { authorized: 1000, captured: 1000, refunded: 0, voided: 0, pending: 0, pendingRefund: 0 });

      const events = await eventsOf(tx.id);
      assert.deepEqual(
        events.map((e) => e.event),
        ['transaction.captured.v1', 'transaction.captured.v1'],
      );
      assert.equal(events[0]!.accountId, m.accountId);
      const data = events[1]!.data as { aggregates: { captured: number }; operation: { id: string; state: string } };
      assert.equal(data.operation.id, second.operationId);
      assert.equal(data.operation.state, 'SUCCESS');
      assert.equal(data.aggregates.captured, 1000, 'the event carries the aggregates of its commit');
    });

    test('refund across two captures: one operation per capture, newest capture first, each referring to its capture', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const c1 = ok(await capture(m, tx.id, 300)).operationId;
      const c2 = ok(await capture(m, tx.id, 700)).operationId;

      const partial = ok(await refund(m, tx.id, 500));
      assert.equal(partial.operations.length, 1, 'the newest capture covers 500 alone');
      let d = await detail(m, tx.id);
      let refunds = d.operations.filter((o) => o.type === 'REFUND');
      assert.deepEqual(
        refunds.map((o) => [o.amount, o.referenceTransactionOperationId]),
        [[500, c2]],
      );

      const rest = ok(await refund(m, tx.id, 500));
      assert.equal(rest.operations.length, 2);
      for (const op of rest.operations) {
        assert.equal(op.success, true);
        assert.equal(op.state, 'SUCCESS');
        assert.match(op.operationId, UUID);
      }
      d = await detail(m, tx.id);
      refunds = d.operations.filter((o) => o.type === 'REFUND');
      const byId = new Map(refunds.map((o) => [o.id, o]));
      assert.deepEqual(
        rest.operations.map((o: { operationId: string }) => [byId.get(o.operationId)!.amount, byId.get(o.operationId)!.referenceTransactionOperationId]),
        [
          [200, c2],
          [300, c1],
        ],
      );
      assert.equal(d.aggregates.refunded, 1000);
      assert.equal(d.aggregates.captured, 1000);

      refusedWith(await refund(m, tx.id, 1), 'AMOUNT_EXCEEDS_REMAINING', 'refund beyond the captured amount');
      const events = (await eventsOf(tx.id)).map((e) => e.event);
      assert.deepEqual(events.filter((e) => e === 'transaction.refunded.v1').length, 3);
    });

    test('void part of the authorization, capture the rest; void -1 releases the whole remaining authorization', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const v = ok(await voidTx(m, tx.id, 400));
      assert.equal(v.state, 'SUCCESS');
      refusedWith(await capture(m, tx.id, 700), 'AMOUNT_EXCEEDS_REMAINING');
      ok(await capture(m, tx.id, 600));
      let d = await detail(m, tx.id);
      assert.deepEqual(d.aggregates, { authorized: 1000, captured: 600, refunded: 0, voided: 400, remaining: 0, paidOut: 0 });

      const fresh = await seedAuthorized(t, m, { amount: 900 });
      ok(await capture(m, fresh.id, 250));
      const whole = ok(await voidTx(m, fresh.id, -1));
      d = await detail(m, fresh.id);
      assert.deepEqual(d.aggregates, { authorized: 900, captured: 250, refunded: 0, voided: 650, remaining: 0, paidOut: 0 });
      assert.equal(d.operations.find((o) => o.id === whole.operationId)!.amount, 650, 'the VOID operation records the amount released');
      assert.deepEqual(
        (await eventsOf(fresh.id)).map((e) => e.event),
        ['transaction.captured.v1', 'transaction.voided.v1'],
      );
    });

    test('capture with voidRemaining voids the uncaptured rest as a VOID operation right after the capture', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const c = ok(await capture(m, tx.id, 600, { voidRemaining: true }));
      const d = await detail(m, tx.id);
      assert.deepEqual(d.aggregates, { authorized: 1000, captured: 600, refunded: 0, voided: 400, remaining: 0, paidOut: 0 });
      const voids = d.operations.filter((o) => o.type === 'VOID');
      assert.deepEqual(
        voids.map((o) => [o.amount, o.state]),
        [[400, 'SUCCESS']],
      );
      assert.equal(d.operations.find((o) => o.id === c.operationId)!.type, 'CAPTURE');
      assert.deepEqual(
        (await eventsOf(tx.id)).map((e) => e.event),
        ['transaction.captured.v1', 'transaction.voided.v1'],
      );
      refusedWith(await voidTx(m, tx.id, -1), 'INVALID_STATE', 'void after voidRemaining');

      // A full capture with voidRemaining has no rest: no VOID operation.
      const full = await seedAuthorized(t, m, { amount: 500 });
      ok(await capture(m, full.id, 500, { voidRemaining: true }));
      assert.equal((await detail(m, full.id)).operations.filter((o) => o.type === 'VOID').length, 0);
    });

    test('renew of a KLARNA and a partly captured VIABILL authorization → SUCCESS, a RENEW operation of the uncaptured balance', async () => {
      const klarna = await seedAuthorized(t, m, { amount: 1000, paymentMethodType: 'KLARNA' });
      const r = ok(await renew(m, klarna.id));
      assert.equal(r.state, 'SUCCESS');
      assert.match(r.operationId, UUID);
      const viabill = await seedAuthorized(t, m, { amount: 800, paymentMethodType: 'VIABILL' });
      ok(await capture(m, viabill.id, 300));
      const r2 = ok(await renew(m, viabill.id));
      const d = await detail(m, viabill.id);
      const op = d.operations.find((o) => o.id === r2.operationId)!;
      assert.deepEqual([op.type, op.state, op.amount], ['RENEW', 'SUCCESS', 500]);
      assert.equal(d.aggregates.remaining, 500, 'renew moves no money');
      assert.deepEqual(
        (await eventsOf(klarna.id)).map((e) => e.event),
        ['transaction.renewed.v1'],
      );
      const calls = acquirer.callsOf(klarna.id, 'renew');
      assert.deepEqual(
        calls.map((c) => [c.operationId, c.attempt, c.amount]),
        [[r.operationId, 1, 1000]],
      );
    });

    test('a pending renew answers PROCESSING and is finalized later by the resolver job', async () => {
      const tx = await seedAuthorized(t, m, { amount: 700, paymentMethodType: 'KLARNA' });
      acquirer.script(tx.id, 'renew', ['pending']);
      const r = ok(await renew(m, tx.id));
      assert.equal(r.state, 'PROCESSING');
      assert.equal(r.errorCode, null);
      let op = (await detail(m, tx.id)).operations.find((o) => o.id === r.operationId)!;
      assert.equal(op.state, 'PROCESSING');
      assert.equal(op.finalizedAt, null);
      assert.equal((await eventsOf(tx.id)).length, 0, 'no event before the renew succeeded');

      const moved = await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 31 });
      assert.equal(moved.status, 200, moved.text);
      op = await eventually(async () => {
        const found = (await detail(m, tx.id)).operations.find((o) => o.id === r.operationId)!;
        return found.state === 'PROCESSING' ? null : found;
      }, 'the resolver to finalize the renew');
      assert.equal(op.state, 'SUCCESS');
      assert.ok(op.finalizedAt);
      assert.deepEqual(
        acquirer.callsOf(tx.id, 'renew').map((c) => [c.operationId, c.attempt]),
        [
          [r.operationId, 1],
          [r.operationId, 2],
        ],
      );
      assert.deepEqual(
        (await eventsOf(tx.id)).map((e) => e.event),
        ['transaction.renewed.v1'],
      );
    });

    test('the operations feed lists the lifecycle operations once final', async () => {
      const tx = await seedAuthorized(t, m, { amount: 400 });
      const c = ok(await capture(m, tx.id, 400));
      const feed = await m.api.get(`${API}/transactions/operations?perPage=500`);
      assert.equal(feed.status, 200, feed.text);
      const listed = feed.body.items.find((o: { id: string }) => o.id === c.operationId);
      assert.equal(listed?.type, 'CAPTURE');
      assert.equal(listed?.transactionId, tx.id);
    });

    test('the operations feed over HTTP with a repeated pointOfSaleId: operations of both points of sale, none of a third, only final ones', async () => {
      const newPointOfSale = async (name: string) => {
        const res = await m.api.post(`${API}/management/point-of-sales`, { name, domain: 'localhost', webhookAuthentication: 'Bearer feed', type: 'ONLINE' });
        assert.equal(res.status, 200, res.text);
        return res.body.pointOfSale.id as string;
      };
      const [posA, posB, posC] = [await newPointOfSale('Feed A'), await newPointOfSale('Feed B'), await newPointOfSale('Feed C')];
      const moto = async (pointOfSaleId: string, amount: number) => {
        const res = await m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId, amount, currency: 'DKK', reference: 'ops-feed', instantCapture: 'OFF' },
          card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.transaction.state, 'SUCCESS');
        return res.body.transaction.id as string;
      };
      const [txA, txB, txC] = [await moto(posA, 100), await moto(posB, 200), await moto(posC, 300)];
      const capturedA = ok(await capture(m, txA, 100));
      ok(await capture(m, txC, 300));
      // B's capture waits for the acquirer: PROCESSING, not final, so not in the feed.
      acquirer.script(txB, 'capture', ['pending']);
      const pendingB = ok(await capture(m, txB, 200));
      assert.equal(pendingB.state, 'PROCESSING');

      await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(t.runtime.app.server.address() as AddressInfo).port}${API}`;
      const feed = async (query: string) => {
        const res = await fetch(`${base}/transactions/operations?${query}`, { headers: { authorization: `Bearer ${m.token}` } });
        assert.equal(res.status, 200, query);
        return (await res.json()) as {
          total: number;
          items: Array<{ id: string; transactionId: string; type: string; state: string; finalizedAt: string | null }>;
        };
      };
      const both = await feed(`pointOfSaleId=${posA}&pointOfSaleId=${posB}&perPage=500`);
      const summary = (items: typeof both.items) =>
        items
          .map((o) => `${o.transactionId === txA ? 'A' : o.transactionId === txB ? 'B' : o.transactionId === txC ? 'C' : o.transactionId}:${o.type}:${o.state}`)
          .sort();
      assert.deepEqual(summary(both.items), ['A:AUTHORIZATION:SUCCESS', 'A:CAPTURE:SUCCESS', 'B:AUTHORIZATION:SUCCESS']);
      assert.equal(both.total, 3);
      assert.ok(both.items.some((o) => o.id === capturedA.operationId));
      assert.ok(!both.items.some((o) => o.id === pendingB.operationId), 'the PROCESSING capture is not listed');
      assert.ok(both.items.every((o) => o.finalizedAt !== null));

      assert.deepEqual(summary((await feed(`pointOfSaleId=${posC}&perPage=500`)).items), ['C:AUTHORIZATION:SUCCESS', 'C:CAPTURE:SUCCESS']);
      const all = await feed('perPage=500');
      assert.ok(!all.items.some((o) => o.id === pendingB.operationId), 'nor without a filter');
      assert.ok(
        all.items.every((o) => o.state === 'SUCCESS' || o.state === 'FAILED'),
        'every listed operation is final',
      );
    });
  });
}
