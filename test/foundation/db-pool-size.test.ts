/**
 * PAYMENTS_DB_POOL_SIZE bounds the PostgreSQL connections of a process: half of them carry the
 * statements outside transactions, shared and pipelined (postgres/shared-clients.ts); the others take
 * one transaction each, and transactions beyond them wait for one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

const backendPid = sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`;

for (const kind of (await availableStores()).filter((k) => k === 'postgres')) {
  describe(`database pool size (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { dbPoolSize: 4 }, { startWorkers: false });
    });
    after(() => t.close());

    test('five statements at once share the two shared connections', async () => {
      // The second shared connection opens when a statement finds the first one busy.
      await Promise.all(Array.from({ length: 3 }, () => backendPid.execute(t.runtime.store.db)));
      const pids = await Promise.all(Array.from({ length: 5 }, async () => (await backendPid.execute(t.runtime.store.db)).rows[0]!.pid));
      assert.equal(new Set(pids).size, 2);
    });

    test('five transactions at once run on the two others, one at a time each', async () => {
      const shared = new Set((await Promise.all(Array.from({ length: 4 }, () => backendPid.execute(t.runtime.store.db)))).map((r) => r.rows[0]!.pid));
      const started = performance.now();
      const pids = await Promise.all(
        Array.from({ length: 5 }, () => t.runtime.store.db.transaction().execute(async (trx) => (await backendPid.execute(trx)).rows[0]!.pid)),
      );
      const elapsed = performance.now() - started;
      assert.equal(new Set(pids).size, 2);
      for (const pid of pids) assert.ok(!shared.has(pid), 'a transaction ran on a shared connection');
      // Five sleeps of 0.1 s on two connections: three rounds.
      assert.ok(elapsed >= 290, `took ${elapsed.toFixed(0)} ms`);
    });
  });
}
