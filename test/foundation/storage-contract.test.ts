/**
 * Storage contract: the same assertions against the SQLite and the PostgreSQL adapter, so that
 * every repository behaves identically on both (ordering, filters, atomic claims, timestamps).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { ServiceClock } from '../../src/clock.js';
import { newId } from '../../src/shared/ids.js';
import { afterChange } from '../../src/modules/transactions/engine-rules.js';
import type { Terminal } from '../../src/modules/terminals/terminal.js';
import type { DeliveryAttempt, WebhookDelivery } from '../../src/modules/webhooks/webhook.js';
import type { Transaction, TransactionState } from '../../src/modules/transactions/transaction.js';
import { connect } from '../../src/storage/connect.js';
import { compileClaim } from '../../src/storage/repositories/jobs.js';
import { migrate } from '../../src/storage/migrate.js';
import { availableStores, createTestDatabase } from '../support/stores.js';
import {
  iso,
  newOperation,
  newPointOfSale,
  newTransaction,
  newWebhook,
  newWebhookDelivery,
  openTestStore,
  seedAccount,
  T0,
  type TestStore,
} from './fixtures.js';

const HOUR = 3_600_000;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

for (const kind of await availableStores()) {
  describe(`storage contract (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    describe('accounts and credentials', () => {
      test('insert, find, list newest first with offset and total', async () => {
        const a = await seedAccount(t.store, iso(T0 + 1), 'list-a');
        const b = await seedAccount(t.store, iso(T0 + 2), 'list-b');
        assert.equal((await t.store.accounts.findById(a.id))?.name, 'list-a');
        assert.equal(await t.store.accounts.findById(newId()), null);
        const all = await t.store.accounts.list(0, 500);
        assert.ok(all.total >= 2);
        assert.equal(all.items.length, all.total);
        const ids = all.items.map((x) => x.id);
        assert.ok(ids.indexOf(b.id) < ids.indexOf(a.id), 'newest first');
        const page = await t.store.accounts.list(1, 1);
        assert.equal(page.items.length, 1);
        assert.equal(page.items[0]!.id, all.items[1]!.id);
        assert.equal(page.total, all.total);
      });

      test('status and capabilities round-trip as typed values', async () => {
        const a = await seedAccount(t.store);
        assert.equal(a.status, 'PENDING', 'insert returns the row as inserted');
        const found = await t.store.accounts.findById(a.id);
        assert.equal(found?.status, 'ACTIVE');
        assert.deepEqual(found?.capabilities, { moto: false, syncPayout: false });
        await t.store.accounts.setCapabilities(a.id, { moto: true }, iso(T0 + 5));
        assert.deepEqual((await t.store.accounts.findById(a.id))?.capabilities, { moto: true, syncPayout: false });
        await t.store.accounts.setCapabilities(a.id, { syncPayout: true }, iso(T0 + 6));
        await t.store.accounts.setCapabilities(a.id, { moto: false }, iso(T0 + 7));
        const after = await t.store.accounts.findById(a.id);
        assert.deepEqual(after?.capabilities, { moto: false, syncPayout: true });
        assert.equal(after?.updatedAt, iso(T0 + 7));
      });

      test('a credential owner is found only while unexpired, unrevoked and the account open', async () => {
        const a = await seedAccount(t.store);
        const cred = (hash: string, expiresAt: string | null) =>
          t.store.accounts.insertCredential({
            id: newId(),
            accountId: a.id,
            kind: expiresAt ? 'access_token' : 'api_key',
            name: null,
            secretHash: hash,
            environment: 'test',
            expiresAt,
            createdAt: iso(T0),
          });
        const token = `h-token-${newId()}`;
        const key = `h-key-${newId()}`;
        await cred(token, iso(T0 + 8 * HOUR));
        await cred(key, null);
        const owner = await t.store.accounts.findCredentialOwner(token, iso(T0 + HOUR));
        assert.equal(owner?.accountId, a.id);
        assert.deepEqual(owner?.capabilities, { moto: false, syncPayout: false });
        assert.equal(await t.store.accounts.findCredentialOwner(token, iso(T0 + 8 * HOUR)), null, 'expired at exactly expiresAt');
        assert.equal((await t.store.accounts.findCredentialOwner(key, iso(T0 + 1000 * HOUR)))?.accountId, a.id, 'API keys do not expire');
        assert.equal(await t.store.accounts.findCredentialOwner('unknown-hash', iso(T0)), null);

        await t.store.accounts.revokeCredentials(a.id, iso(T0 + 2));
        assert.equal(await t.store.accounts.findCredentialOwner(key, iso(T0 + 3)), null, 'revoked');

        const b = await seedAccount(t.store);
        const bKey = `h-key-${newId()}`;
        await t.store.accounts.insertCredential({
          id: newId(),
          accountId: b.id,
          kind: 'api_key',
          name: 'k',
          secretHash: bKey,
          environment: 'test',
          expiresAt: null,
          createdAt: iso(T0),
        });
        await t.store.accounts.setStatus(b.id, 'CLOSED', iso(T0 + 4));
        assert.equal(await t.store.accounts.findCredentialOwner(bKey, iso(T0 + 5)), null, 'closed account');
      });

      test('a secret hash is unique', async () => {
        const a = await seedAccount(t.store);
        const row = {
          id: newId(),
          accountId: a.id,
          kind: 'api_key' as const,
          name: null,
          secretHash: `dup-${newId()}`,
          environment: 'test',
          expiresAt: null,
          createdAt: iso(T0),
        };
        await t.store.accounts.insertCredential(row);
        await assert.rejects(t.store.accounts.insertCredential({ ...row, id: newId() }));
      });
    });

    describe('points of sale and terminals', () => {
      let accountId: string;
      let otherAccountId: string;
      const pos = newPointOfSale;
      before(async () => {
        accountId = (await seedAccount(t.store)).id;
        otherAccountId = (await seedAccount(t.store)).id;
      });

      test('a point of sale is found only by its own account, with its sealed secret and configuration', async () => {
        const p = pos(accountId, 'ONLINE', iso(T0));
        await t.store.pointsOfSale.insert(p, 'sealed-value');
        const found = await t.store.pointsOfSale.findById(accountId, p.id);
        assert.equal(found?.webhookAuthenticationSealed, 'sealed-value');
        assert.deepEqual(found?.hostedConfiguration, p.hostedConfiguration);
        assert.equal(found?.type, 'ONLINE');
        assert.equal(await t.store.pointsOfSale.findById(otherAccountId, p.id), null);
      });

      test('points of sale list newest first, per account', async () => {
        const older = pos(otherAccountId, 'ONLINE', iso(T0 + 10));
        const newer = pos(otherAccountId, 'PHYSICAL', iso(T0 + 20));
        await t.store.pointsOfSale.insert(older, 's');
        await t.store.pointsOfSale.insert(newer, 's');
        const page = await t.store.pointsOfSale.list(otherAccountId, 0, 10);
        assert.equal(page.total, 2);
        assert.deepEqual(
          page.items.map((x) => x.id),
          [newer.id, older.id],
        );
        assert.deepEqual(
          (await t.store.pointsOfSale.list(otherAccountId, 1, 10)).items.map((x) => x.id),
          [older.id],
        );
      });

      test('terminals: one fallback per point of sale; a new fallback replaces the old one', async () => {
        const p = pos(accountId, 'PHYSICAL', iso(T0));
        await t.store.pointsOfSale.insert(p, 's');
        const terminal = (fallback: boolean, ms: number): Terminal => ({
          id: newId(),
          accountId,
          pointOfSaleId: p.id,
          deviceId: null,
          externalId: null,
          name: `t${ms}`,
          fallback,
          createdAt: iso(T0 + ms),
        });
        assert.equal(await t.store.terminals.countForPointOfSale(p.id), 0);
        assert.equal(await t.store.terminals.findFallback(p.id), null);
        const first = terminal(true, 1);
        const second = terminal(false, 2);
        await t.store.terminals.insert(first);
        await t.store.terminals.insert(second);
        assert.equal((await t.store.terminals.findFallback(p.id))?.id, first.id);
        const third = terminal(true, 3);
        await t.store.terminals.insert(third);
        assert.equal((await t.store.terminals.findFallback(p.id))?.id, third.id);
        assert.equal((await t.store.terminals.findById(accountId, first.id))?.fallback, false);
        assert.equal(await t.store.terminals.countForPointOfSale(p.id), 3);
        // The database itself refuses a second fallback written around the repository.
        await assert.rejects(
          t.store.db
            .insertInto('terminals')
            .values({ ...terminal(false, 4), fallback: 1 })
            .execute(),
        );
        assert.equal(await t.store.terminals.findById(otherAccountId, first.id), null, 'tenant scoped');
      });

      test('terminals list newest first, filtered by point of sale and by device', async () => {
        const p1 = pos(otherAccountId, 'PHYSICAL', iso(T0));
        const p2 = pos(otherAccountId, 'PHYSICAL', iso(T0));
        await t.store.pointsOfSale.insert(p1, 's');
        await t.store.pointsOfSale.insert(p2, 's');
        const mk = (pointOfSaleId: string, ms: number): Terminal => ({
          id: newId(),
          accountId: otherAccountId,
          pointOfSaleId,
          deviceId: null,
          externalId: null,
          name: null,
          fallback: false,
          createdAt: iso(T0 + ms),
        });
        const a = mk(p1.id, 1);
        const b = mk(p2.id, 2);
        const c = { ...mk(p1.id, 3), deviceId: newId() };
        for (const x of [a, b, c]) await t.store.terminals.insert(x);
        assert.deepEqual(
          (await t.store.terminals.list(otherAccountId, { pointOfSaleId: p1.id, deviceId: null }, 0, 10)).items.map((x) => x.id),
          [c.id, a.id],
        );
        assert.deepEqual(
          (await t.store.terminals.list(otherAccountId, { pointOfSaleId: null, deviceId: c.deviceId }, 0, 10)).items.map((x) => x.id),
          [c.id],
        );
        assert.equal((await t.store.terminals.list(otherAccountId, { pointOfSaleId: p2.id, deviceId: c.deviceId }, 0, 10)).total, 0, 'filters combine');
        const all = await t.store.terminals.list(otherAccountId, { pointOfSaleId: null, deviceId: null }, 0, 2);
        assert.equal(all.total, 3);
        assert.deepEqual(
          all.items.map((x) => x.id),
          [c.id, b.id],
        );
      });
    });

    describe('transactions', () => {
      let accountId: string;
      const posA = newId();
      const posB = newId();
      const terminalId = newId();
      const sessionId = newId();
      const subscriptionId = newId();
      const chargeId = newId();
      let rows: Transaction[];

      before(async () => {
        accountId = (await seedAccount(t.store)).id;
        const other = (await seedAccount(t.store)).id;
        const specs = [
          { pointOfSaleId: posA, amount: 100, fee: 1, currency: 'DKK', state: 'SUCCESS', reference: 'order-1', customerId: 'cust-1', sessionId },
          {
            pointOfSaleId: posA,
            amount: 200,
            fee: 2,
            currency: 'EUR',
            state: 'FAILED',
            errorCode: 'INSUFFICIENT_FUNDS',
            reference: 'order-10',
            subscriptionId,
          },
          { pointOfSaleId: posB, amount: 300, fee: 3, currency: 'DKK', state: 'PENDING', reference: 'order_%x', terminalId, type: 'MOTO', flow: 'MOTO' },
          {
            pointOfSaleId: posB,
            amount: 400,
            fee: 4,
            currency: 'SEK',
            state: 'PROCESSING',
            billingAgreementChargeId: chargeId,
            paymentMethodType: 'KLARNA',
            paymentMethodSubType: null,
            type: 'PAYOUT',
            flow: 'PAYOUT',
          },
          { pointOfSaleId: posA, amount: 200, fee: 5, currency: 'DKK', state: 'SUCCESS', reference: 'ORDER-1', customerId: 'cust-2' },
        ] as const;
        const txs = specs.map((spec, i) => newTransaction(accountId, spec.pointOfSaleId, { ...spec, createdAt: iso(T0 + (i + 1) * HOUR) } as never));
        await t.store.transactions.insert([...txs, newTransaction(other, posA, { reference: 'order-1', createdAt: iso(T0 + HOUR) })]);
        rows = await t.store.transactions.list(accountId, {}, null, 100);
      });

      const ids = (list: Transaction[]) => list.map((x) => x.amount * 10 + x.fee);
      const list = (filter: Parameters<TestStore['store']['transactions']['list']>[1]) => t.store.transactions.list(accountId, filter, null, 100).then(ids);

      test('findById is tenant scoped and round-trips JSON and integer columns', async () => {
        const owner = (await seedAccount(t.store)).id;
        const tx = newTransaction(owner, posA, {
          createdAt: iso(T0 - HOUR),
          amount: 999_999_999,
          attributes: { a: '1' },
          exemptions: ['TRA'],
          externalStatusCodes: { terminal: null, acquirer: '05', network: null, sca: null },
        });
        await t.store.transactions.insert([tx]);
        const found = await t.store.transactions.findById(owner, tx.id);
        assert.equal(found?.amount, 999_999_999);
        assert.equal(typeof found?.amount, 'number');
        assert.deepEqual(found?.attributes, { a: '1' });
        assert.deepEqual(found?.exemptions, ['TRA']);
        assert.deepEqual(found?.externalStatusCodes, { terminal: null, acquirer: '05', network: null, sca: null });
        assert.equal(found?.createdAt, iso(T0 - HOUR), 'timestamps read back as the ISO string written');
        assert.equal(found?.capturedAmount, 0, 'aggregates default to 0');
        assert.equal(await t.store.transactions.findById(accountId, tx.id), null);
      });

      test("the list is newest first and only the account's own", async () => {
        const all = await t.store.transactions.list(accountId, {}, null, 100);
        const sorted = [...all].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
        assert.deepEqual(
          all.map((x) => x.id),
          sorted.map((x) => x.id),
        );
        assert.ok(all.every((x) => x.accountId === accountId));
        assert.ok(rows.length >= 5);
      });

      test('every filter, alone and combined', async () => {
        assert.deepEqual(await list({ pointOfSaleId: posB }), [4004, 3003]);
        assert.deepEqual(await list({ currency: 'DKK', createdAfter: iso(T0) }), [2005, 3003, 1001]);
        assert.deepEqual(await list({ state: 'FAILED' }), [2002]);
        assert.deepEqual(await list({ errorCode: 'INSUFFICIENT_FUNDS' }), [2002]);
        assert.deepEqual(await list({ type: 'MOTO' }), [3003]);
        assert.deepEqual(await list({ terminalId }), [3003]);
        assert.deepEqual(await list({ sessionId }), [1001]);
        assert.deepEqual(await list({ subscriptionId }), [2002]);
        assert.deepEqual(await list({ billingAgreementChargeId: chargeId }), [4004]);
        assert.deepEqual(await list({ customerId: 'cust-2' }), [2005]);
        assert.deepEqual(await list({ paymentMethodType: 'KLARNA' }), [4004]);
        assert.deepEqual(await list({ paymentMethodSubType: 'VISA', createdAfter: iso(T0) }), [2005, 3003, 2002, 1001]);
        assert.deepEqual(await list({ reference: 'order-1' }), [1001], 'exact and case-sensitive');
        assert.deepEqual(await list({ reference: 'order-1', referenceMode: 'EXACT' }), [1001]);
        assert.deepEqual(await list({ reference: 'order-1', referenceMode: 'PREFIX' }), [2002, 1001]);
        assert.deepEqual(await list({ reference: 'order_', referenceMode: 'PREFIX' }), [3003], 'LIKE wildcards in the prefix are literal');
        assert.deepEqual(await list({ reference: 'order%', referenceMode: 'PREFIX' }), []);
        assert.deepEqual(await list({ createdAfter: iso(T0 + 2 * HOUR), createdBefore: iso(T0 + 4 * HOUR) }), [4004, 3003, 2002], 'bounds inclusive');
        assert.deepEqual(await list({ amount: { mode: 'EQUAL', value: 200 } }), [2005, 2002]);
        assert.deepEqual(await list({ amount: { mode: 'GREATER_THAN', value: 200 } }), [4004, 3003]);
        assert.deepEqual(await list({ amount: { mode: 'LESS_THAN', value: 200 }, createdAfter: iso(T0) }), [1001]);
        assert.deepEqual(await list({ fee: { mode: 'GREATER_THAN', value: 3 } }), [2005, 4004]);
        assert.deepEqual(await list({ fee: { mode: 'EQUAL', value: 2 }, amount: { mode: 'EQUAL', value: 200 }, state: 'FAILED', pointOfSaleId: posA }), [2002]);
        assert.deepEqual(await list({ currency: 'EUR', state: 'SUCCESS' }), []);
      });

      test('keyset pages: ties on createdAt are ordered by id, every row exactly once', async () => {
        const tieAccount = (await seedAccount(t.store)).id;
        const same = iso(T0 + 100 * HOUR);
        const txs = Array.from({ length: 7 }, (_, i) => newTransaction(tieAccount, posA, { createdAt: i < 5 ? same : iso(T0 + i) }));
        await t.store.transactions.insert(txs);
        const seen: string[] = [];
        let after: { createdAt: string; id: string } | null = null;
        for (let guard = 0; guard < 10; guard++) {
          const page: Transaction[] = await t.store.transactions.list(tieAccount, {}, after, 2);
          if (page.length === 0) break;
          seen.push(...page.map((x) => x.id));
          const last = page[page.length - 1]!;
          after = { createdAt: last.createdAt, id: last.id };
        }
        assert.equal(seen.length, 7);
        assert.equal(new Set(seen).size, 7);
        const tied = txs
          .slice(0, 5)
          .map((x) => x.id)
          .sort()
          .reverse();
        assert.deepEqual(seen.slice(0, 5), tied, 'same createdAt → id descending');
      });

      test('applyAnswer, reading back: the operation finished and the transaction updated, each only while its condition holds', async () => {
        const opsAccount = (await seedAccount(t.store)).id;
        const tx = newTransaction(opsAccount, posA, { state: 'PENDING', amount: 700 });
        await t.store.transactions.insert([tx]);
        const auth = newOperation(tx, { type: 'AUTHORIZATION', state: 'PROCESSING', amount: 700, finalizedAt: null });
        await t.store.transactions.insertOperations([auth]);
        const at = iso(T0 + 9 * HOUR);
        const answer = {
          id: auth.id,
          patch: { state: 'SUCCESS' as const, errorCode: null, externalStatusCodes: null, acquirerReference: 'ref-1', finalizedAt: at },
        };
        const success = {
          id: tx.id,
          from: ['PENDING', 'PROCESSING'] as TransactionState[],
          patch: { state: 'SUCCESS' as const, updatedAt: at, finalizedAt: at },
          delta: { authorized: 700 },
        };

        // The store's own repositories read the row back (no commit of their own to predict in).
        const asRead = (await t.store.transactions.findById(opsAccount, tx.id))!;
        const first = await t.store.transactions.applyAnswer(answer, success, asRead);
        assert.equal(first.finished, true);
        assert.equal(first.transaction?.state, 'SUCCESS');
        assert.equal(first.transaction?.authorizedAmount, 700, 'the row as updated');
        assert.deepEqual(first.transaction, await t.store.transactions.findById(opsAccount, tx.id), 'exactly the stored row');
        assert.equal((await t.store.transactions.operationsOf(tx.id)).find((o) => o.id === auth.id)?.acquirerReference, 'ref-1');

        // Answered already, and the transaction is no longer PENDING or PROCESSING: neither applies.
        const again = await t.store.transactions.applyAnswer(answer, success, asRead);
        assert.deepEqual(again, { finished: false, transaction: null });
        assert.equal((await t.store.transactions.findById(opsAccount, tx.id))?.authorizedAmount, 700, 'nothing added twice');

        // One applies and the other does not: each says so (the caller then rolls its commit back).
        const late = newOperation(tx, { type: 'AUTHORIZATION', state: 'PROCESSING', amount: 700, finalizedAt: null });
        await t.store.transactions.insertOperations([late]);
        assert.deepEqual(await t.store.transactions.applyAnswer({ ...answer, id: late.id }, success, asRead), { finished: true, transaction: null });
      });

      test('applyAnswer: the row as the answer leaves it, stored with its commit; an answer applied already is refused and nothing of its commit kept; a stale read is corrected', async () => {
        const opsAccount = (await seedAccount(t.store)).id;
        const tx = newTransaction(opsAccount, posA, { state: 'PENDING', amount: 900 });
        await t.store.transactions.insert([tx]);
        const stored = (await t.store.transactions.findById(opsAccount, tx.id))!;
        const auth = newOperation(tx, { type: 'AUTHORIZATION', state: 'PROCESSING', amount: 900, finalizedAt: null });
        await t.store.transactions.insertOperations([auth]);
        const at = iso(T0 + 10 * HOUR);
        const answer = {
          id: auth.id,
          patch: { state: 'SUCCESS' as const, errorCode: null, externalStatusCodes: null, acquirerReference: 'ref-2', finalizedAt: at },
        };
        const change = {
          from: ['PENDING', 'PROCESSING'] as TransactionState[],
          patch: { state: 'SUCCESS' as const, errorCode: null, acquirerReference: 'ref-2', sca: null, updatedAt: at, finalizedAt: at },
          delta: { authorized: 900 },
        };
        const expected = afterChange(stored, change.patch, change.delta);
        // With another write of the same commit, which must not outlive a refusal.
        const commit = (asRead: Transaction, operation = answer, from = change.from) =>
          t.store.transaction(async (repos) => {
            const applied = await repos.transactions.applyAnswer(operation, { id: tx.id, ...change, from }, asRead);
            if (!applied.finished || !applied.transaction) throw new Error('not applied');
            await repos.events.append(opsAccount, 'test.answered', { operationId: operation.id });
            return applied.transaction;
          });
        const eventsOf = async (operationId: string) =>
          (await t.store.db.selectFrom('events').select('data').where('event', '=', 'test.answered').execute()).filter((e) =>
            String(e.data).includes(operationId),
          ).length;

        const first = await commit(stored);
        assert.deepEqual(first, expected, 'the row the answer leaves');
        assert.deepEqual(await t.store.transactions.findById(opsAccount, tx.id), expected, 'as stored');
        assert.equal((await t.store.transactions.operationsOf(tx.id)).find((o) => o.id === auth.id)?.state, 'SUCCESS');
        assert.equal(await eventsOf(auth.id), 1);

        // The same answer again: the operation is no longer PROCESSING.
        await assert.rejects(commit(stored), /not applied/);
        assert.equal(await eventsOf(auth.id), 1, 'nothing of the refused commit kept');

        // A second operation's answer given the row as read before the first answer (stale): the
        // store does not keep a wrong row, it applies the answer to the row as it is.
        const late = newOperation(tx, { type: 'AUTHORIZATION', state: 'PROCESSING', amount: 900, finalizedAt: null });
        await t.store.transactions.insertOperations([late]);
        const corrected = await commit(stored, { ...answer, id: late.id }, ['SUCCESS']);
        assert.equal(corrected.authorizedAmount, 1800, 'added to the row as stored, not to the stale read');
        assert.deepEqual(await t.store.transactions.findById(opsAccount, tx.id), corrected);
        assert.equal((await t.store.transactions.operationsOf(tx.id)).find((o) => o.id === late.id)?.state, 'SUCCESS');
      });

      test('reserve on the row as read: a reservation is stored with its commit; a stale read is corrected; one that does not fit is null and changes nothing', async () => {
        const opsAccount = (await seedAccount(t.store)).id;
        const tx = newTransaction(opsAccount, posA, { state: 'SUCCESS', amount: 1000, authorizedAmount: 1000 });
        await t.store.transactions.insert([tx]);
        const stored = (await t.store.transactions.findById(opsAccount, tx.id))!;
        const at = iso(T0 + 11 * HOUR);
        // With another write of the same commit, kept only when the reservation was made.
        const commit = (amount: number, asRead: Transaction) =>
          t.store.transaction(async (repos) => {
            const reserved = await repos.transactions.reserve(asRead.id, ['SUCCESS'], { updatedAt: at }, { pending: amount }, asRead);
            if (reserved) await repos.events.append(opsAccount, 'test.reserved', { amount });
            return reserved;
          });
        const reservedEvents = async () => (await t.store.db.selectFrom('events').select('data').where('event', '=', 'test.reserved').execute()).length;

        const first = (await commit(400, stored))!;
        assert.deepEqual(first, afterChange(stored, { updatedAt: at }, { pending: 400 }));
        assert.deepEqual(await t.store.transactions.findById(opsAccount, tx.id), first, 'the row as stored');
        assert.equal(await reservedEvents(), 1);

        // Given the row before the first reservation (stale): reserved on the row as it is.
        const second = (await commit(100, stored))!;
        assert.equal(second.pendingAmount, 500);
        assert.deepEqual(await t.store.transactions.findById(opsAccount, tx.id), second);
        // 600 more does not fit in the 500 left: null, nothing reserved, nothing of the commit kept.
        assert.equal(await commit(600, second), null);
        assert.equal(await reservedEvents(), 2);
        assert.equal((await t.store.transactions.findById(opsAccount, tx.id))?.pendingAmount, 500);
      });

      test('operations of a transaction and the final-operations list with its filters', async () => {
        const opsAccount = (await seedAccount(t.store)).id;
        const txA = newTransaction(opsAccount, posA);
        const txB = newTransaction(opsAccount, posB);
        await t.store.transactions.insert([txA, txB]);
        const ops = [
          newOperation(txA, { type: 'AUTHORIZATION', amount: 1000, createdAt: iso(T0), finalizedAt: iso(T0 + 1 * HOUR) }),
          newOperation(txA, { type: 'CAPTURE', amount: 600, createdAt: iso(T0 + 1), finalizedAt: iso(T0 + 3 * HOUR) }),
          newOperation(txA, { type: 'REFUND', state: 'PROCESSING', amount: 100, createdAt: iso(T0 + 2), finalizedAt: null }),
          newOperation(txB, {
            type: 'SALE',
            state: 'FAILED',
            errorCode: 'DECLINED_BY_ISSUER_OR_SCHEME',
            amount: 50,
            createdAt: iso(T0 + 3),
            finalizedAt: iso(T0 + 2 * HOUR),
          }),
        ];
        await t.store.transactions.insertOperations(ops);
        assert.deepEqual(
          (await t.store.transactions.operationsOf(txA.id)).map((o) => o.type),
          ['AUTHORIZATION', 'CAPTURE', 'REFUND'],
          'oldest first',
        );
        const final = await t.store.transactions.listFinalOperations(opsAccount, {}, 0, 10);
        assert.equal(final.total, 3, 'PROCESSING is not final');
        assert.deepEqual(
          final.items.map((o) => o.type),
          ['CAPTURE', 'SALE', 'AUTHORIZATION'],
          'newest finalized first',
        );
        assert.equal(final.items[1]!.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
        const byPos = await t.store.transactions.listFinalOperations(opsAccount, { pointOfSaleIds: [posB] }, 0, 10);
        assert.deepEqual(
          byPos.items.map((o) => o.type),
          ['SALE'],
        );
        const windowed = await t.store.transactions.listFinalOperations(
          opsAccount,
          { finalizedAfter: iso(T0 + 2 * HOUR), finalizedBefore: iso(T0 + 3 * HOUR) },
          0,
          10,
        );
        assert.deepEqual(
          windowed.items.map((o) => o.type),
          ['CAPTURE', 'SALE'],
        );
        const paged = await t.store.transactions.listFinalOperations(opsAccount, {}, 1, 1);
        assert.deepEqual([paged.total, paged.items.map((o) => o.type)], [3, ['SALE']]);
        assert.equal((await t.store.transactions.listFinalOperations(newId(), {}, 0, 10)).total, 0);
      });
    });

    describe('idempotency records', () => {
      const ref = () => ({ accountId: newId(), method: 'POST', path: '/public/api/v1/mit', key: `k-${newId()}` });
      const times = (ms: number) => ({ now: iso(ms), lockedUntil: iso(ms + 5 * 60_000), expiresAt: iso(ms + 24 * HOUR) });

      test('claim, complete, then the stored response is returned to the next claim', async () => {
        const r = ref();
        const first = await t.store.idempotency.claim(r, 'h1', times(T0));
        assert.equal(first.claimed, true);
        assert.match(first.claimed ? first.effectKey : '', /^[0-9a-f-]{36}$/, 'a claim carries the effect key its use case tags records with');
        const busy = await t.store.idempotency.claim(r, 'h1', times(T0 + 1000));
        assert.equal(busy.claimed, false);
        assert.equal(!busy.claimed && busy.existing.state, 'in_flight');
        await t.store.idempotency.complete(r, 201, '{"ok":true}', 'application/json');
        const done = await t.store.idempotency.claim(r, 'h1', times(T0 + 2000));
        assert.deepEqual(done, {
          claimed: false,
          existing: { requestHash: 'h1', state: 'completed', status: 201, body: '{"ok":true}', contentType: 'application/json' },
        });
      });

      test('the scope is (account, method, path, key)', async () => {
        const r = ref();
        assert.equal((await t.store.idempotency.claim(r, 'h', times(T0))).claimed, true);
        assert.equal((await t.store.idempotency.claim({ ...r, accountId: newId() }, 'h', times(T0))).claimed, true);
        assert.equal((await t.store.idempotency.claim({ ...r, method: 'PATCH' }, 'h', times(T0))).claimed, true);
        assert.equal((await t.store.idempotency.claim({ ...r, path: '/other' }, 'h', times(T0))).claimed, true);
        assert.equal((await t.store.idempotency.claim(r, 'h', times(T0))).claimed, false);
      });

      test('release frees an in-flight claim but never a completed one', async () => {
        const r = ref();
        await t.store.idempotency.claim(r, 'h', times(T0));
        await t.store.idempotency.release(r);
        assert.equal((await t.store.idempotency.claim(r, 'h2', times(T0))).claimed, true, 'released: claimable again, even with another body');
        await t.store.idempotency.complete(r, 200, '{}', 'application/json');
        await t.store.idempotency.release(r);
        assert.equal((await t.store.idempotency.claim(r, 'h2', times(T0))).claimed, false);
      });

      test('takeover: an abandoned in-flight claim after its lock, a completed record after its expiry', async () => {
        const r = ref();
        await t.store.idempotency.claim(r, 'h', times(T0));
        assert.equal((await t.store.idempotency.claim(r, 'h', times(T0 + 4 * 60_000))).claimed, false, 'still locked');
        assert.equal((await t.store.idempotency.claim(r, 'h', times(T0 + 5 * 60_000))).claimed, true, 'lock ran out');
        await t.store.idempotency.complete(r, 200, '{"first":1}', 'application/json');
        assert.equal((await t.store.idempotency.claim(r, 'h', times(T0 + 23 * HOUR))).claimed, false);
        assert.equal((await t.store.idempotency.claim(r, 'other', times(T0 + 25 * HOUR))).claimed, true, 'expired after 24 h');
        const now = await t.store.idempotency.claim(r, 'other', times(T0 + 25 * HOUR + 1));
        assert.equal(!now.claimed && now.existing.status, null, 'the old response is gone');
      });

      test('effect key: kept when a crashed claim is resumed with the same body, new after expiry; another body may not resume', async () => {
        const r = ref();
        const key = (c: Awaited<ReturnType<typeof t.store.idempotency.claim>>) => (c.claimed ? c.effectKey : null);
        const first = key(await t.store.idempotency.claim(r, 'h', times(T0)));
        assert.ok(first);
        assert.equal((await t.store.idempotency.claim(r, 'other body', times(T0 + 6 * 60_000))).claimed, false, 'another body cannot resume it');
        assert.equal(key(await t.store.idempotency.claim(r, 'h', times(T0 + 6 * 60_000))), first, 'the resumed execution finds the same effects');
        await t.store.idempotency.complete(r, 200, '{}', 'application/json');
        const afterExpiry = key(await t.store.idempotency.claim(r, 'h', times(T0 + 25 * HOUR)));
        assert.ok(afterExpiry && afterExpiry !== first, 'a request after expiry is a new request');
      });

      test('concurrent claims of one key: exactly one wins', async () => {
        const r = ref();
        const results = await Promise.all(Array.from({ length: 20 }, () => t.store.idempotency.claim(r, 'h', times(T0))));
        assert.equal(results.filter((x) => x.claimed).length, 1);
      });

      test('sweep deletes expired records only, bounded by the limit', async () => {
        const base = T0 + 1000 * HOUR; // later than every record above, so that they are swept first
        await t.store.idempotency.sweep(iso(base), 100_000);
        const expired = [ref(), ref(), ref()];
        for (const r of expired) await t.store.idempotency.claim(r, 'h', { ...times(base), expiresAt: iso(base + HOUR) });
        const fresh = ref();
        await t.store.idempotency.claim(fresh, 'h', { ...times(base), expiresAt: iso(base + 48 * HOUR) });
        await t.store.idempotency.complete(fresh, 200, '{}', 'application/json');
        assert.equal(await t.store.idempotency.sweep(iso(base + 2 * HOUR), 2), 2);
        assert.equal(await t.store.idempotency.sweep(iso(base + 2 * HOUR), 100), 1);
        assert.equal(await t.store.idempotency.sweep(iso(base + 2 * HOUR), 100), 0);
        assert.equal((await t.store.idempotency.claim(fresh, 'h', times(base + 2 * HOUR))).claimed, false, 'unexpired record kept');
      });
    });

    describe('jobs', () => {
      const kind = () => `test.${newId().slice(-12)}`;

      test('a claim finds its jobs through indexes, whatever number of finished jobs the table keeps: no scan of jobs', async () => {
        const k = kind();
        // Finished jobs stay 7 days (maintenance.ts): a claim must not read them.
        const at = iso(T0 - 60_000);
        for (let chunk = 0; chunk < 20; chunk++) {
          await t.store.db
            .insertInto('jobs')
            .values(
              Array.from({ length: 1000 }, (_, i) => ({
                id: `done-${k}-${chunk}-${i}`,
                kind: k,
                payload: '{}',
                state: 'done',
                runAt: at,
                attempts: 1,
                maxAttempts: 25,
                createdAt: at,
                updatedAt: at,
                finishedAt: at,
              })),
            )
            .execute();
        }
        if (t.store.dialect === 'postgres') await sql`analyze jobs`.execute(t.store.db);
        t.clock.ms = T0;
        for (const n of [1, 2, 3]) await t.store.jobs.enqueue({ kind: k, payload: { n }, runAt: T0 });
        const claimAt = { now: T0 + 1, wallNow: T0 + 1 };
        const q = compileClaim(t.store.db, t.store.dialect, 'w-plan', claimAt, { [k]: 30_000 }, 10, [k, 'other.kind']);
        if (t.store.dialect === 'postgres') {
          const { rows } = await t.store.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]));
          const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
          assert.doesNotMatch(plan, /"Node Type":"Seq Scan"[^}]*"Relation Name":"jobs"/, plan);
        } else {
          const { rows } = await t.store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]));
          const details = rows.map((r) => r.detail);
          assert.ok(
            details.every((d) => !/^SCAN jobs\b/.test(d)),
            details.join('\n'),
          );
        }
        const claimed = await t.store.jobs.claim('w-plan', claimAt, { [k]: 30_000 }, 10, [k, 'other.kind']);
        assert.deepEqual(claimed.map((j) => (j.payload as { n: number }).n).sort(), [1, 2, 3], 'the due jobs, claimed');
        await t.store.db.deleteFrom('jobs').where('kind', '=', k).execute();
      });

      test('enqueue → claim leases due jobs only, oldest runAt first, and counts an attempt', async () => {
        const k = kind();
        t.clock.ms = T0;
        await t.store.jobs.enqueue({ kind: k, payload: { n: 2 }, runAt: T0 + 2000 });
        await t.store.jobs.enqueue({ kind: k, payload: { n: 1 }, runAt: T0 + 1000 });
        await t.store.jobs.enqueue({ kind: k, payload: { n: 3 }, runAt: T0 + 60_000 });
        assert.deepEqual(await t.store.jobs.claim('w1', { now: T0, wallNow: T0 }, 30_000, 10, [k]), [], 'nothing due yet');
        assert.equal(await t.store.jobs.nextDueAt([k]), T0 + 1000);
        const claimed = await t.store.jobs.claim('w1', { now: T0 + 5000, wallNow: T0 + 5000 }, 30_000, 10, [k]);
        assert.deepEqual(claimed.map((j) => (j.payload as { n: number }).n).sort(), [1, 2]);
        assert.ok(claimed.every((j) => j.state === 'running' && j.attempts === 1 && j.maxAttempts === 25));
        assert.deepEqual(await t.store.jobs.claim('w2', { now: T0 + 5000, wallNow: T0 + 5000 }, 30_000, 10, [k]), [], 'leased jobs are not claimed twice');
        assert.equal(await t.store.jobs.nextDueAt([k]), T0 + 60_000);
        assert.deepEqual(await t.store.jobs.claim('w2', { now: T0 + 5000, wallNow: T0 + 5000 }, 30_000, 10, ['other.kind']), [], 'only the kinds asked for');
      });

      test('concurrent claims never hand one job to two workers', async () => {
        const k = kind();
        await t.store.jobs.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ kind: k, payload: i, runAt: T0 })));
        const batches = await Promise.all(Array.from({ length: 6 }, (_, i) => t.store.jobs.claim(`w${i}`, { now: T0 + 1, wallNow: T0 + 1 }, 30_000, 10, [k])));
        const ids = batches.flat().map((j) => j.id);
        assert.equal(ids.length, 30);
        assert.equal(new Set(ids).size, 30);
      });

      test('an expired lease is picked up by another worker; the old worker cannot complete it', async () => {
        const k = kind();
        await t.store.jobs.enqueue({ kind: k, payload: null, runAt: T0 });
        const [job] = await t.store.jobs.claim('crashed', { now: T0, wallNow: T0 }, 30_000, 1, [k]);
        assert.ok(job);
        assert.deepEqual(await t.store.jobs.claim('w2', { now: T0 + 29_999, wallNow: T0 + 29_999 }, 30_000, 1, [k]), []);
        const [again] = await t.store.jobs.claim('w2', { now: T0 + 30_001, wallNow: T0 + 30_001 }, 30_000, 1, [k]);
        assert.equal(again?.id, job.id);
        assert.equal(again?.attempts, 2);
        await t.store.jobs.complete(job.id, 'crashed', T0 + 30_002);
        assert.deepEqual(
          await t.store.jobs.countsByState().then((c) => c.filter((x) => x.kind === k)),
          [{ kind: k, state: 'running', count: 1 }],
          'stale worker completion ignored',
        );
        await t.store.jobs.complete(job.id, 'w2', T0 + 30_003);
        assert.deepEqual(await t.store.jobs.countsByState().then((c) => c.filter((x) => x.kind === k)), [], 'done jobs are not counted');
      });

      test("leases per kind: a crashed worker's short-lease job comes back before its long-lease one", async () => {
        const short = kind();
        const long = kind();
        await t.store.jobs.enqueueMany([
          { kind: short, payload: null, runAt: T0 },
          { kind: long, payload: null, runAt: T0 },
        ]);
        const leases = { [short]: 10_000, [long]: 600_000 };
        assert.equal((await t.store.jobs.claim('crashed', { now: T0, wallNow: T0 }, leases, 10, [short, long])).length, 2);
        const back = await t.store.jobs.claim('w2', { now: T0 + 10_001, wallNow: T0 + 10_001 }, leases, 10, [short, long]);
        assert.deepEqual(
          back.map((j) => j.kind),
          [short],
        );
        assert.deepEqual(await t.store.jobs.claim('w2', { now: T0 + 599_999, wallNow: T0 + 599_999 }, leases, 10, [long]), []);
        assert.deepEqual(
          (await t.store.jobs.claim('w3', { now: T0 + 600_001, wallNow: T0 + 600_001 }, leases, 10, [long])).map((j) => j.kind),
          [long],
        );
      });

      test('fail with a retry time requeues; without one the job is dead; a dead job can be retried', async () => {
        const k = kind();
        await t.store.jobs.enqueue({ kind: k, payload: 'x', runAt: T0, maxAttempts: 2 });
        const [job] = await t.store.jobs.claim('w', { now: T0, wallNow: T0 }, 30_000, 1, [k]);
        await t.store.jobs.fail(job!.id, 'w', T0 + 1, 'boom 1', T0 + 10_000);
        assert.deepEqual(await t.store.jobs.claim('w', { now: T0 + 9_999, wallNow: T0 + 9_999 }, 30_000, 1, [k]), [], 'not before the backoff');
        const [retry] = await t.store.jobs.claim('w', { now: T0 + 10_000, wallNow: T0 + 10_000 }, 30_000, 1, [k]);
        assert.equal(retry?.lastError, 'boom 1');
        assert.equal(retry?.attempts, 2);
        await t.store.jobs.fail(job!.id, 'w', T0 + 10_001, 'boom 2', null);
        const dead = (await t.store.jobs.listDead(100)).find((j) => j.id === job!.id);
        assert.equal(dead?.state, 'dead');
        assert.equal(dead?.lastError, 'boom 2');
        assert.deepEqual(
          await t.store.jobs.claim('w', { now: T0 + 100_000_000, wallNow: T0 + 100_000_000 }, 30_000, 1, [k]),
          [],
          'dead jobs never run again by themselves',
        );
        assert.deepEqual(
          (await t.store.jobs.countsByState()).filter((x) => x.kind === k),
          [{ kind: k, state: 'dead', count: 1 }],
        );
        assert.equal(await t.store.jobs.retryDead(job!.id, T0 + 20_000), true);
        assert.equal(await t.store.jobs.retryDead(job!.id, T0 + 20_000), false, 'only a dead job');
        const [revived] = await t.store.jobs.claim('w', { now: T0 + 20_000, wallNow: T0 + 20_000 }, 30_000, 1, [k]);
        assert.equal(revived?.attempts, 1, 'attempts start again');
      });

      test('releaseLeases gives running jobs back without counting the attempt', async () => {
        const k = kind();
        await t.store.jobs.enqueueMany([
          { kind: k, payload: 1, runAt: T0 },
          { kind: k, payload: 2, runAt: T0 },
        ]);
        await t.store.jobs.claim('leaving', { now: T0, wallNow: T0 }, 30_000, 10, [k]);
        assert.equal(await t.store.jobs.releaseLeases('leaving', T0 + 1), 2);
        assert.equal(await t.store.jobs.releaseLeases('leaving', T0 + 1), 0);
        const again = await t.store.jobs.claim('next', { now: T0 + 2, wallNow: T0 + 2 }, 30_000, 10, [k]);
        assert.deepEqual(
          again.map((j) => j.attempts),
          [1, 1],
        );
      });

      test('dedupeKey makes enqueue exactly-once, also inside one batch', async () => {
        const k = kind();
        const key = `dedupe-${newId()}`;
        await t.store.jobs.enqueue({ kind: k, payload: 'first', dedupeKey: key, runAt: T0 });
        await t.store.jobs.enqueue({ kind: k, payload: 'second', dedupeKey: key, runAt: T0 });
        await t.store.jobs.enqueueMany([
          { kind: k, payload: 'third', dedupeKey: key, runAt: T0 },
          { kind: k, payload: 'other', runAt: T0 },
        ]);
        const claimed = await t.store.jobs.claim('w', { now: T0, wallNow: T0 }, 30_000, 10, [k]);
        assert.deepEqual(claimed.map((j) => j.payload).sort(), ['first', 'other']);
      });

      test('a job enqueued in a rolled-back transaction does not exist; a committed one does', async () => {
        const k = kind();
        await assert.rejects(
          t.store.transaction(async (repos) => {
            await repos.jobs.enqueue({ kind: k, payload: 'rolled back', runAt: T0 });
            await repos.settings.set(`rollback-${k}`, 'x');
            throw new Error('abort');
          }),
          /abort/,
        );
        assert.equal(await t.store.settings.get(`rollback-${k}`), null);
        await t.store.transaction(async (repos) => repos.jobs.enqueue({ kind: k, payload: 'committed', runAt: T0 }));
        assert.deepEqual(
          (await t.store.jobs.claim('w', { now: T0, wallNow: T0 }, 30_000, 10, [k])).map((j) => j.payload),
          ['committed'],
        );
      });

      test('purgeFinished removes done jobs finished before the cut-off', async () => {
        const k = kind();
        await t.store.jobs.enqueue({ kind: k, payload: null, runAt: T0 });
        const [job] = await t.store.jobs.claim('w', { now: T0, wallNow: T0 }, 30_000, 1, [k]);
        await t.store.jobs.complete(job!.id, 'w', T0 + 1);
        const count = async () =>
          Number(
            (
              await t.store.db
                .selectFrom('jobs')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('id', '=', job!.id)
                .executeTakeFirstOrThrow()
            ).n,
          );
        await t.store.jobs.purgeFinished(T0, 1000);
        assert.equal(await count(), 1, 'finished after the cut-off: kept');
        await t.store.jobs.purgeFinished(T0 + 2, 1000);
        assert.equal(await count(), 0);
      });
    });

    describe('webhook deliveries', () => {
      test('recordAttempt: attempt n is recorded once; its outcome applies only while PENDING, and it answers the state it left', async () => {
        const account = await seedAccount(t.store);
        const webhookId = newId();
        await t.store.webhooks.insert(newWebhook(account.id, webhookId), 'sealed');
        const delivery = () => newWebhookDelivery({ id: webhookId, accountId: account.id });
        const attempt = (deliveryId: string, n: number, success: boolean): DeliveryAttempt => ({
          id: newId(),
          deliveryId,
          webhookId,
          attempt: n,
          success,
          httpStatus: success ? 200 : 500,
          error: success ? null : 'HTTP 500',
          durationMs: 7,
          attemptedAt: iso(T0 + n),
        });
        const record = (a: DeliveryAttempt, update: Pick<WebhookDelivery, 'state' | 'nextAttemptAt' | 'finishedAt'>) =>
          t.store.transaction((repos) => repos.webhooks.recordAttempt(a, update));
        const stored = async (id: string) => (await t.store.webhooks.listDeliveries(webhookId, 0, 100)).items.find((d) => d.id === id)!;

        const failing = delivery();
        const delivered = delivery();
        const cancelled = delivery();
        await t.store.webhooks.insertDeliveries([failing, delivered, cancelled]);

        assert.equal(await record(attempt(failing.id, 1, false), { state: 'PENDING', nextAttemptAt: iso(T0 + 1000), finishedAt: null }), 'PENDING');
        // Another worker recording attempt 1 again: refused, nothing of it written.
        assert.equal(await record(attempt(failing.id, 1, true), { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0 + 5) }), null);
        assert.equal(await record(attempt(failing.id, 2, true), { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0 + 6) }), 'DELIVERED');
        const afterTwo = await stored(failing.id);
        assert.equal(afterTwo.state, 'DELIVERED');
        assert.equal(afterTwo.attempts, 2);
        assert.equal(afterTwo.nextAttemptAt, null);
        assert.equal(afterTwo.finishedAt, iso(T0 + 6));
        assert.equal(afterTwo.lastAttemptAt, iso(T0 + 2));
        assert.deepEqual(
          afterTwo.attemptLog.map((a) => [a.attempt, a.success, a.httpStatus]),
          [
            [1, false, 500],
            [2, true, 200],
          ],
        );

        assert.equal(await record(attempt(delivered.id, 1, true), { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0 + 3) }), 'DELIVERED');
        assert.equal((await stored(delivered.id)).attemptLog.length, 1);

        // Cancelled while its attempt was under way: the attempt is recorded, the state stays.
        await t.store.webhooks.cancelPending(webhookId, iso(T0 + 1));
        assert.equal(await record(attempt(cancelled.id, 1, true), { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0 + 9) }), 'CANCELLED');
        const kept = await stored(cancelled.id);
        assert.equal(kept.state, 'CANCELLED');
        assert.equal(kept.finishedAt, iso(T0 + 1));
        assert.equal(kept.attempts, 1);
        assert.equal(kept.attemptLog.length, 1);
      });

      test('recordAttemptUnanswered writes what recordAttempt does, under the same guard; on PostgreSQL its commit alone is one statement', async () => {
        const account = await seedAccount(t.store);
        const webhookId = newId();
        await t.store.webhooks.insert(newWebhook(account.id, webhookId), 'sealed');
        const delivery = newWebhookDelivery({ id: webhookId, accountId: account.id });
        await t.store.webhooks.insertDeliveries([delivery]);
        const attempt = (n: number): DeliveryAttempt => ({
          id: newId(),
          deliveryId: delivery.id,
          webhookId,
          attempt: n,
          success: true,
          httpStatus: 200,
          error: null,
          durationMs: 4,
          attemptedAt: iso(T0 + n),
        });
        const delivered = { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0 + 20) } as const;

        t.store.counters.start();
        await t.store.transaction((repos) => repos.webhooks.recordAttemptUnanswered(attempt(1), delivered));
        const counted = t.store.counters.stop();
        if (kind === 'postgres') assert.deepEqual([counted.statements, counted.control, counted.commits], [1, 0, 1], 'one statement, no BEGIN or COMMIT');
        // Attempt 1 again (another worker): the guard refuses it, nothing of it written.
        await t.store.transaction((repos) => repos.webhooks.recordAttemptUnanswered({ ...attempt(1), httpStatus: 204 }, delivered));

        const stored = (await t.store.webhooks.listDeliveries(webhookId, 0, 100)).items.find((d) => d.id === delivery.id)!;
        assert.deepEqual([stored.state, stored.attempts, stored.finishedAt, stored.lastAttemptAt], ['DELIVERED', 1, iso(T0 + 20), iso(T0 + 1)]);
        assert.deepEqual(
          stored.attemptLog.map((a) => [a.attempt, a.success, a.httpStatus]),
          [[1, true, 200]],
        );
      });
    });

    describe('migrations', () => {
      test('two processes migrating one fresh database at once apply each migration exactly once', async () => {
        if (kind === 'sqlite') {
          // better-sqlite3 blocks its thread while waiting for a lock, so two racing connections need two processes.
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-migrate-'));
          const run = () =>
            new Promise<string>((resolve, reject) => {
              execFile(
                process.execPath,
                [path.join(ROOT, 'bin/payments.mjs'), 'migrate'],
                { env: { PATH: process.env.PATH ?? '', DATABASE_URL: path.join(dir, 'p.db') } },
                (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout.trim())),
              );
            });
          try {
            const outputs = await Promise.all([run(), run()]);
            assert.equal(outputs.filter((o) => o === 'the database is up to date').length, 1, outputs.join(' | '));
            assert.equal(outputs.filter((o) => o.startsWith('applied ')).length, 1, outputs.join(' | '));
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
          return;
        }
        const database = await createTestDatabase(kind);
        const open = () => connect(database.config, database.schema ? { schema: database.schema } : {});
        const [a, b] = [open(), open()];
        try {
          const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
          const all = [...ra.applied, ...rb.applied].sort();
          assert.ok(all.length > 0);
          assert.equal(new Set(all).size, all.length, 'no migration applied twice');
          assert.ok(ra.applied.length === 0 || rb.applied.length === 0, 'one of them did all the work');
          assert.deepEqual(await migrate(a), { applied: [] }, 'a later start has nothing to do');
        } finally {
          await a.close();
          await b.close();
          await database.drop();
        }
      });
    });

    describe('settings and the clock offset', () => {
      test('set is an upsert; get of an unknown key is null', async () => {
        const key = `s-${newId()}`;
        assert.equal(await t.store.settings.get(key), null);
        await t.store.settings.set(key, 'one');
        await t.store.settings.set(key, 'two');
        assert.equal(await t.store.settings.get(key), 'two');
      });

      test('the sandbox clock offset is shared through the store and survives a new clock', async () => {
        const a = new ServiceClock(t.store.settings, true);
        await a.init();
        const before = a.now();
        await a.advance(3600);
        assert.ok(a.now() - before >= 3_600_000);
        const b = new ServiceClock(t.store.settings, true);
        await b.init();
        assert.ok(Math.abs(b.now() - a.now()) < 1000, 'a second process sees the same time');
        let jumped = 0;
        b.onJump(() => jumped++);
        await a.advance(60);
        await b.refresh();
        assert.equal(jumped, 1, 'refresh notices the move');
        assert.ok(Math.abs(b.now() - a.now()) < 1000);
        await a.moveTo(a.now() - 10 * 3_600_000);
        assert.ok(a.now() >= before + 3_600_000, 'never backwards');
        const fixed = new ServiceClock(t.store.settings, false);
        await fixed.init();
        assert.ok(Math.abs(fixed.now() - Date.now()) < 1000, 'outside sandbox mode the offset is ignored');
        await assert.rejects(fixed.advance(1));
      });
    });
  });
}
