/**
 * Settlement runs through the public API on every store: transfers per merchant and currency,
 * per-operation settlement transactions whose decimal amounts add up to the cent, refunds and
 * payouts negative, the transfer-ready event, cursor pagination.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TRANSFER_READY_EVENT } from '../../src/modules/settlements/settlement.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { authorize, capture, DECIMAL_2, FEE_TYPES, minor, refund, runSettlements, terminalPayment, walk } from './support.js';
import { storedEvents } from '../support/events.js';

const TRANSFER_KEYS = [
  'id',
  'acquirer',
  'settlementName',
  'settlementIds',
  'postingDate',
  'netAmount',
  'currency',
  'acquirerReference',
  'adjustments',
  'adjustmentSums',
  'createdAt',
].sort();
const SETTLEMENT_TX_KEYS = [
  'id',
  'settlementTransferId',
  'transactionId',
  'agreementId',
  'merchantReference',
  'acquirerReference',
  'postingDate',
  'settlementNetAmount',
  'settlementCurrency',
  'adjustments',
  'createdAt',
].sort();
const POSTING_DATE = '2031-03-14';

for (const kind of await availableStores()) {
  describe(`settlements happy path (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    let transfers: any[];
    // transactionId → signed gross amounts in minor units of what must be settled
    const expected = new Map<string, number[]>();
    const ids: Record<string, string> = {};
    const expect = (id: string, ...amounts: number[]) => expected.set(id, [...(expected.get(id) ?? []), ...amounts]);

    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
      ids.single = await authorize(a, 1000, 'DKK', 'order-1');
      await capture(a, ids.single, 1000);
      expect(ids.single, 1000);
      ids.partial = await authorize(a, 2000);
      await capture(a, ids.partial, 500);
      await capture(a, ids.partial, 700);
      await refund(a, ids.partial, 300);
      expect(ids.partial, 500, 700, -300);
      ids.refunded = await authorize(a, 1500);
      await capture(a, ids.refunded, 1500);
      await refund(a, ids.refunded, 1500);
      expect(ids.refunded, 1500, -1500);
      ids.uncaptured = await authorize(a, 800);
      ids.sale = await terminalPayment(t, a, 2500);
      expect(ids.sale, 2500);
      ids.payout = await terminalPayment(t, a, 640, 'PAYOUT');
      expect(ids.payout, -640);
      ids.euro = await authorize(a, 1999, 'EUR');
      await capture(a, ids.euro, 1999);
      ids.other = await authorize(b, 333);
      await capture(b, ids.other, 333);
      transfers = await runSettlements(t, POSTING_DATE);
    });
    after(() => t?.close());

    const transferOf = (m: TestMerchant, currency: string) => {
      const found = transfers.filter(
        (tr) => tr.settlementIds.some((s: string) => s.endsWith(m.accountId.replaceAll('-', '').slice(0, 12))) && tr.currency === currency,
      );
      assert.equal(found.length, 1, `one ${currency} transfer for the merchant in ${JSON.stringify(transfers)}`);
      return found[0];
    };
    const itemsOf = (m: TestMerchant, transferId: string, perPage = 500) => walk(m.api, `/settlements/transfers/${transferId}/transactions`, perPage);

    test('one transfer per merchant and currency, with the record of INTERFACE §7 and decimal amounts', async () => {
      assert.equal(transfers.length, 3);
      for (const tr of transfers) {
        assert.deepEqual(Object.keys(tr).sort(), TRANSFER_KEYS);
        assert.equal(tr.postingDate, POSTING_DATE);
        assert.match(tr.netAmount, DECIMAL_2);
        assert.ok(Array.isArray(tr.adjustments));
        assert.deepEqual(
          tr.adjustmentSums.map((s: any) => s.type),
          FEE_TYPES,
        );
      }
      transferOf(a, 'DKK');
      transferOf(a, 'EUR');
      transferOf(b, 'DKK');
      const got = await a.api.get(`${API}/settlements/transfers/${transferOf(a, 'DKK').id}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, { settlementTransfer: transferOf(a, 'DKK') });
    });

    test('one settlement transaction per settled operation; gross = the operation, refunds and payouts negative', async () => {
      const items = await itemsOf(a, transferOf(a, 'DKK').id);
      const gross = new Map<string, number[]>();
      for (const { settlementTransaction: st } of items) {
        const fees = st.adjustments.reduce((s: bigint, adj: any) => s + minor(adj.amount), 0n);
        gross.set(st.transactionId, [...(gross.get(st.transactionId) ?? []), Number(minor(st.settlementNetAmount) - fees)]);
      }
      const sorted = (m: Map<string, number[]>) => new Map([...m].map(([k, v]) => [k, [...v].sort((x, y) => x - y)]));
      assert.deepEqual(sorted(gross), sorted(expected));
      assert.ok(!gross.has(ids.uncaptured!), 'an authorization that was never captured is not settled');
      assert.ok(gross.get(ids.partial!)!.includes(-300) && gross.get(ids.payout!)![0]! === -640);
    });

    test('sums add up to the cent: row net = gross + fees, transfer net = Σ nets + transfer adjustments, adjustmentSums = Σ fees', async () => {
      for (const [m, currency] of [
        [a, 'DKK'],
        [a, 'EUR'],
        [b, 'DKK'],
      ] as const) {
        const tr = transferOf(m, currency);
        const items = await itemsOf(m, tr.id);
        let nets = 0n;
        const perType = new Map<string, bigint>(FEE_TYPES.map((f) => [f, 0n]));
        for (const { settlementTransaction: st } of items) {
          assert.match(st.settlementNetAmount, DECIMAL_2);
          assert.deepEqual(
            st.adjustments.map((adj: any) => adj.type),
            FEE_TYPES,
          );
          for (const adj of st.adjustments) {
            assert.match(adj.amount, DECIMAL_2);
            assert.ok(minor(adj.amount) <= 0n, `a fee is a deduction: ${adj.amount}`);
            perType.set(adj.type, perType.get(adj.type)! + minor(adj.amount));
          }
          assert.ok(minor(st.adjustments[0].amount) < 0n, 'the sandbox ACQUIRER_FEE is non-zero on every row');
          nets += minor(st.settlementNetAmount);
        }
        const transferAdjustments = tr.adjustments.reduce((s: bigint, adj: any) => s + minor(adj.amount), 0n);
        assert.equal(minor(tr.netAmount), nets + transferAdjustments, `net of the ${currency} transfer`);
        for (const sum of tr.adjustmentSums) assert.equal(minor(sum.amount), perType.get(sum.type), `adjustmentSums ${sum.type}`);
      }
    });

    test('fees are exact integer arithmetic with half-up rounding (0.95 % + 0.10, 0.20 %, 0.08 %)', async () => {
      const items = await itemsOf(a, transferOf(a, 'DKK').id);
      const row = (transactionId: string, net: string) =>
        items.find((i: any) => i.settlementTransaction.transactionId === transactionId && i.settlementTransaction.settlementNetAmount === net);
      const single = row(ids.single!, '9.77');
      assert.ok(single, 'capture of 10.00: net 9.77');
      assert.deepEqual(
        single.settlementTransaction.adjustments.map((adj: any) => [adj.type, adj.amount]),
        [
          ['ACQUIRER_FEE', '-0.20'],
          ['INTERCHANGE_FEE', '-0.02'],
          ['SCHEME_FEE', '-0.01'],
        ],
      );
      assert.ok(row(ids.partial!, '-3.14'), 'refund of 3.00: −3.00 − 0.13 − 0.01 − 0.00');
      assert.ok(row(ids.payout!, '-6.58'), 'payout of 6.40: −6.40 − 0.16 − 0.01 − 0.01');
      assert.equal(single.settlementTransaction.merchantReference, 'order-1');
      assert.equal(single.settlementTransaction.postingDate, POSTING_DATE);
      assert.equal(single.settlementTransaction.settlementCurrency, 'DKK');
    });

    test('items are exactly {settlementTransaction, transaction}; transaction is the wire record of GET /transactions/{id}', async () => {
      const tr = transferOf(a, 'DKK');
      for (const item of await itemsOf(a, tr.id)) {
        assert.deepEqual(Object.keys(item).sort(), ['settlementTransaction', 'transaction']);
        assert.deepEqual(Object.keys(item.settlementTransaction).sort(), SETTLEMENT_TX_KEYS);
        assert.equal(item.settlementTransaction.settlementTransferId, tr.id);
        assert.equal(item.transaction.id, item.settlementTransaction.transactionId);
      }
      const detail = await a.api.get(`${API}/transactions/${ids.single}`);
      const item = (await itemsOf(a, tr.id)).find((i: any) => i.transaction.id === ids.single);
      assert.deepEqual(item.transaction, detail.body.transaction);
    });

    test('a transfer-ready event per transfer, in the outbox with the transfer', async () => {
      const events = (await storedEvents(t.runtime.store)).filter((e) => e.event === TRANSFER_READY_EVENT);
      assert.deepEqual(events.map((e) => (e.data as any).settlementTransfer.id).sort(), transfers.map((tr) => tr.id).sort());
      const mine = events.find((e) => (e.data as any).settlementTransfer.id === transferOf(b, 'DKK').id)!;
      assert.equal(mine.accountId, b.accountId);
      assert.deepEqual((mine.data as any).settlementTransfer, transferOf(b, 'DKK'));
    });

    test('cursor walks with perPage=1 return every row exactly once, newest first', async () => {
      const tr = transferOf(a, 'DKK');
      const one = await itemsOf(a, tr.id, 1);
      const all = await itemsOf(a, tr.id, 500);
      const idsOf = (items: any[]) => items.map((i) => i.settlementTransaction.id);
      assert.equal(one.length, [...expected.values()].flat().length);
      assert.deepEqual(idsOf(one), idsOf(all));
      assert.equal(new Set(idsOf(one)).size, one.length);
      const keys = all.map((i: any) => `${i.settlementTransaction.createdAt}|${i.settlementTransaction.id}`);
      assert.deepEqual(keys, [...keys].sort().reverse(), 'createdAt desc, id desc');
      const listed = await walk(a.api, '/settlements/transfers', 1);
      assert.deepEqual(listed.map((i: any) => i.settlementTransfer.id).sort(), [transferOf(a, 'DKK').id, transferOf(a, 'EUR').id].sort());
    });

    test('a second run settles nothing and creates no transfer; later activity goes to a new transfer', async () => {
      assert.deepEqual(await runSettlements(t), []);
      const listed = await walk(a.api, '/settlements/transfers', 25);
      assert.equal(listed.length, 2);
      await capture(a, ids.uncaptured!, 800);
      const next = await runSettlements(t);
      assert.equal(next.length, 1);
      assert.notEqual(next[0].id, transferOf(a, 'DKK').id);
      assert.match(next[0].postingDate, /^\d{4}-\d{2}-\d{2}$/);
      const items = await itemsOf(a, next[0].id);
      assert.deepEqual(
        items.map((i: any) => i.transaction.id),
        [ids.uncaptured],
      );
      assert.equal(minor(next[0].netAmount), 800n - 18n - 2n - 1n, '8.00 − (0.076→0.08 + 0.10) − 0.016→0.02 − 0.0064→0.01');
    });
  });
}
