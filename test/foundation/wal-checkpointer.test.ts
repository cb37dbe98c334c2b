/**
 * WAL checkpoints off the event loop (src/storage/sqlite/wal-checkpointer.ts): on each SQLite driver, the
 * service's connection leaves checkpoints to a worker thread's connection — what it commits reaches
 * the database file without the connection checkpointing itself — and closing stops the worker.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/storage/connect.js';
import { availableSqliteDrivers } from '../../src/storage/sqlite/driver.js';
import { MAIN_AUTOCHECKPOINT_PAGES } from '../../src/storage/sqlite/wal-checkpointer.js';

for (const driver of availableSqliteDrivers()) {
  describe(`WAL checkpoints in a worker thread (${driver})`, () => {
    test('committed pages reach the database file by the worker’s checkpoints; the connection’s own is only a far safety net; close stops it', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-checkpointer-'));
      const file = path.join(dir, 'store.db');
      try {
        const connection = connect({ kind: 'sqlite', path: file }, { sqliteDriver: driver });
        const autocheckpoint = connection.statements!.handle.pragma('wal_autocheckpoint', { simple: true });
        assert.equal(Number(autocheckpoint), MAIN_AUTOCHECKPOINT_PAGES);
        await sql`create table t (id integer primary key, v text not null)`.execute(connection.db);
        const before = fs.statSync(file).size;
        // About 250 pages: far below the connection's own mark, so only the worker copies them.
        for (let i = 0; i < 50; i++) {
          const values = Array.from({ length: 20 }, (_, j) => sql`(${i * 20 + j}, ${'x'.repeat(1000)})`);
          await sql`insert into t (id, v) values ${sql.join(values)}`.execute(connection.db);
        }
        let grown = fs.statSync(file).size;
        for (let waited = 0; grown < 1_000_000 && waited < 5_000; waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          grown = fs.statSync(file).size;
        }
        assert.ok(grown >= 1_000_000, `the database file holds the rows (${before} → ${grown} bytes)`);
        await connection.close();

        const again = connect({ kind: 'sqlite', path: file }, { sqliteDriver: driver });
        const count = await sql<{ n: number }>`select count(*) as n from t`.execute(again.db);
        assert.equal(count.rows[0]!.n, 1000);
        await again.close();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
