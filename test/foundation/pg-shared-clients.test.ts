/**
 * Statements outside transactions share pipelined connections on PostgreSQL
 * (src/storage/postgres/shared-clients.ts): those given to one connection in one turn of the event loop
 * leave in one socket write, each is its own implicit transaction (a failure fails it alone), a
 * connection that breaks is replaced, and closing waits for the statements under way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { refusedStatement, SharedClients } from '../../src/storage/postgres/shared-clients.js';
import { postgresReachable, POSTGRES_SKIP_MESSAGE, TEST_DATABASE_URL } from '../support/stores.js';

interface Stream {
  _write?: (...args: unknown[]) => unknown;
  _writev?: (...args: unknown[]) => unknown;
}

/** Counts the socket writes of every connection the pool opens. */
function countingPool(max: number) {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max, pipeline: true } as pg.PoolConfig);
  const counted = { writes: 0, pids: [] as number[], texts: [] as string[] };
  pool.on('connect', (client) => {
    // The text of every statement sent with parameters (the joined ones among them).
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && Array.isArray(args[1]) && args[1].length > 0) counted.texts.push(args[0]);
      return query(...args);
    };
    const stream = (client as unknown as { connection: { stream: Stream } }).connection.stream;
    for (const name of ['_write', '_writev'] as const) {
      const original = stream[name]?.bind(stream);
      if (original)
        stream[name] = (...args: unknown[]) => {
          counted.writes++;
          return original(...args);
        };
    }
  });
  return { pool, counted };
}

const pid = CompiledQuery.raw('select pg_backend_pid() as pid');

/** Ends the backend `backendPid` from another connection, as an administrator would. */
async function terminateBackend(backendPid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [backendPid]);
  } finally {
    await admin.end();
  }
}
const numbered = (n: number) => CompiledQuery.raw('select $1::int as n', [n]);

test('a joined statement goes again alone only after an error that rolled it back', () => {
  const answered = (code: string) => Object.assign(new pg.DatabaseError('refused', 0, 'error'), { code });
  assert.equal(refusedStatement(answered('23505')), true); // unique violation
  assert.equal(refusedStatement(answered('40001')), true); // serialization failure
  for (const code of ['57P01', '08006', '58030', 'XX000']) assert.equal(refusedStatement(answered(code)), false, code);
  assert.equal(refusedStatement(new Error('Connection terminated unexpectedly')), false);
});

const reachable = await postgresReachable();
if (!reachable) test(POSTGRES_SKIP_MESSAGE, { skip: true }, () => undefined);
else
  describe('shared connections (postgres)', () => {
    let pool: pg.Pool;
    let counted: { writes: number; texts: string[] };
    let shared: SharedClients;
    before(() => {
      ({ pool, counted } = countingPool(4));
      shared = new SharedClients(pool, 1);
    });
    after(async () => {
      await shared.close();
      await pool.end();
    });

    test('statements given in one turn leave in one socket write, and each gets its own answer', async () => {
      await shared.execute(pid); // opens the connection
      counted.writes = 0;
      const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => shared.execute<{ n: number }>(numbered(n))));
      assert.deepEqual(
        answers.map((a) => a.rows[0]!.n),
        Array.from({ length: 10 }, (_, n) => n),
      );
      assert.equal(counted.writes, 1);
    });

    test('a failing statement fails alone: those beside it are answered', async () => {
      const outcomes = await Promise.allSettled([shared.execute(numbered(1)), shared.execute(CompiledQuery.raw('select 1 / 0')), shared.execute(numbered(3))]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /division by zero/);
    });

    test('writes are counted as changed rows, as Kysely reports them', async () => {
      const created = await shared.execute(CompiledQuery.raw('create temporary table if not exists shared_t (x int)'));
      assert.equal(created.numAffectedRows, undefined);
      const inserted = await shared.execute(CompiledQuery.raw('insert into shared_t select generate_series(1, 3)'));
      assert.equal(inserted.numAffectedRows, 3n);
    });

    test('a connection that breaks is given back and replaced by the next statement', async () => {
      const before = (await shared.execute<{ pid: number }>(pid)).rows[0]!.pid;
      await terminateBackend(before);
      // The terminated connection's statement fails (or the connection is found ended first).
      for (let i = 0; i < 50; i++) {
        const outcome = await shared.execute<{ pid: number }>(pid).then(
          (r) => r.rows[0]!.pid,
          () => null,
        );
        if (outcome !== null) {
          assert.notEqual(outcome, before);
          return;
        }
      }
      assert.fail('no statement succeeded on a new connection');
    });

    test('joinable statements given in one turn commit as one statement; a refused one goes again alone', async () => {
      await shared.execute(CompiledQuery.raw('create table if not exists shared_joined (id int primary key, note text)'));
      await shared.execute(CompiledQuery.raw('truncate shared_joined'));
      const insert = (id: number) => CompiledQuery.raw('with "made" as (insert into "shared_joined" ("id", "note") values ($1, $2)) select 1', [id, `n${id}`]);
      counted.writes = 0;
      await Promise.all([1, 2, 3, 4].map((id) => shared.executeJoined(insert(id))));
      // One write for one statement; the four rows were made by one transaction.
      assert.equal(counted.writes, 1);
      const oneCommit = await shared.execute<{ n: string }>(CompiledQuery.raw('select count(distinct xmin::text) as n from shared_joined'));
      assert.equal(oneCommit.rows[0]!.n, '1');
      // Id 2 is taken: the joined statement is refused, then each goes alone and 2 alone fails.
      const outcomes = await Promise.allSettled([5, 2, 6].map((id) => shared.executeJoined(insert(id))));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /duplicate key/);
      const ids = await shared.execute<{ id: number }>(CompiledQuery.raw('select id from shared_joined order by id'));
      assert.deepEqual(
        ids.rows.map((r) => r.id),
        [1, 2, 3, 4, 5, 6],
      );
      await shared.execute(CompiledQuery.raw('drop table shared_joined'));
    });

    test('joinable statements of one turn of different kinds commit as one transaction in one write, each statement its own text', async () => {
      await shared.execute(CompiledQuery.raw('create table if not exists shared_kinds (id int primary key, kind text)'));
      await shared.execute(CompiledQuery.raw('truncate shared_kinds'));
      const firstText = 'with "a" as (insert into "shared_kinds" ("id", "kind") values ($1, \'first\')) select 1';
      const secondText = 'with "b" as (insert into "shared_kinds" ("id", "kind") values ($1, \'second\')) select 1';
      const first = (id: number) => CompiledQuery.raw(firstText, [id]);
      const second = (id: number) => CompiledQuery.raw(secondText, [id]);
      counted.texts = [];
      counted.writes = 0;
      await Promise.all([first(1), second(2), first(3), second(4), first(5)].map((q) => shared.executeJoined(q)));
      assert.equal(counted.writes, 1, 'BEGIN, the five statements and COMMIT in one socket write');
      await Promise.all([second(6), first(7), second(8), first(9), first(10)].map((q) => shared.executeJoined(q)));
      const commits = await shared.execute<{ n: string }>(CompiledQuery.raw('select count(distinct xmin::text) as n from shared_kinds'));
      assert.equal(commits.rows[0]!.n, '2');
      // No text made of the mix: each statement went as its own text (one prepared statement, its plan cached).
      assert.deepEqual(new Set(counted.texts), new Set([firstText, secondText]));
      assert.equal(counted.texts.length, 10);
      await shared.execute(CompiledQuery.raw('drop table shared_kinds'));
    });

    test('a lingering statement waits for the next joinable one and commits with it; alone, it commits when its wait is over', async () => {
      await shared.execute(CompiledQuery.raw('create table if not exists shared_linger (id int primary key)'));
      await shared.execute(CompiledQuery.raw('truncate shared_linger'));
      const insert = (id: number) => CompiledQuery.raw('with "made" as (insert into "shared_linger" ("id") values ($1)) select 1', [id]);
      let lingered = false;
      const lingering = shared.executeJoined(insert(1), 60_000).then(() => (lingered = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Still waiting: nothing of it was sent.
      assert.equal(lingered, false);
      assert.equal((await shared.execute<{ n: string }>(CompiledQuery.raw('select count(*) as n from shared_linger'))).rows[0]!.n, '0');
      await Promise.all([shared.executeJoined(insert(2)), lingering]);
      const together = await shared.execute<{ n: string; rows: string }>(
        CompiledQuery.raw('select count(distinct xmin::text) as n, count(*) as rows from shared_linger'),
      );
      assert.deepEqual(together.rows[0], { n: '1', rows: '2' });
      // Nobody else comes: it goes alone once its wait is over.
      await shared.executeJoined(insert(3), 10);
      const ids = await shared.execute<{ id: number }>(CompiledQuery.raw('select id from shared_linger order by id'));
      assert.deepEqual(
        ids.rows.map((r) => r.id),
        [1, 2, 3],
      );
      await shared.execute(CompiledQuery.raw('drop table shared_linger'));
    });

    test('two checked updates of one row joined: the second sees the first, as if each went alone', async () => {
      await shared.execute(CompiledQuery.raw('create table if not exists shared_checked (id int primary key, v int not null)'));
      await shared.execute(CompiledQuery.raw('truncate shared_checked'));
      await shared.execute(CompiledQuery.raw('insert into shared_checked values (1, 0)'));
      // As an answer's predicted update: refused (a failing cast) unless its update left the row.
      const add = (n: number) =>
        CompiledQuery.raw(
          `with "updated" as (update "shared_checked" set "v" = "v" + $1 where "id" = 1 returning "v") select cast(case when exists (select 1 from "updated") then '0' else 'refused' end as integer)`,
          [n],
        );
      await Promise.all([shared.executeJoined(add(1)), shared.executeJoined(add(10))]);
      // Each update sees the one before it, as alone: neither is lost.
      const row = await shared.execute<{ v: number }>(CompiledQuery.raw('select v from shared_checked'));
      assert.equal(row.rows[0]!.v, 11);
      await shared.execute(CompiledQuery.raw('drop table shared_checked'));
    });

    test('joinable statements whose connection is lost all fail and none is sent again', async () => {
      await shared.execute(CompiledQuery.raw('create table if not exists shared_lost (id int primary key)'));
      const backend = (await shared.execute<{ pid: number }>(pid)).rows[0]!.pid;
      const slow = (id: number) => CompiledQuery.raw('with "made" as (insert into "shared_lost" ("id") select $1::int from pg_sleep(0.5)) select 1', [id]);
      const joined = Promise.allSettled([1, 2].map((id) => shared.executeJoined(slow(id))));
      await new Promise((resolve) => setTimeout(resolve, 150));
      await terminateBackend(backend);
      const outcomes = await joined;
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected'],
      );
      // Given time to be sent again (they must not be), the table stays empty.
      await new Promise((resolve) => setTimeout(resolve, 700));
      const rows = await shared.execute<{ n: string }>(CompiledQuery.raw('select count(*) as n from shared_lost'));
      assert.equal(rows.rows[0]!.n, '0');
      await shared.execute(CompiledQuery.raw('drop table shared_lost'));
    });

    test('close waits for the statements under way', async () => {
      const { pool: other } = countingPool(2);
      const closing = new SharedClients(other, 1);
      await closing.execute(pid);
      const slow = closing.execute<{ done: number }>(CompiledQuery.raw('select pg_sleep(0.2), 1 as done'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await closing.close();
      assert.equal((await slow).rows[0]!.done, 1);
      await other.end();
      await assert.rejects(closing.execute(pid), /closed/);
    });
  });
