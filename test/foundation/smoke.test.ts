import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { availableStores } from '../support/stores.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';

for (const kind of await availableStores()) {
  describe(`smoke (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind);
    });
    after(() => t.close());

    test('a merchant created through the partner API lists its (empty) transactions', async () => {
      const m = await t.createMerchant();
      const res = await m.api.get(`${API}/transactions`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { currentOffset: '', nextOffset: null, perPage: 25, hasMore: false, items: [] });
    });
  });
}
