/**
 * A delivery job's read on both stores: the delivery and its webhook in one statement, the
 * webhook's sealed secrets and deletion included (the job cancels deliveries of deleted webhooks,
 * and signs with the signing secrets it read).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { iso, newWebhook, newWebhookDelivery, openTestStore, seedAccount, T0, type TestStore } from '../foundation/fixtures.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`webhook delivery read (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    test('the delivery and its webhook come back from one read; a deleted webhook still comes with its delivery', async () => {
      const { id: accountId } = await seedAccount(t.store);
      const webhook = newWebhook(accountId);
      await t.store.webhooks.insert(webhook, 'sealed-secret', 'sealed-signing-secret');
      const delivery = newWebhookDelivery(webhook);
      await t.store.webhooks.insertDeliveries([delivery]);

      t.store.counters.start();
      const found = await t.store.webhooks.findDeliveryWithWebhook(delivery.id);
      const counted = t.store.counters.stop();
      assert.equal(counted.reads, 1, 'one statement');
      assert.equal(counted.statements, 1);
      assert.deepEqual(found, {
        delivery,
        webhook: {
          ...webhook,
          secretSealed: 'sealed-secret',
          deletedAt: null,
          signingSecretSealed: 'sealed-signing-secret',
          previousSigningSecretSealed: null,
          previousSigningSecretExpiresAt: null,
        },
      });

      assert.equal(await t.store.webhooks.markDeleted(accountId, webhook.id, iso(T0 + 1000)), true);
      const afterDelete = await t.store.webhooks.findDeliveryWithWebhook(delivery.id);
      assert.equal(afterDelete?.webhook?.deletedAt, iso(T0 + 1000));
      assert.equal(afterDelete?.delivery.id, delivery.id);

      assert.equal(await t.store.webhooks.findDeliveryWithWebhook(newId()), null, 'an unknown delivery');
    });
  });
}
