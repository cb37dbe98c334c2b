/**
 * The statement counter (src/storage/statement-counter.ts) counts exactly what reaches the
 * database, on both stores: known operations give known counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import type { NewAccount } from '../../src/modules/accounts/accounts.repository.js';
import { newId } from '../../src/shared/ids.js';
import { classify, type StatementCounts, type StatementTables, tablesOf, UNCOUNTED } from '../../src/storage/statement-counter.js';
import { availableStores } from '../support/stores.js';
import { iso, openTestStore, T0, type TestStore } from './fixtures.js';

const account = (): NewAccount => ({
  id: newId(),
  name: 'counted',
  email: 'counted@example.com',
  currencyCode: 'DKK',
  timezone: 'UTC',
  language: null,
  domain: 'example.com',
  createdAt: iso(T0),
});

const counts = (c: Partial<StatementCounts>): StatementCounts => {
  const full = { reads: 0, writes: 0, control: 0, commits: 0, autocommits: 0, rollbacks: 0, roundTrips: 0, ...c };
  return { ...full, statements: full.reads + full.writes + full.control };
};

test('statements are classified by their text', () => {
  assert.equal(classify('select * from jobs'), 'read');
  assert.equal(classify('insert into "jobs" ("id") values (?) returning *'), 'write');
  assert.equal(classify('  update jobs set state = $1'), 'write');
  assert.equal(classify('with due as (select id from jobs) update jobs set state = 1 where id in (select id from due)'), 'write');
  assert.equal(classify('with due as (select id from jobs) select * from due'), 'read');
  assert.equal(classify('BEGIN IMMEDIATE'), 'begin');
  assert.equal(classify('start transaction isolation level serializable'), 'begin');
  assert.equal(classify('COMMIT'), 'commit');
  assert.equal(classify('rollback'), 'rollback');
  assert.equal(classify('ROLLBACK TO group_commit_item'), 'savepoint');
  assert.equal(classify('RELEASE group_commit_item'), 'savepoint');
});

/** A Kysely that only compiles (no database). */
const compiler = new Kysely<Record<string, Record<string, unknown>>>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const tables = (...queries: Array<{ compile(): CompiledQuery }>) => tablesOf(queries.map((q) => q.compile().query));
const touched = (reads: string[], writes: string[] = []): StatementTables => ({ reads: new Set(reads), writes: new Set(writes) });

test('the tables a statement touches come from its operation tree: aliases, column references and CTE names aside', () => {
  const db = compiler;
  assert.deepEqual(
    tables(
      db
        .selectFrom('operations as o')
        .innerJoin('transactions as t', 't.id', 'o.transactionId')
        .selectAll('t')
        .select((eb) => eb.selectFrom('events as e').select('e.id').whereRef('e.accountId', '=', 't.accountId').limit(1).as('event'))
        .where('o.id', '=', 'x'),
    ),
    touched(['operations', 'transactions', 'events']),
    'joins and subqueries are read; "t" and "o" name no table',
  );
  assert.deepEqual(
    tables(db.updateTable('jobs as j').set({ state: 'done' }).where('j.id', 'in', db.selectFrom('leases').select('jobId'))),
    touched(['leases'], ['jobs']),
    'an update writes its table and reads its subquery’s',
  );
  assert.deepEqual(tables(db.deleteFrom('sessions').where('expiresAt', '<', 1)), touched([], ['sessions']));
  assert.deepEqual(
    tables(
      db
        .insertInto('counters')
        .values({ key: 'k', n: 1 })
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ n: eb.ref('excluded.n') }))),
    ),
    touched([], ['counters']),
    'excluded.n names no table',
  );
  assert.deepEqual(
    tables(
      db
        .with('due', (w) => w.selectFrom('jobs').select('id').where('state', '=', 'queued'))
        .with('taken', (w) => w.updateTable('jobs').set({ state: 'running' }).where('id', 'in', w.selectFrom('due').select('id')).returning('id'))
        .selectFrom('taken')
        .selectAll(),
    ),
    touched(['jobs'], ['jobs']),
    'CTEs are named, not tables',
  );
  assert.deepEqual(tables(db.insertInto('a').values({ x: 1 }), db.updateTable('b').set({ y: 2 })), touched([], ['a', 'b']), 'statements sent as one');
  assert.equal(tablesOf([CompiledQuery.raw('select * from "jobs"').query]), null, 'raw text: not known');
  assert.deepEqual(tablesOf([sql`select * from ${sql.table('jobs')}`.compile(db).query]), touched(['jobs']), 'a raw statement that names a table by node');
});

for (const kind of await availableStores()) {
  describe(`statement counter (${kind})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(kind);
    });
    after(() => t.close());
    /** Round trips are counted on PostgreSQL only: BEGIN goes out with the statement after it (pipelining). */
    const waits = (n: number) => ({ roundTrips: kind === 'postgres' ? n : 0 });

    test('off by default: nothing is counted', async () => {
      const { counters } = t.store;
      assert.equal(counters.enabled, false);
      await t.store.accounts.insert(account());
      assert.deepEqual(counters.snapshot(), counts({}));
    });

    test('one transaction with two inserts: two writes in one commit', async () => {
      t.store.counters.start();
      await t.store.transaction(async (repos) => {
        await repos.accounts.insert(account());
        await repos.accounts.insert(account());
      });
      // BEGIN (IMMEDIATE on SQLite), COMMIT: a group commit of one unit needs no savepoint.
      assert.deepEqual(t.store.counters.stop(), counts({ writes: 2, control: 2, commits: 1, ...waits(3) }));
    });

    test('counting may start inside a transaction: its writes are not taken for autocommits', async () => {
      await t.store.transaction(async (repos) => {
        await repos.accounts.insert(account());
        t.store.counters.start();
        await repos.accounts.insert(account());
      });
      // The insert and COMMIT (a group commit of one unit has no savepoint to release).
      assert.deepEqual(t.store.counters.stop(), counts({ writes: 1, control: 1, commits: 1, ...waits(2) }));
    });

    test('a read outside a transaction: one statement, no commit', async () => {
      const a = await t.store.accounts.insert(account());
      t.store.counters.start();
      assert.equal((await t.store.accounts.findById(a.id))?.id, a.id);
      assert.deepEqual(t.store.counters.stop(), counts({ reads: 1, ...waits(1) }));
    });

    if (kind === 'postgres') {
      test('PostgreSQL: the upkeep statements marked UNCOUNTED (planner statistics) are not counted', async () => {
        t.store.counters.start();
        await t.store.db.executeQuery(CompiledQuery.raw(`${UNCOUNTED}select relname from pg_stat_user_tables limit 1`, []));
        await t.store.db.executeQuery(CompiledQuery.raw(`${UNCOUNTED}analyze "jobs"`, []));
        assert.deepEqual(t.store.counters.stop(), counts({}));
      });
    }

    test('writes outside a transaction: one commit each on PostgreSQL, one group commit on SQLite', async () => {
      const a = await t.store.accounts.insert(account());
      const b = await t.store.accounts.insert(account());
      t.store.counters.start();
      await Promise.all([t.store.accounts.setStatus(a.id, 'ACTIVE', iso(T0 + 1)), t.store.accounts.setStatus(b.id, 'ACTIVE', iso(T0 + 1))]);
      const counted = t.store.counters.stop();
      if (kind === 'sqlite') {
        // Both statements are units of work of one group commit: BEGIN, the first, the second, COMMIT
        // (a single statement needs no savepoint: SQLite undoes a failed one alone).
        assert.deepEqual(counted, counts({ writes: 2, control: 2, commits: 1 }));
      } else {
        // Two autocommits on the shared connections: one wait when both went to the same one
        // (pipelined, one socket write), two when each went to its own.
        assert.deepEqual({ ...counted, roundTrips: 0 }, counts({ writes: 2, commits: 2, autocommits: 2 }));
        assert.ok(counted.roundTrips === 1 || counted.roundTrips === 2, `round trips: ${counted.roundTrips}`);
      }
    });

    test('a transaction that fails commits nothing: BEGIN, its write, ROLLBACK (on SQLite a group commit of one unit)', async () => {
      t.store.counters.start();
      await assert.rejects(
        t.store.transaction(async (repos) => {
          await repos.accounts.insert(account());
          throw new Error('refused');
        }),
        /refused/,
      );
      assert.deepEqual(t.store.counters.stop(), counts({ writes: 1, control: 2, rollbacks: 1, ...waits(2) }));
    });

    test('the log tells each statement’s kind and the tables it touched, from Kysely’s tree; BEGIN and COMMIT have none', async () => {
      const { counters } = t.store;
      const a = account();
      counters.log = [];
      counters.start();
      try {
        await t.store.transaction(async (repos) => {
          await repos.accounts.insert(a);
          await repos.accounts.findById(a.id);
        });
      } finally {
        counters.stop();
      }
      const logged = counters.logged().map((s) => ({ kind: s.kind, tables: s.tables }));
      counters.log = null;
      assert.deepEqual(logged, [
        { kind: 'begin', tables: null },
        { kind: 'write', tables: touched([], ['accounts']) },
        { kind: 'read', tables: touched(['accounts']) },
        { kind: 'commit', tables: null },
      ]);
    });
  });
}
