/**
 * Authenticated credentials remembered for a second (src/modules/accounts/principal-cache.ts):
 * the unit's rules, then through the API — a key used again costs no credential read, and closing
 * an account or changing its capabilities takes effect at once in the process that does it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CredentialOwner } from '../../src/modules/accounts/accounts.repository.js';
import { PrincipalCache } from '../../src/modules/accounts/principal-cache.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { statementsTouching } from '../support/statements.js';

const owner = (expiresAt: string | null = null): CredentialOwner => ({
  credentialId: 'c1',
  accountId: 'a1',
  capabilities: { moto: false, syncPayout: false },
  expiresAt,
});

describe('principal cache', () => {
  test('an entry lives for its time to live, never past its credential expiry', () => {
    let wall = 1_000;
    const cache = new PrincipalCache(() => wall, 1_000);
    cache.set('h', owner('2030-01-01T00:00:10.000Z'), cache.mark());
    assert.deepEqual(cache.get('h', Date.parse('2030-01-01T00:00:00.000Z')), owner('2030-01-01T00:00:10.000Z'));
    assert.equal(cache.get('other', Date.parse('2030-01-01T00:00:00.000Z')), null);
    assert.equal(cache.get('h', Date.parse('2030-01-01T00:00:10.000Z')), null, 'expired at exactly expiresAt, as the lookup says');
    cache.set('h', owner(), cache.mark());
    wall += 999;
    assert.ok(cache.get('h', Date.parse('2031-01-01T00:00:00.000Z')), 'an API key does not expire');
    wall += 1;
    assert.equal(cache.get('h', Date.parse('2031-01-01T00:00:00.000Z')), null, 'gone after its time to live');
  });

  test('clear drops every entry, and a lookup that started before it does not put its answer back', () => {
    const cache = new PrincipalCache(() => 0, 1_000);
    cache.set('h', owner(), cache.mark());
    const before = cache.mark();
    cache.clear();
    assert.equal(cache.get('h', Date.parse('2030-01-01T00:00:00.000Z')), null);
    cache.set('late', owner(), before);
    assert.equal(cache.get('late', Date.parse('2030-01-01T00:00:00.000Z')), null, 'read before the change: not remembered');
    cache.set('late', owner(), cache.mark());
    assert.ok(cache.get('late', Date.parse('2030-01-01T00:00:00.000Z')));
  });
});

for (const kind of await availableStores()) {
  describe(`authentication with the principal cache (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind);
    });
    after(() => t.close());

    const credentialReads = async (fn: () => Promise<unknown>) => {
      const counters = t.runtime.store.counters;
      counters.log = [];
      counters.start();
      try {
        await fn();
      } finally {
        counters.stop();
      }
      return statementsTouching(counters, { reads: ['credentials'] }).length;
    };

    test('a key used again within the second is not looked up again; a new key works at once', async () => {
      const m = await t.createMerchant({ physical: false });
      const reads = await credentialReads(async () => {
        for (let i = 0; i < 3; i++) assert.equal((await m.api.get(`${API}/transactions`)).status, 200);
      });
      assert.ok(reads <= 1, `${reads} credential reads for 3 requests`);
      const key = (await m.api.post(`${API}/management/api-keys`, { name: 'fresh' })).body.key;
      assert.equal((await m.api.get(`${API}/transactions`, { token: key })).status, 200, 'never cached as unknown');
      assert.equal((await m.api.get(`${API}/transactions`, { token: 'sk_unknown' })).status, 401);
    });

    test('closing an account and changing capabilities take effect at once, though its keys were just used', async () => {
      const m = await t.createMerchant({ physical: false });
      assert.equal((await m.api.get(`${API}/transactions`)).status, 200);
      const granted = await t.operator.patch(`${API}/partner/accounts/${m.accountId}/capabilities`, { moto: true });
      assert.equal(granted.status, 200);
      const readsAfterChange = await credentialReads(() => m.api.get(`${API}/transactions`));
      assert.equal(readsAfterChange, 1, 'looked up again after the change');
      assert.equal((await t.operator.delete(`${API}/partner/accounts/${m.accountId}`)).status, 200);
      assert.equal((await m.api.get(`${API}/transactions`)).status, 401);
    });
  });
}
