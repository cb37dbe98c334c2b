/**
 * Held writes and the lazy BEGIN on PostgreSQL (src/storage/postgres/write-combining.ts): what a
 * transaction sends (counted by the connection's statement counter), and that holding a write
 * never changes what the transaction reads, writes or leaves behind when it fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { connect, type Connection } from '../../src/storage/connect.js';
import { combine, deferrable, deferrableText } from '../../src/storage/postgres/write-combining.js';
import { createTestDatabase, postgresReachable, POSTGRES_SKIP_MESSAGE, type TestDatabase } from '../support/stores.js';

test('combine: one statement of data-modifying CTEs, parameters numbered on', () => {
  const one = CompiledQuery.raw('insert into "a" ("x") values ($1)', [1]);
  assert.equal(combine([one]), one, 'a single statement goes as it is');
  const combined = combine([
    one,
    CompiledQuery.raw('update "b" set "y" = $1 where "id" = $2', ['y', 2]),
    CompiledQuery.raw('insert into "c" ("z") values ($1)', [3]),
  ]);
  assert.equal(
    combined.sql,
    'with "w1" as (insert into "a" ("x") values ($1)), "w2" as (update "b" set "y" = $2 where "id" = $3), "w3" as (insert into "c" ("z") values ($4)) select 1',
  );
  assert.deepEqual(combined.parameters, [1, 'y', 2, 3]);
});

test('combine: a statement of CTEs is taken apart into the combined one, its names prefixed, a main SELECT read by the final one', () => {
  const combined = combine([
    CompiledQuery.raw('insert into "a" ("x") values ($1)', [1]),
    CompiledQuery.raw(
      `with "done" as (update "b" set "y" = $1 where "id" = $2 returning "id"), "kept" as (insert into "c" ("z") values (')(''x')) select count(*) from "done", "kept"`,
      ['y', 2],
    ),
    CompiledQuery.raw('with "made" as (insert into "d" ("v") values ($1)) insert into "e" ("w") values ($2)', [3, 4]),
  ]);
  assert.equal(
    combined.sql,
    'with "w1" as (insert into "a" ("x") values ($1)), "w2_done" as (update "b" set "y" = $2 where "id" = $3 returning "id"), "w2_kept" as (insert into "c" ("z") values (\')(\'\'x\')), "w2" as (select count(*) from "w2_done", "w2_kept"), "w3_made" as (insert into "d" ("v") values ($4)), "w3" as (insert into "e" ("w") values ($5)) select (select count(*) from "w2" where "w2" is not null)',
  );
  assert.deepEqual(combined.parameters, [1, 'y', 2, 3, 4]);
});

interface Tables {
  accounts: { id: number; name: string };
  child: { id: number; parentId: number };
  logbook: { id: number; note: string };
}

const reachable = await postgresReachable();

describe('PostgreSQL held writes', { skip: reachable ? false : POSTGRES_SKIP_MESSAGE }, () => {
  let database: TestDatabase;
  let connection: Connection;
  let db: Kysely<Tables>;

  before(async () => {
    database = await createTestDatabase('postgres');
    if (database.config.kind !== 'postgres') throw new Error('postgres expected');
    connection = connect(database.config, { schema: database.schema! });
    db = connection.db as unknown as Kysely<Tables>;
    await sql`create schema if not exists ${sql.id(database.schema!)}`.execute(db);
    await sql`create table accounts (id int primary key, name text not null)`.execute(db);
    await sql`create table child (id int primary key, parent_id int not null references accounts (id))`.execute(db);
    await sql`create table logbook (id int primary key, note text not null check (note <> ''))`.execute(db);
  });
  after(async () => {
    await connection.close();
    await database.drop();
  });

  /** What `fn` sent: statements and BEGIN/COMMIT. */
  async function sent(fn: () => Promise<unknown>) {
    connection.counters.start();
    try {
      await fn();
    } catch (err) {
      connection.counters.stop();
      throw err;
    }
    return connection.counters.stop();
  }

  const note = (id: number, text: string) => deferrable(db.insertInto('logbook').values({ id, note: text }));

  test('a transaction of held writes only: one statement, no BEGIN or COMMIT, all of it stored', async () => {
    const counts = await sent(() =>
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 1, note: 'a' })).execute();
        await deferrable(trx.insertInto('logbook').values({ id: 2, note: 'b' })).execute();
        await deferrable(trx.updateTable('logbook').set({ note: 'a2' }).where('id', '=', 3)).execute();
      }),
    );
    assert.deepEqual({ statements: counts.statements, control: counts.control, commits: counts.commits }, { statements: 1, control: 0, commits: 1 });
    const rows = await db.selectFrom('logbook').select(['id', 'note']).orderBy('id').execute();
    assert.deepEqual(rows, [
      { id: 1, note: 'a' },
      { id: 2, note: 'b' },
    ]);
  });

  test('a held statement of CTEs alone is the whole transaction; beside held writes naming its tables it goes as a statement of its own', async () => {
    await db.insertInto('accounts').values({ id: 50, name: 'p50' }).execute();
    const withCtes = (id: number) =>
      CompiledQuery.raw(
        deferrableText(`with "parent" as (update "accounts" set "name" = $1 where "id" = $2) insert into "logbook" ("id", "note") values ($3, $4)`),
        [`p50 via ${id}`, 50, id, `cte ${id}`],
      );
    const alone = await sent(() => db.transaction().execute((trx) => trx.executeQuery(withCtes(51))));
    assert.deepEqual({ statements: alone.statements, control: alone.control, commits: alone.commits }, { statements: 1, control: 0, commits: 1 });
    const mixed = await sent(() =>
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 52, note: 'plain' })).execute();
        await trx.executeQuery(withCtes(53));
        await trx.executeQuery(withCtes(54));
        await deferrable(trx.insertInto('logbook').values({ id: 55, note: 'plain after' })).execute();
      }),
    );
    // BEGIN, the plain write, each statement of CTEs, the last plain write, COMMIT: none nested in another.
    assert.deepEqual({ statements: mixed.statements, control: mixed.control }, { statements: 6, control: 2 });
    const rows = await db.selectFrom('logbook').select(['id', 'note']).where('id', '>=', 51).where('id', '<=', 55).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => r.note),
      ['cte 51', 'plain', 'cte 53', 'cte 54', 'plain after'],
    );
    assert.deepEqual(await db.selectFrom('accounts').select('name').where('id', '=', 50).execute(), [{ name: 'p50 via 54' }]);
  });

  test('a held statement of CTEs beside held writes on other tables: one statement; its main SELECT runs, and its refusal fails the whole commit', async () => {
    await db.insertInto('accounts').values({ id: 60, name: 'p60' }).execute();
    // Refuses itself (a cast that fails) when the account to rename is missing, as an answer's checked update does.
    const checkedRename = (id: number, name: string) =>
      CompiledQuery.raw(
        deferrableText(
          `with "renamed" as (update "accounts" set "name" = $1 where "id" = $2 returning "id") select cast(case when (select count(*) from "renamed") = 1 then '0' else cast($3 as text) end as integer) as "applied"`,
        ),
        [name, id, 'refused: no such account'],
      );
    const counts = await sent(() =>
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 61, note: 'with the rename' })).execute();
        await trx.executeQuery(checkedRename(60, 'p60 renamed'));
      }),
    );
    assert.deepEqual({ statements: counts.statements, control: counts.control, commits: counts.commits }, { statements: 1, control: 0, commits: 1 });
    assert.deepEqual(await db.selectFrom('accounts').select('name').where('id', '=', 60).execute(), [{ name: 'p60 renamed' }]);
    assert.deepEqual(await db.selectFrom('logbook').select('note').where('id', '=', 61).execute(), [{ note: 'with the rename' }]);

    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 62, note: 'refused with it' })).execute();
        await trx.executeQuery(checkedRename(99, 'nobody'));
      }),
      /refused: no such account/,
    );
    assert.deepEqual(await db.selectFrom('logbook').select('note').where('id', '=', 62).execute(), [], 'nothing of the refused commit kept');
  });

  test('an empty transaction sends nothing', async () => {
    const counts = await sent(() => db.transaction().execute(async () => 'nothing'));
    assert.equal(counts.statements, 0);
  });

  test('a read of a table with a held write sees it; a read of another table does not send it first', async () => {
    await db.insertInto('accounts').values({ id: 1, name: 'p1' }).execute();
    const counts = await sent(() =>
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 10, note: 'held' })).execute();
        const other = await trx.selectFrom('accounts').select('name').where('id', '=', 1).executeTakeFirstOrThrow();
        assert.equal(other.name, 'p1');
        const mine = await trx.selectFrom('logbook').select('note').where('id', '=', 10).executeTakeFirst();
        assert.equal(mine?.note, 'held', 'the held write was sent before the read that names its table');
      }),
    );
    // BEGIN, the parent read, the held insert, the logbook read, COMMIT; pipelined (connect.ts): BEGIN
    // with the parent read, the held insert with the logbook read, then COMMIT — three waits.
    assert.deepEqual({ statements: counts.statements, control: counts.control, roundTrips: counts.roundTrips }, { statements: 5, control: 2, roundTrips: 3 });
  });

  test('pipelined: BEGIN goes out with the first statement and the held writes with the COMMIT — a read and two held writes wait twice', async () => {
    await db.insertInto('accounts').values({ id: 2, name: 'p2' }).execute();
    const counts = await sent(() =>
      db.transaction().execute(async (trx) => {
        const read = await trx.selectFrom('accounts').select('name').where('id', '=', 2).executeTakeFirstOrThrow();
        await deferrable(trx.insertInto('logbook').values({ id: 40, note: `after ${read.name}` })).execute();
        await deferrable(trx.updateTable('accounts').set({ name: 'p2 seen' }).where('id', '=', 2)).execute();
      }),
    );
    assert.deepEqual(
      { statements: counts.statements, control: counts.control, commits: counts.commits, roundTrips: counts.roundTrips },
      { statements: 4, control: 2, commits: 1, roundTrips: 2 },
    );
    assert.deepEqual(await db.selectFrom('logbook').select('note').where('id', '=', 40).execute(), [{ note: 'after p2' }]);
    assert.deepEqual(await db.selectFrom('accounts').select('name').where('id', '=', 2).execute(), [{ name: 'p2 seen' }]);
  });

  test('a held INSERT into a table other rows refer to (accounts here) is sent before any other statement: a child row may need it', async () => {
    await db.transaction().execute(async (trx) => {
      await deferrable(trx.insertInto('accounts').values({ id: 20, name: 'held parent' })).execute();
      await trx.insertInto('child').values({ id: 20, parentId: 20 }).execute();
    });
    assert.deepEqual(await db.selectFrom('child').select(['id', 'parentId']).where('id', '=', 20).execute(), [{ id: 20, parentId: 20 }]);
  });

  test('a held write that fails fails its transaction: nothing of it stays, the connection is usable again', async () => {
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('accounts').values({ id: 30, name: 'sent at once' }).execute();
        await deferrable(trx.insertInto('logbook').values({ id: 30, note: '' })).execute();
      }),
      /logbook_note_check/,
    );
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await deferrable(trx.insertInto('logbook').values({ id: 31, note: 'fine' })).execute();
        await deferrable(trx.insertInto('logbook').values({ id: 32, note: '' })).execute();
      }),
      /logbook_note_check/,
    );
    assert.equal((await db.selectFrom('accounts').select('id').where('id', '=', 30).execute()).length, 0, 'rolled back with it');
    assert.equal((await db.selectFrom('logbook').select('id').where('id', 'in', [30, 31, 32]).execute()).length, 0);
    // Outside a transaction the mark changes nothing: the write runs at once.
    await note(33, 'at once').execute();
    assert.equal((await db.selectFrom('logbook').select('id').where('id', '=', 33).execute()).length, 1);
  });
});
