/**
 * 022_check_lists_as_comparisons (SQLite) on a database that already holds rows: the rebuilt tables
 * keep their rows, their CHECKs compare with each value instead of a list, and they still refuse
 * what they refused, by the same constraint names (a NULL still passes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { connect, type Connection } from '../../src/storage/connect.js';
import { migrate } from '../../src/storage/migrate.js';
import { createStore, type Store } from '../../src/storage/store.js';
import type { NewTransaction } from '../../src/modules/transactions/transactions.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';
import { newOperation, newTransaction, seedAccount, T0 } from './fixtures.js';

/** Every migration before 022. */
const BEFORE_022 = '021~';
const REBUILT = ['transactions', 'operations', 'jobs', 'notifications', 'sessions', 'idempotency_keys', 'ingestion_counters'];

describe('migration 022_check_lists_as_comparisons on existing rows (sqlite)', () => {
  let database: TestDatabase;
  let connection: Connection;
  let store: Store;
  let tx: NewTransaction;
  let operationId: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    connection = connect(database.config);
    await migrate(connection, { until: BEFORE_022 });
    store = createStore(connection, { now: () => T0 });
    const account = await seedAccount(store);
    tx = newTransaction(account.id, 'pos-022', { state: 'PENDING', scaMode: null, instantCapture: 'OFF', reference: 'before-022' });
    const operation = newOperation(tx, { type: 'AUTHORIZATION', state: 'PROCESSING', finalizedAt: null });
    operationId = operation.id;
    await store.transaction((repos) => repos.paymentRecords.record([tx], [operation], []));
    await migrate(connection);
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  test('the rows written before are there, as written', async () => {
    const found = await store.transactions.findById(tx.accountId, tx.id);
    assert.equal(found?.reference, 'before-022');
    assert.equal(found?.state, 'PENDING');
    assert.equal(found?.instantCapture, 'OFF');
    const operations = (await sql<{ id: string; state: string }>`select id, state from operations where transaction_id = ${tx.id}`.execute(connection.db)).rows;
    assert.deepEqual(operations, [{ id: operationId, state: 'PROCESSING' }]);
  });

  test('no CHECK of the rebuilt tables tests a list; their indexes are back', async () => {
    const rows = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'table'`.execute(connection.db)).rows;
    for (const table of REBUILT) {
      const text = rows.find((r) => r.name === table)?.sql;
      assert.ok(text, `${table} exists`);
      assert.doesNotMatch(text, / IN \(/i, `${table}: no IN list left`);
      assert.match(text, new RegExp(`CONSTRAINT ${table}_\\w+_check CHECK`), `${table}: named CHECKs kept`);
    }
    assert.equal(
      rows.some((r) => r.name.endsWith('_new')),
      false,
      'no table left half-renamed',
    );
    const indexes = (
      await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'transactions' and sql is not null`.execute(connection.db)
    ).rows;
    assert.ok(indexes.some((i) => i.name === 'transactions_terminal_busy'));
    assert.ok(indexes.length >= 12, `transactions has its ${indexes.length} indexes`);
  });

  test('the CHECKs refuse what they refused, by name; NULL passes as before', async () => {
    const refused = (statement: ReturnType<typeof sql>, name: string) => assert.rejects(statement.execute(connection.db), new RegExp(name));
    await refused(sql`update transactions set state = 'BOGUS' where id = ${tx.id}`, 'transactions_state_check');
    await refused(sql`update transactions set flow = 'mit' where id = ${tx.id}`, 'transactions_flow_check');
    await refused(sql`update transactions set sca_mode = 'ALWAYS' where id = ${tx.id}`, 'transactions_sca_mode_check');
    await refused(sql`update transactions set effects = 'REFUND' where id = ${tx.id}`, 'CHECK constraint failed');
    await refused(sql`update operations set type = 'CHARGE' where id = ${operationId}`, 'operations_type_check');
    await refused(
      sql`insert into ingestion_counters (account_id, channel, window_start, count) values (${tx.accountId}, 'moto', '2030-01-01T00:00:00.000Z', 1)`,
      'ingestion_counters_channel_check',
    );
    await sql`update transactions set sca_mode = null, effects = null, state = 'SUCCESS' where id = ${tx.id}`.execute(connection.db);
    assert.equal((await store.transactions.findById(tx.accountId, tx.id))?.state, 'SUCCESS');
  });

  test('foreign keys still hold on the rebuilt tables', async () => {
    await assert.rejects(
      sql`insert into operations (id, account_id, transaction_id, point_of_sale_id, type, state, amount, created_at) values ('op-orphan', ${tx.accountId}, 'no-such-transaction', 'pos-022', 'CAPTURE', 'PROCESSING', 1, '2030-01-01T00:00:00.000Z')`.execute(
        connection.db,
      ),
      /FOREIGN KEY/,
    );
  });
});
