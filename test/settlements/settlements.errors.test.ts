/** Settlement endpoints refuse bad input with the documented 4xx, never a 500. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { authorize, capture, runSettlements } from './support.js';

for (const kind of await availableStores()) {
  describe(`settlements errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let transferId: string;

    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      await capture(m, await authorize(m, 1000), 1000);
      [{ id: transferId }] = await runSettlements(t);
    });
    after(() => t?.close());

    test('perPage out of 1..500 → 422 with [min:1] / [max:500]; a foreign offset → 422 on offset', async () => {
      for (const path of ['/settlements/transfers', `/settlements/transfers/${transferId}/transactions`]) {
        for (const [perPage, rule] of [
          [0, 'min:1'],
          [501, 'max:500'],
        ] as const) {
          const res = await m.api.get(`${API}${path}?perPage=${perPage}`);
          assert.equal(res.status, 422, res.text);
          assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
          assert.ok(
            res.body.errors.perPage.some((e: string) => e.startsWith(`[${rule}]`)),
            res.text,
          );
        }
        const res = await m.api.get(`${API}${path}?offset=not-a-cursor`);
        assert.equal(res.status, 422, res.text);
        assert.ok(res.body.errors.offset, res.text);
      }
    });

    test('unknown transfer ids → 404 NOT_FOUND (a uuid, or anything else)', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
        for (const path of [`/settlements/transfers/${id}`, `/settlements/transfers/${id}/transactions`]) {
          const res = await m.api.get(`${API}${path}`);
          assert.equal(res.status, 404, res.text);
          assert.equal(res.body.errorCode, 'NOT_FOUND');
        }
      }
    });

    test('POST /sandbox/v1/settlements/run with a postingDate that is not a date → 422 on postingDate, nothing settled', async () => {
      await capture(m, await authorize(m, 500), 500);
      for (const postingDate of ['tomorrow', '2031-02-30x', 20310101]) {
        const res = await t.operator.post('/sandbox/v1/settlements/run', { postingDate });
        assert.equal(res.status, 422, res.text);
        assert.ok(res.body.errors.postingDate, res.text);
      }
      const [next] = await runSettlements(t, '2031-01-02');
      assert.equal(next.postingDate, '2031-01-02', 'the refused runs settled nothing');
    });
  });
}
