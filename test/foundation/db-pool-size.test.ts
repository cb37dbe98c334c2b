/** PAYMENTS_DB_POOL_SIZE bounds the PostgreSQL connections of a process: statements beyond it wait for one. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

for (const kind of (await availableStores()).filter((k) => k === 'postgres')) {
  describe(`database pool size (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { dbPoolSize: 2 }, { startWorkers: false });
    });
    after(() => t.close());

    test('five statements at once run on two connections', async () => {
      const pids = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`.execute(t.runtime.store.db);
          return rows[0]!.pid;
        }),
      );
      assert.equal(new Set(pids).size, 2);
    });
  });
}
