/**
 * Server-side prepared statements on PostgreSQL (src/storage/postgres/prepared-statements.ts): a parameterized
 * text goes out as a named statement, the same name every time and on every client; statements
 * without parameters and non-text queries go as they came; past the cap texts go unnamed. On a
 * real connection the named statements answer as plain ones do.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { PreparedNames } from '../../src/storage/postgres/prepared-statements.js';
import { postgresReachable, POSTGRES_SKIP_MESSAGE, TEST_DATABASE_URL } from '../support/stores.js';

const reachable = await postgresReachable();

/** What a named statement sent carries: a node-postgres Query (submittable) with its name, text and values. */
function namedOf(args: unknown[]) {
  assert.equal(args.length, 1);
  const q = args[0] as { name: string; text: string; values: unknown[]; submit: unknown };
  assert.equal(typeof q.submit, 'function');
  return { name: q.name, text: q.text, values: q.values };
}

function recordingClient() {
  const sent: unknown[][] = [];
  return { sent, client: { query: (...args: unknown[]) => sent.push(args) } };
}

test('a parameterized text is sent as a named statement, one name per text across clients', () => {
  const names = new PreparedNames();
  const a = recordingClient();
  const b = recordingClient();
  names.prepareOn(a.client);
  names.prepareOn(b.client);
  a.client.query('select * from "t" where "id" = $1', [1]);
  b.client.query('select * from "t" where "id" = $1', [2]);
  a.client.query('update "t" set "x" = $1', ['y']);
  assert.deepEqual(a.sent.map(namedOf), [
    { name: 's1', text: 'select * from "t" where "id" = $1', values: [1] },
    { name: 's2', text: 'update "t" set "x" = $1', values: ['y'] },
  ]);
  assert.deepEqual(b.sent.map(namedOf), [{ name: 's1', text: 'select * from "t" where "id" = $1', values: [2] }]);
});

test('BEGIN/COMMIT, statements without parameters, config objects and callbacks go as they came', () => {
  const names = new PreparedNames();
  const { sent, client } = recordingClient();
  names.prepareOn(client);
  const callback = () => undefined;
  const cursor = { text: 'select 1', submit() {} };
  client.query('begin');
  client.query('select 1', []);
  client.query(cursor);
  client.query('select $1', [1], callback);
  assert.deepEqual(sent, [['begin'], ['select 1', []], [cursor], ['select $1', [1], callback]]);
});

test('past the cap, new texts go unnamed; the named ones keep their names', () => {
  const names = new PreparedNames();
  for (let i = 0; i < 2000; i++) assert.equal(names.nameOf(`select ${i} where $1`), `s${i + 1}`);
  assert.equal(names.nameOf('select 0 where $1'), 's1');
  assert.equal(names.nameOf('select 2000 where $1'), null);
});

describe('on PostgreSQL', { skip: reachable ? false : POSTGRES_SKIP_MESSAGE }, () => {
  test('a named statement answers its rows, is prepared once per connection, and a failing one rejects alone', async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const names = new PreparedNames();
      names.prepareOn(client as unknown as { query(...args: unknown[]): unknown });
      const first = await client.query('select $1::int + 1 as n', [1]);
      const again = await client.query('select $1::int + 1 as n', [41]);
      assert.deepEqual([first.rows, again.rows], [[{ n: 2 }], [{ n: 42 }]]);
      // The second run's description is the first's, reused: the same fields, parsed alike.
      assert.deepEqual(
        again.fields.map((f) => [f.name, f.dataTypeID]),
        [['n', 23]],
      );
      const wide = 'select $1::int as a, $1::text as b, $1::bigint as c, null::int as d';
      for (const n of [7, 8]) assert.deepEqual((await client.query(wide, [n])).rows, [{ a: n, b: String(n), c: String(n), d: null }]);
      const prepared = await client.query('select count(*)::int as n from pg_prepared_statements where name = $1', ['s1']);
      assert.deepEqual(prepared.rows, [{ n: 1 }]);
      await assert.rejects(client.query('select $1::int as n', ['not a number']), /invalid input syntax for type integer/);
      assert.deepEqual((await client.query('select $1::int + 1 as n', [2])).rows, [{ n: 3 }]);
    } finally {
      await client.end();
    }
  });

  test('pipelined: a query sent while its statement is being parsed does not rely on that Parse, which an aborted transaction refuses', async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, pipeline: true } as pg.ClientConfig);
    await client.connect();
    try {
      const names = new PreparedNames();
      names.prepareOn(client as unknown as { query(...args: unknown[]): unknown });
      const text = 'select $1::int * 2 as n';
      // All sent at once: the named statement's first Parse comes after a failed statement in the
      // transaction, so PostgreSQL refuses it; the query after the rollback is already on its way.
      const sent = [client.query('BEGIN'), client.query('select 1 / 0'), client.query(text, [1]), client.query('ROLLBACK'), client.query(text, [2])];
      const [, failed, aborted, , after] = await Promise.allSettled(sent);
      assert.match(String((failed as PromiseRejectedResult).reason), /division by zero/);
      assert.match(String((aborted as PromiseRejectedResult).reason), /current transaction is aborted/);
      assert.equal(after!.status, 'fulfilled', String((after as PromiseRejectedResult).reason));
      assert.deepEqual((after as PromiseFulfilledResult<pg.QueryResult>).value.rows, [{ n: 4 }]);
      // And the name works from then on.
      assert.deepEqual((await client.query(text, [3])).rows, [{ n: 6 }]);
      assert.deepEqual((await client.query(text, [4])).rows, [{ n: 8 }]);
    } finally {
      await client.end();
    }
  });
});
