/**
 * Storage contract of acquirer agreements (023_acquirer_agreements), the same on SQLite and
 * PostgreSQL: replace writes a new row and marks the current one removed in one commit, keeping its
 * createdAt; remove marks the current one removed; removed rows stay readable by id; at most one
 * current row per account, also under concurrent replaces (PostgreSQL locks the account row); the
 * table's constraints refuse what the service never writes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { NewAcquirerAgreement } from '../../src/modules/acquirer-agreements/acquirer-agreement.js';
import { newId } from '../../src/shared/ids.js';
import { availableStores } from '../support/stores.js';
import { iso, openTestStore, seedAccount, T0, type TestStore } from './fixtures.js';

const row = (accountId: string, overrides: Partial<NewAcquirerAgreement> = {}): NewAcquirerAgreement => ({
  id: newId(),
  accountId,
  acquirer: 'clearhaus',
  apiKeySealed: 'v1.sealed.value.here',
  threeDSecure: null,
  mcc: '5999',
  textOnStatement: null,
  ...overrides,
});

for (const kind of await availableStores()) {
  describe(`acquirer agreements storage (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    const replace = (accountId: string, next: NewAcquirerAgreement, at: string) =>
      t.store.transaction((repos) => repos.acquirerAgreements.replace(accountId, next, at));
    const rowsOf = async (accountId: string) =>
      (await sql<{ id: string; removedAt: string | null }>`select id, removed_at from acquirer_agreements where account_id = ${accountId}`.execute(t.store.db))
        .rows;

    test('replace: the first row starts the agreement; the next one keeps its createdAt and marks it removed; rows are kept', async () => {
      const account = await seedAccount(t.store);
      const repo = t.store.acquirerAgreements;
      assert.equal(await repo.current(account.id), null);
      const first = row(account.id, { textOnStatement: 'First Shop' });
      const a = await replace(account.id, first, iso(T0 + 1000));
      assert.deepEqual(a, { ...first, createdAt: iso(T0 + 1000), updatedAt: iso(T0 + 1000), removedAt: null });
      assert.deepEqual(await repo.current(account.id), a);

      const second = row(account.id, { acquirer: 'sandbox', apiKeySealed: null, mcc: '4816' });
      const b = await replace(account.id, second, iso(T0 + 2000));
      assert.deepEqual(b, { ...second, createdAt: iso(T0 + 1000), updatedAt: iso(T0 + 2000), removedAt: null });
      assert.deepEqual(await repo.current(account.id), b);
      assert.deepEqual(await repo.findById(a.id), { ...a, removedAt: iso(T0 + 2000) }, 'the old row, unchanged but for removedAt');
      assert.equal(await repo.findById(newId()), null);

      const removed = await repo.remove(account.id, iso(T0 + 3000));
      assert.deepEqual(removed, { ...b, removedAt: iso(T0 + 3000) });
      assert.equal(await repo.current(account.id), null);
      assert.equal(await repo.remove(account.id, iso(T0 + 4000)), null, 'nothing current to remove');
      assert.deepEqual(await repo.findById(b.id), removed);

      const c = await replace(account.id, row(account.id), iso(T0 + 5000));
      assert.equal(c.createdAt, iso(T0 + 5000), 'after a removal a PUT starts a new agreement');
      assert.equal((await rowsOf(account.id)).length, 3, 'no row is ever deleted');
      // Other accounts are untouched.
      const other = await seedAccount(t.store);
      await replace(other.id, row(other.id), iso(T0 + 6000));
      assert.deepEqual((await repo.current(account.id))?.id, c.id);
    });

    test('a replace whose commit fails leaves the current row as it was', async () => {
      const account = await seedAccount(t.store);
      const a = await replace(account.id, row(account.id), iso(T0));
      await assert.rejects(
        t.store.transaction(async (repos) => {
          await repos.acquirerAgreements.replace(account.id, row(account.id), iso(T0 + 1000));
          throw new Error('the commit fails');
        }),
        /the commit fails/,
      );
      assert.deepEqual(await t.store.acquirerAgreements.current(account.id), a);
      assert.equal((await rowsOf(account.id)).length, 1);
    });

    test('concurrent replaces of one account: each commits, one after the other; one current row, one createdAt', async () => {
      const account = await seedAccount(t.store);
      const at = (i: number) => iso(T0 + 10_000 + i);
      const written = await Promise.all(Array.from({ length: 8 }, (_, i) => replace(account.id, row(account.id, { mcc: String(1000 + i) }), at(i))));
      const rows = await rowsOf(account.id);
      assert.equal(rows.length, 8);
      assert.equal(rows.filter((r) => r.removedAt === null).length, 1, 'one current row');
      const createdAts = new Set(written.map((w) => w.createdAt));
      assert.equal(createdAts.size, 1, `one createdAt, the first commit's: ${[...createdAts].join(', ')}`);
    });

    test('the table refuses what the service never writes: a second current row, bad values, an unknown account', async () => {
      const account = await seedAccount(t.store);
      const db = t.store.db as unknown as Kysely<any>;
      const insert = (values: Record<string, unknown>) =>
        sql`insert into acquirer_agreements (id, account_id, acquirer, api_key_sealed, mcc, text_on_statement, created_at, updated_at, removed_at)
          values (${newId()}, ${values.accountId ?? account.id}, ${values.acquirer ?? 'sandbox'}, ${values.apiKeySealed ?? null}, ${values.mcc ?? '5999'},
            ${values.textOnStatement ?? null}, ${iso(T0)}, ${iso(T0)}, ${values.removedAt ?? null})`.execute(db);
      await insert({});
      await assert.rejects(insert({}), /unique|acquirer_agreements_current/i, 'a second current row');
      await insert({ removedAt: iso(T0) });
      await insert({ removedAt: iso(T0 + 1) });
      await assert.rejects(insert({ removedAt: iso(T0), acquirer: 'adyen' }), /acquirer_agreements_acquirer_check/);
      await assert.rejects(insert({ removedAt: iso(T0), acquirer: 'clearhaus' }), /acquirer_agreements_api_key_sealed_check/, 'clearhaus without a key');
      await assert.rejects(insert({ removedAt: iso(T0), apiKeySealed: 'v1.x' }), /acquirer_agreements_api_key_sealed_check/, 'sandbox with a key');
      for (const mcc of ['599', '59999', '59a9', '']) {
        await assert.rejects(insert({ removedAt: iso(T0), mcc }), /acquirer_agreements_mcc_check/, mcc);
      }
      for (const textOnStatement of ['x', 'A'.repeat(23), 'Café', 'a\nb']) {
        await assert.rejects(insert({ removedAt: iso(T0), textOnStatement }), /acquirer_agreements_text_on_statement_check/, textOnStatement);
      }
      await insert({ removedAt: iso(T0), textOnStatement: 'AB' });
      await insert({ removedAt: iso(T0), textOnStatement: '~Shop #1 (DK) & Co.!' });
      await assert.rejects(insert({ accountId: newId(), removedAt: iso(T0) }), /foreign key/i, 'an unknown account');
    });
  });
}
