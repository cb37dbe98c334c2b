/**
 * toTransaction names every field of a transaction instead of spreading the row (the payment path
 * reads wide joined rows, whose copies cost more than the statement). So a column added to the
 * table must be added there too: these tests read the table's columns from a migrated database of
 * each store, and fail when the mapping leaves one out or lets a joined column in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, type Selectable, sql } from 'kysely';
import { toTransaction } from '../../src/storage/repositories/transactions.js';
import type { TransactionsTable } from '../../src/storage/schema.js';
import { availableStores } from '../support/stores.js';
import { newOperation, newTransaction, openTestStore, seedAccount, type TestStore } from './fixtures.js';

/** Storage columns that are not part of the transaction. */
const NOT_IN_TRANSACTION = ['pendingRefundAmount'];
const JSON_COLUMNS = ['externalStatusCodes', 'exemptions', 'attributes', 'sca'];

const camel = (column: string): string => column.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

async function columnsOf(db: Kysely<any>, kind: string): Promise<string[]> {
  const rows =
    kind === 'sqlite'
      ? (await sql<{ name: string }>`select name from pragma_table_info('transactions')`.execute(db)).rows
      : (
          await sql<{
            name: string;
          }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'transactions'`.execute(db)
        ).rows;
  return rows.map((r) => camel(r.name));
}

for (const kind of await availableStores()) {
  describe(`transaction rows (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(async () => {
      await t.close();
    });

    test('every column of the table but the reservation of refunds is a field of the transaction; a joined column is not', async () => {
      const columns = await columnsOf(t.store.db as unknown as Kysely<any>, kind);
      assert.ok(columns.length > 40, `the table's columns were read (${columns.length})`);
      const row: Record<string, unknown> = { pmId: 'joined', subState: 'joined', opId: 'joined', primaryOperationId: 'joined' };
      for (const column of columns) row[column] = JSON_COLUMNS.includes(column) ? JSON.stringify({ column }) : `value of ${column}`;
      const tx = toTransaction(row as unknown as Selectable<TransactionsTable>) as unknown as Record<string, unknown>;
      const expected = columns.filter((c) => !NOT_IN_TRANSACTION.includes(c)).sort();
      assert.deepEqual(Object.keys(tx).sort(), expected);
      for (const column of expected) assert.deepEqual(tx[column], JSON_COLUMNS.includes(column) ? { column } : `value of ${column}`, column);
    });

    test('the capture read and the drive read give the transaction as inserted, with its joined rows beside it', async () => {
      const account = await seedAccount(t.store);
      const inserted = newTransaction(account.id, 'pos-row-test', {
        state: 'SUCCESS',
        authorizedAmount: 1500,
        reference: 'row-test',
        attributes: { a: 'b' },
        exemptions: ['LOW_VALUE'],
        externalStatusCodes: { terminal: null, acquirer: '00', network: null, sca: null },
        sca: { rejected: false, type: 'FRICTIONLESS', verification: 'FULL' },
      });
      await t.store.transactions.insert([inserted]);
      const authorization = newOperation(inserted, { type: 'AUTHORIZATION', state: 'SUCCESS', amount: 1500, idempotencyKey: null, chain: null });
      await t.store.transactions.insertOperations([authorization]);
      const stored = await t.store.transactions.findById(account.id, inserted.id);
      assert.ok(stored);
      for (const [field, value] of Object.entries(inserted)) assert.deepEqual((stored as unknown as Record<string, unknown>)[field], value, field);

      const withPrimary = await t.store.transactions.findWithPrimaryOperation(account.id, inserted.id);
      assert.deepEqual(withPrimary?.transaction, stored);
      assert.equal(withPrimary?.primaryOperationId, authorization.id);
      // No payment method or subscription joined: none is invented.
      assert.deepEqual(withPrimary?.drive, { paymentMethod: null, webhookAuthenticationSealed: null, subscription: null });

      const forDrive = await t.store.transactions.findForDrive(authorization.id);
      assert.deepEqual(forDrive?.transaction, stored);
      assert.deepEqual(forDrive?.operation, authorization);
    });
  });
}
