/**
 * PostgreSQL migration 022_checks_as_domains: the value CHECKs of the tables a payment writes are
 * domains, one per column, whose constraints keep the CHECKs' names — PostgreSQL re-plans a table's
 * CHECKs at every statement that writes it, a domain's once per connection. The refusals
 * themselves are storage-constraints.test.ts's.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { availableStores } from '../support/stores.js';
import { openTestStore, type TestStore } from './fixtures.js';

const MIGRATION = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/storage/migrations/postgres/022_checks_as_domains.sql');
const TABLES = ['transactions', 'operations', 'jobs', 'notifications', 'notification_attempts', 'idempotency_keys', 'ingestion_counters'];

for (const kind of (await availableStores()).filter((k) => k === 'postgres')) {
  describe(`022_checks_as_domains (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());

    test('the tables a payment writes have no CHECK of their own; each checked column is a domain <table>_<column> with the former constraint', async () => {
      const { rows: tableChecks } = await sql<{ name: string }>`
        select conname as name from pg_constraint
        where contype = 'c' and conrelid in (select oid from pg_class where relnamespace = current_schema()::regnamespace and relname in (${sql.join(TABLES)}))`.execute(
        t.store.db,
      );
      assert.deepEqual(tableChecks, []);
      const { rows: domains } = await sql<{ column: string; domain: string; name: string }>`
        select c.relname || '.' || a.attname as column, ty.typname as domain, con.conname as name
        from pg_attribute a
        join pg_class c on c.oid = a.attrelid
        join pg_type ty on ty.oid = a.atttypid and ty.typtype = 'd'
        join pg_constraint con on con.contypid = ty.oid
        where c.relnamespace = current_schema()::regnamespace and c.relname in (${sql.join(TABLES)}) and a.attnum > 0 and not a.attisdropped
        order by 1`.execute(t.store.db);
      const declared = [...fs.readFileSync(MIGRATION, 'utf8').matchAll(/CREATE DOMAIN (\w+) AS \w+ CONSTRAINT (\w+) CHECK/g)].map((m) => `${m[1]} ${m[2]}`);
      assert.equal(domains.length, 34);
      assert.deepEqual(domains.map((d) => `${d.domain} ${d.name}`).sort(), declared.sort());
      for (const d of domains) {
        assert.equal(d.domain, d.column.replace('.', '_'));
        assert.equal(d.name, `${d.domain}_check`);
      }
    });
  });
}
