/**
 * The `payments` CLI: each command in-process against a real database, and bin/payments.mjs run
 * as a process from another directory.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { availableStores, TEST_DATABASE_URL } from '../support/stores.js';
import { openTestStore, seedAccount, type TestStore } from './fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function cli(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(...l.split('\n')) });
  return { code, out, err };
}

for (const kind of await availableStores()) {
  describe(`payments CLI (${kind})`, () => {
    let t: TestStore;
    let env: Record<string, string>;
    before(async () => {
      t = await openTestStore(kind);
      env =
        t.database.config.kind === 'sqlite'
          ? { DATABASE_URL: t.database.config.path }
          : // The CLI has no schema option: point it at the test schema through the connection's search_path.
            {
              DATABASE_URL: `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${t.database.schema}`)}`,
            };
    });
    after(() => t.close());

    test('migrate: up to date after the store migrated', async () => {
      const res = await cli(['migrate'], env);
      assert.equal(res.code, 0, res.err.join('\n'));
      assert.deepEqual(res.out, ['the database is up to date']);
    });

    test('accounts: one line per account', async () => {
      assert.deepEqual((await cli(['accounts'], env)).out, ['no accounts']);
      const a = await seedAccount(t.store, undefined, 'cli-merchant');
      const res = await cli(['accounts'], env);
      assert.equal(res.code, 0);
      assert.match(res.out[0]!, /^ID\s+STATUS\s+CURRENCY\s+CREATED\s+NAME$/);
      assert.equal(res.out.length, 2);
      assert.ok(res.out[1]!.startsWith(a.id));
      assert.match(res.out[1]!, /ACTIVE\s+DKK.*cli-merchant <cli-merchant@example.com>/);
    });

    test('jobs: counts by kind and state; dead lists; retry queues a dead job again', async () => {
      await t.store.jobs.enqueueMany([
        { kind: 'cli.a', payload: 1 },
        { kind: 'cli.a', payload: 2 },
        { kind: 'cli.b', payload: 3, maxAttempts: 1 },
      ]);
      const [dead] = await t.store.jobs.claim('w', { now: t.clock.ms, wallNow: t.clock.ms }, 1000, 1, ['cli.b']);
      await t.store.jobs.fail(dead!.id, 'w', t.clock.ms, 'acquirer said no\nsecond line', null);
      const counts = await cli(['jobs'], env);
      assert.deepEqual(
        counts.out.map((l) => l.split(/\s+/)),
        [
          ['KIND', 'STATE', 'COUNT'],
          ['cli.a', 'queued', '2'],
          ['cli.b', 'dead', '1'],
        ],
      );
      const list = await cli(['jobs', 'dead'], env);
      assert.equal(list.out.length, 2);
      assert.match(list.out[1]!, new RegExp(`^${dead!.id}\\s+cli\\.b\\s+1/1\\s+\\S+\\s+acquirer said no second line$`));
      const retried = await cli(['jobs', 'retry', dead!.id], env);
      assert.deepEqual([retried.code, retried.out], [0, [`job ${dead!.id} queued again`]]);
      assert.deepEqual((await cli(['jobs', 'dead'], env)).out, ['no dead jobs']);
      const again = await cli(['jobs', 'retry', dead!.id], env);
      assert.equal(again.code, 1);
      assert.match(again.err[0]!, /no dead job/);
      assert.equal((await cli(['jobs', 'retry'], env)).code, 2);
      assert.equal((await cli(['jobs', 'frobnicate'], env)).code, 2);
    });
  });
}

describe('payments CLI without a database', () => {
  test('config masks secrets and marks defaults', async () => {
    const res = await cli(['config'], {
      DATABASE_URL: 'postgres://user:hunter2@db/payments',
      PAYMENTS_OPERATOR_KEY: 'op_supersecretvalue123',
      PAYMENTS_VAULT_KEY: 'ab'.repeat(32),
      PORT: '9999',
    });
    const text = res.out.join('\n');
    assert.equal(res.code, 0);
    for (const secret of ['hunter2', 'op_supersecretvalue123', 'abab']) assert.ok(!text.includes(secret), `${secret} is masked`);
    assert.match(text, /DATABASE_URL\s+postgres postgres:\/\/user:\*\*\*\*@db\/payments/);
    assert.match(text, /PAYMENTS_OPERATOR_KEY\s+\*\*\*\* \(sha256 [0-9a-f]{8}\)/);
    assert.match(text, /^PORT\s+9999$/m);
    assert.match(text, /^HOST\s+127\.0\.0\.1\s+\(default\)$/m);
    assert.match(text, /^PAYMENTS_MAX_BACKLOG\s+50000\s+\(default\)$/m);
  });

  test('operator-key says where the key is', async () => {
    assert.match(
      (await cli(['operator-key'], { PAYMENTS_OPERATOR_KEY: 'op_supersecretvalue123' })).out[0]!,
      /^from the environment variable PAYMENTS_OPERATOR_KEY/,
    );
    const dir = path.join(os.tmpdir(), 'payments-cli-none');
    assert.equal(
      (await cli(['operator-key'], { DATABASE_URL: path.join(dir, 'p.db') })).out[0],
      `${path.join(dir, 'operator.key')} (not created yet: the first start generates it)`,
    );
  });

  test('a bad configuration is one line and exit 78; unknown commands exit 2 with the usage', async () => {
    const bad = await cli(['jobs'], { PORT: 'x' });
    assert.deepEqual([bad.code, bad.err.length], [78, 1]);
    assert.match(bad.err[0]!, /PORT/);
    const unknown = await cli(['frobnicate'], {});
    assert.equal(unknown.code, 2);
    assert.match(unknown.err.join('\n'), /Usage: payments <command>/);
    assert.equal((await cli([], {})).code, 2);
    assert.equal((await cli(['help'], {})).code, 0);
  });

  test('bin/payments.mjs runs from any directory', () => {
    const res = spawnSync(process.execPath, [path.join(ROOT, 'bin/payments.mjs'), 'config'], {
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH ?? '', PAYMENTS_OPERATOR_KEY: 'op_supersecretvalue123' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /^PAYMENTS_OPERATOR_KEY\s+\*\*\*\*/m);
    assert.match(res.stdout, new RegExp(`data directory\\s+${path.join(os.tmpdir(), 'data')}`));
  });
});
