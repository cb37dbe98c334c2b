// Concurrent captures and refunds over real HTTP (the server listening on a port, requests by
// fetch), so that requests interleave the way production traffic does: each request holds its
// own connection and the service sees true parallelism between reservation, acquirer call and
// finalization of different requests.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer, type ScriptedAnswer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { detail, seedAuthorized, stored, sumOf } from './fixtures.js';

interface Answer {
  status: number;
  body: { success: boolean; errorCode?: { code: string } | null; operations?: Array<{ success: boolean; errorCode: { code: string } | null }> };
}

for (const kind of await availableStores()) {
  describe(`lifecycle concurrency over HTTP (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let base: string;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      m = await t.createMerchant();
      await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.runtime.app.server.address() as AddressInfo).port}${API}`;
      acquirer.latencyMs = 5; // keeps several requests between reservation and finalization at once
    });
    after(() => t.close());

    async function post(path: string, body: unknown): Promise<Answer> {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer['body'] };
    }

    /** The invariants, and aggregates equal to the sums of SUCCESS operations, nothing left reserved. */
    async function checkInvariants(id: string) {
      const d = await detail(m, id);
      const a = d.aggregates;
      assert.ok(a.captured + a.voided <= a.authorized, `captured ${a.captured} + voided ${a.voided} ≤ authorized ${a.authorized}`);
      assert.ok(a.refunded <= a.captured, `refunded ${a.refunded} ≤ captured ${a.captured}`);
      assert.equal(a.captured, sumOf(d.operations, 'CAPTURE'), 'captured = sum of SUCCESS captures');
      assert.equal(a.refunded, sumOf(d.operations, 'REFUND'), 'refunded = sum of SUCCESS refunds');
      assert.equal(a.voided, sumOf(d.operations, 'VOID'), 'voided = sum of SUCCESS voids');
      for (const c of d.operations.filter((o) => o.type === 'CAPTURE' && o.state === 'SUCCESS')) {
        const refundedOfCapture = d.operations
          .filter((o) => o.type === 'REFUND' && o.state === 'SUCCESS' && o.referenceTransactionOperationId === c.id)
          .reduce((s, o) => s + o.amount, 0);
        assert.ok(refundedOfCapture <= c.amount, `capture ${c.id}: refunded ${refundedOfCapture} ≤ ${c.amount}`);
      }
      assert.equal(d.operations.filter((o) => o.state === 'PROCESSING').length, 0);
      const s = await stored(t, id);
      assert.equal(s.pending, 0, 'no capture reservation left');
      assert.equal(s.pendingRefund, 0, 'no refund reservation left');
      return d;
    }

    test('50 concurrent captures of 100 on 1000 → exactly 10 succeed; then 50 concurrent refunds of 30 → exactly 33', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const captures = await Promise.all(Array.from({ length: 50 }, () => post(`/transactions/${tx.id}/capture`, { amount: 100 })));
      for (const r of captures) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(captures.filter((r) => r.body.success).length, 10);
      for (const r of captures.filter((x) => !x.body.success)) assert.equal(r.body.errorCode?.code, 'AMOUNT_EXCEEDS_REMAINING');

      const refunds = await Promise.all(Array.from({ length: 50 }, () => post(`/transactions/${tx.id}/refund`, { amount: 30 })));
      for (const r of refunds) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(refunds.filter((r) => r.body.success).length, 33, '33 × 30 = 990 of 1000');
      for (const r of refunds.filter((x) => !x.body.success)) assert.equal(r.body.operations?.[0]?.errorCode?.code, 'AMOUNT_EXCEEDS_REMAINING');

      const d = await checkInvariants(tx.id);
      assert.equal(d.aggregates.captured, 1000);
      assert.equal(d.aggregates.refunded, 990);
    });

    test('50 captures and 50 refunds at once on one transaction, some declined by the acquirer → invariants hold', async () => {
      const tx = await seedAuthorized(t, m, { amount: 2000 });
      // Every fifth capture and every seventh refund call is declined: their reservations must be released.
      acquirer.script(
        tx.id,
        'capture',
        Array.from({ length: 60 }, (_, i): ScriptedAnswer => (i % 5 === 4 ? 'decline' : 'approve')),
      );
      acquirer.script(
        tx.id,
        'refund',
        Array.from({ length: 200 }, (_, i): ScriptedAnswer => (i % 7 === 6 ? 'decline' : 'approve')),
      );
      const first = await post(`/transactions/${tx.id}/capture`, { amount: 300 });
      assert.equal(first.body.success, true, 'a first capture so that refunds have something to take');

      const requests: Array<Promise<Answer>> = [];
      for (let i = 0; i < 50; i++) {
        requests.push(post(`/transactions/${tx.id}/capture`, { amount: 60 }));
        requests.push(post(`/transactions/${tx.id}/refund`, { amount: 45 }));
      }
      const answers = await Promise.all(requests);
      for (const r of answers) assert.equal(r.status, 200, JSON.stringify(r.body));
      const codes = new Set(
        answers.filter((r) => !r.body.success).map((r) => r.body.errorCode?.code ?? r.body.operations?.find((o) => !o.success)?.errorCode?.code),
      );
      for (const code of codes) assert.ok(['AMOUNT_EXCEEDS_REMAINING', 'DECLINED_BY_ISSUER_OR_SCHEME'].includes(code ?? ''), `unexpected ${code}`);
      assert.ok(codes.has('DECLINED_BY_ISSUER_OR_SCHEME'), 'the scripted declines happened');

      const d = await checkInvariants(tx.id);
      assert.ok(d.aggregates.captured > 300 && d.aggregates.refunded > 0, `both kinds went through: ${JSON.stringify(d.aggregates)}`);
    });
  });
}
