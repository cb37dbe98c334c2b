/**
 * One request per card series on the wire (INTERFACE §12.3; 025_series_claims), at the repository:
 * a claim reads the latest reference, holds the series against other operations until released or
 * stale, and an answer moves the reference on only while its operation still holds the claim.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import type { CardDetails } from '../../src/modules/payment-methods/payment-method.js';
import { availableStores } from '../support/stores.js';
import { claimSeriesStatement } from '../../src/storage/repositories/payment-methods.js';
import { iso, newOperation, newPointOfSale, newTransaction, openTestStore, seedAccount, T0, type TestStore } from '../foundation/fixtures.js';

for (const kind of await availableStores()) {
  describe(`series claims (${kind})`, () => {
    let t: TestStore;
    let accountId: string;
    before(async () => {
      t = await openTestStore(kind);
      accountId = (await seedAccount(t.store)).id;
    });
    after(() => t.close());

    async function storedCard(reference: string | null): Promise<string> {
      const id = newId();
      const card: CardDetails = {
        bin: '41111111',
        last4: '1111',
        length: 16,
        expiryMonth: 12,
        expiryYear: 2031,
        scheme: 'VISA',
        par: 'PAR1',
        issuer: 'Test Bank',
        country: 'DK',
        segment: 'CONSUMER',
        funding: 'CREDIT',
      };
      await t.store.paymentMethods.insert(
        {
          id,
          accountId,
          type: 'CARD',
          subType: 'VISA',
          expiry: '12/31',
          displayText: '4111 11•• •••• 1111',
          holderName: null,
          customerId: null,
          accountUpdatesEnabled: false,
          createdAt: iso(T0),
          deletedAt: null,
          card,
        },
        null,
      );
      if (reference) await t.store.paymentMethods.recordSeries(accountId, id, { type: 'recurring', reference, agreementId: 'agr-1' });
      return id;
    }
    // The claim statement recordSendingInSeries runs, alone: the reference when claimed.
    const claim = async (id: string, op: string, atMs: number, staleBeforeMs = T0 - 1) =>
      (await claimSeriesStatement.executeTakeFirst(t.store.db, { accountId, id, operationId: op, at: iso(atMs), staleBefore: iso(staleBeforeMs) }))
        ?.seriesReference ?? null;

    test('a claim reads the latest reference; another operation waits until the answer moves it on', async () => {
      const card = await storedCard('auth-1');
      assert.equal(await claim(card, 'op-a', T0), 'auth-1');
      assert.equal(await claim(card, 'op-b', T0 + 10), null, 'held by op-a');
      await t.store.paymentMethods.recordSeries(accountId, card, { type: 'recurring', reference: 'auth-2', agreementId: 'agr-1' }, 'op-a');
      assert.equal(await claim(card, 'op-b', T0 + 20), 'auth-2', 'released with the new reference');
    });

    test('a declined request gives the series back unchanged; only its holder can', async () => {
      const card = await storedCard('auth-1');
      assert.equal(await claim(card, 'op-a', T0), 'auth-1');
      await t.store.paymentMethods.releaseSeries(accountId, card, 'op-other');
      assert.equal(await claim(card, 'op-b', T0 + 10), null, 'a release by another operation changes nothing');
      await t.store.paymentMethods.releaseSeries(accountId, card, 'op-a');
      assert.equal(await claim(card, 'op-b', T0 + 20), 'auth-1');
    });

    test('a stale claim is taken over; the late answer of its holder then changes nothing', async () => {
      const card = await storedCard('auth-1');
      assert.equal(await claim(card, 'op-a', T0), 'auth-1');
      assert.equal(await claim(card, 'op-b', T0 + 60_000, T0 + 1), 'auth-1', 'claimed before staleBefore: taken over');
      await t.store.paymentMethods.recordSeries(accountId, card, { type: 'recurring', reference: 'auth-late', agreementId: 'agr-1' }, 'op-a');
      const method = await t.store.paymentMethods.findById(accountId, card);
      assert.equal(method?.series?.reference, 'auth-1');
      assert.equal(await claim(card, 'op-c', T0 + 60_010, T0 + 1), null, 'op-b holds it now');
    });

    /** An operation row to record a request of (acquirer_requests refers to it). */
    async function operation(): Promise<{ operationId: string; transactionId: string }> {
      const pos = newPointOfSale(accountId, 'ONLINE');
      await t.store.pointsOfSale.insert(pos, 'sealed');
      const tx = newTransaction(accountId, pos.id, { scaMode: 'SKIP', instantCapture: 'OFF' });
      await t.store.transactions.insert([tx]);
      const op = newOperation(tx);
      await t.store.transactions.insertOperations([op]);
      return { operationId: op.id, transactionId: tx.id };
    }
    const sending = (o: { operationId: string; transactionId: string }) => ({
      ...o,
      accountId,
      acquirer: 'clearhaus',
      call: 'authorize' as const,
      amount: 1000,
      currency: 'DKK',
      sentAt: iso(T0),
    });

    test('a request in a series is recorded only with its claim, in one step', async () => {
      const card = await storedCard('auth-1');
      const [a, b] = [await operation(), await operation()];
      const staleBefore = iso(T0 - 1);
      const first = await t.store.acquirerRequests.recordSendingInSeries(sending(a), { paymentMethodId: card, staleBefore });
      assert.deepEqual(first, { reference: 'auth-1', recorded: true });
      const held = await t.store.acquirerRequests.recordSendingInSeries(sending(b), { paymentMethodId: card, staleBefore });
      assert.deepEqual(held, { reference: null, recorded: false }, 'the series is on the wire with a');
      assert.equal(await t.store.acquirerRequests.find(b.operationId), null, 'nothing recorded for b');
      const again = await t.store.acquirerRequests.recordSendingInSeries(sending(a), { paymentMethodId: card, staleBefore });
      assert.deepEqual(again, { reference: 'auth-1', recorded: false }, 'a was recorded before: never sent twice');
      await t.store.paymentMethods.recordSeries(accountId, card, { type: 'recurring', reference: 'auth-2', agreementId: 'agr-1' }, a.operationId);
      t.store.counters.start();
      const next = await t.store.acquirerRequests.recordSendingInSeries(sending(b), { paymentMethodId: card, staleBefore });
      const counted = t.store.counters.stop();
      assert.deepEqual(next, { reference: 'auth-2', recorded: true });
      // PostgreSQL: one statement of writing CTEs, committed by itself; SQLite: the claim, then the record, in one commit.
      assert.deepEqual([counted.writes, counted.commits], kind === 'postgres' ? [1, 1] : [2, 1], JSON.stringify(counted));
      assert.equal((await t.store.acquirerRequests.find(b.operationId))?.amount, 1000);
    });

    test('a card without a series, or of another account, is never claimed', async () => {
      const bare = await storedCard(null);
      assert.equal(await claim(bare, 'op-a', T0), null);
      const card = await storedCard('auth-1');
      const other = (await seedAccount(t.store)).id;
      assert.equal(
        (await claimSeriesStatement.executeTakeFirst(t.store.db, { accountId: other, id: card, operationId: 'op-x', at: iso(T0), staleBefore: iso(T0 - 1) })) ??
          null,
        null,
      );
      assert.equal(await claim(card, 'op-a', T0), 'auth-1', 'the failed claims left it free');
    });
  });
}
