/**
 * The embedded store's drivers (src/storage/sqlite/driver.ts): node:sqlite where Node has it,
 * better-sqlite3 elsewhere. Every driver that loads on the Node running the tests is checked for
 * what the storage layer relies on: durability settings, the group commit (a failing unit rolled
 * back alone, one COMMIT per batch), the transaction state asked of the connection, rows and
 * parameters in better-sqlite3's shape, and errors named by SQLite's extended result code, so
 * that unavailable.ts tells an outage (busy, full) from a defect (a constraint).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { connect, type Connection } from '../../src/storage/connect.js';
import { MAIN_AUTOCHECKPOINT_PAGES } from '../../src/storage/sqlite/wal-checkpointer.js';
import { resultCodeName } from '../../src/storage/sqlite/handle.js';
import { availableSqliteDrivers, openSqlite, sqliteDriver, SqliteError } from '../../src/storage/sqlite/driver.js';
import { isStoreUnavailable } from '../../src/storage/unavailable.js';
import { WriteBatcher } from '../../src/storage/sqlite/group-commit.js';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 16);

/** The error `fn` throws (fails when it throws none). */
function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  return assert.fail('expected an error');
}

test('the default driver: node:sqlite where this Node has it, better-sqlite3 elsewhere', () => {
  const drivers = availableSqliteDrivers();
  assert.ok(drivers.length > 0, 'at least one driver loads');
  assert.equal(sqliteDriver(), hasNodeSqlite ? 'node:sqlite' : 'better-sqlite3');
  assert.equal(drivers.includes('node:sqlite'), hasNodeSqlite);
});

test('result code names are better-sqlite3’s', () => {
  assert.equal(resultCodeName(5), 'SQLITE_BUSY');
  assert.equal(resultCodeName(5 | (3 << 8)), 'SQLITE_BUSY_TIMEOUT');
  assert.equal(resultCodeName(13), 'SQLITE_FULL');
  assert.equal(resultCodeName(10 | (3 << 8)), 'SQLITE_IOERR_WRITE');
  assert.equal(resultCodeName(10 | (4 << 8)), 'SQLITE_IOERR_FSYNC');
  assert.equal(resultCodeName(2067), 'SQLITE_CONSTRAINT_UNIQUE');
  assert.equal(resultCodeName(19 | (1 << 8)), 'SQLITE_CONSTRAINT_CHECK');
  assert.equal(resultCodeName(19 | (3 << 8)), 'SQLITE_CONSTRAINT_FOREIGNKEY');
  assert.equal(resultCodeName(19 | (6 << 8)), 'SQLITE_CONSTRAINT_PRIMARYKEY');
  assert.equal(resultCodeName(4 | (2 << 8)), 'SQLITE_ABORT_ROLLBACK');
  assert.equal(resultCodeName(10 | (99 << 8)), 'SQLITE_IOERR', 'an unknown extended code: its primary name');
});

for (const driver of availableSqliteDrivers()) {
  describe(`SQLite driver ${driver}`, () => {
    let dir: string;
    let connection: Connection;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-driver-'));
      connection = connect({ kind: 'sqlite', path: path.join(dir, 'store.db') }, { sqliteDriver: driver });
      await sql`create table t (id integer primary key, v text not null unique, n integer check (n >= 0))`.execute(connection.db);
    });
    after(async () => {
      await connection.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('durable settings: WAL, synchronous=NORMAL with the WAL synced after each group commit, foreign keys, the busy timeout', () => {
      const handle = connection.statements!.handle;
      assert.equal(connection.sqliteDriver, driver);
      assert.equal(handle.driver, driver);
      assert.equal(handle.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(handle.pragma('synchronous', { simple: true }), 1, 'NORMAL: the COMMIT itself does not fsync');
      assert.equal(typeof connection.sync, 'function', 'the connection syncs its WAL on demand (wal-sync.ts)');
      assert.equal(handle.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(handle.pragma('busy_timeout', { simple: true }), 10000);
      assert.equal(handle.pragma('case_sensitive_like', { simple: true }), undefined, 'a write-only pragma answers nothing');
      assert.equal(handle.pragma('temp_store', { simple: true }), 2, 'MEMORY: savepoint journals and temporary tables never go to a file');
    });

    test('checkpoints: false leaves every frame in the WAL (no automatic checkpoint)', async () => {
      assert.equal(connection.statements!.handle.pragma('wal_autocheckpoint', { simple: true }), MAIN_AUTOCHECKPOINT_PAGES, 'by default');
      const file = path.join(dir, 'no-checkpoints.db');
      const kept = connect({ kind: 'sqlite', path: file }, { sqliteDriver: driver, checkpoints: false });
      try {
        assert.equal(kept.statements!.handle.pragma('wal_autocheckpoint', { simple: true }), 0);
        await sql`create table w (id integer primary key, v text not null)`.execute(kept.db);
        // Past SQLite's default mark of 1 000 pages: nothing checkpoints, nothing starts the WAL over.
        for (let round = 0; round < 3; round++) {
          await sql`with recursive n (i) as (select 1 union all select i + 1 from n where i < 2000) insert into w (v) select hex(zeroblob(1000)) from n`.execute(
            kept.db,
          );
        }
        const frames = (fs.statSync(`${file}-wal`).size - 32) / (4096 + 24);
        assert.ok(frames > 2500, `every frame kept: ${frames}`);
      } finally {
        await kept.close();
      }
    });

    test('group commit: the savepoint journal of a large batch stays in memory, no temporary file', async () => {
      // Each unit after a batch's first runs in a SAVEPOINT: SQLite keeps the pages it changes in a
      // statement journal, spilled past 64 KiB to a temporary file (created, written and deleted
      // per batch) unless temp_store is MEMORY. SQLite unlinks the file at once, so it is looked
      // for among the process's open files, by the prefix SQLite names its temporary files with.
      const openTemporaryFiles = () =>
        fs.readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`).includes('/etilqs_');
          } catch {
            return false;
          }
        }).length;
      let seenAtCommit = -1;
      try {
        await sql`create table wide (id integer primary key, v text not null)`.execute(connection.db);
        // 400 rows of 1 KiB: about 100 pages, each unit below changes every one of them.
        await sql`with recursive n (i) as (select 1 union all select i + 1 from n where i < 400) insert into wide (id, v) select i, hex(zeroblob(512)) from n`.execute(
          connection.db,
        );
        const batcher = new WriteBatcher(connection.db, connection.statements!, { beforeCommit: () => void (seenAtCommit = openTemporaryFiles()) });
        const units = [1, 2, 3].map((round) => batcher.run(async (db) => sql`update wide set v = ${String(round).repeat(1024)}`.execute(db)));
        await Promise.all(units);
        assert.equal(batcher.stats.commits, 1, 'the three units in one commit, the last two in savepoints');
        assert.equal(seenAtCommit, 0, 'no temporary file open while the batch was written');
        const rows = await sql<{ v: string }>`select distinct v from wide`.execute(connection.db);
        assert.deepEqual(
          rows.rows.map((r) => r.v),
          ['3'.repeat(1024)],
        );
      } finally {
        await sql`drop table if exists wide`.execute(connection.db);
      }
    });

    test('statements: parameters spread or as an array, plain rows, reader, changes and rowid', () => {
      const handle = openSqlite(':memory:', driver);
      try {
        assert.equal(handle.pragma('busy_timeout', { simple: true }), 5000, 'a locked database is waited for, 5 s by default');
        handle.exec('create table r (id integer primary key, v text, b blob, x real)');
        const insert = handle.prepare('insert into r (v, b, x) values (?, ?, ?)');
        assert.equal(insert.reader, false);
        assert.deepEqual({ ...insert.run('a', Buffer.from([1, 2]), 1.5) }, { changes: 1, lastInsertRowid: 1 });
        assert.equal(insert.run(['b', null, Number.NaN]).lastInsertRowid, 2, 'one array of parameters');
        const select = handle.prepare('select id, v, b, x from r order by id');
        assert.equal(select.reader, true);
        const rows = select.all() as Array<Record<string, unknown>>;
        assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype, 'a plain object');
        const { b, ...rest } = rows[0]!;
        assert.deepEqual(rest, { id: 1, v: 'a', x: 1.5 });
        assert.ok(b instanceof Uint8Array, 'a blob is bytes (a Buffer on better-sqlite3)');
        assert.deepEqual([...b], [1, 2]);
        assert.deepEqual(rows[1], { id: 2, v: 'b', b: null, x: null }, 'NaN is bound as NULL');
        assert.deepEqual(handle.prepare('select v from r where id = ?').get(2), { v: 'b' });
        assert.equal(handle.prepare('select v from r where id = ?').get(99), undefined);
        assert.equal(handle.prepare('insert into r (v) values (?) returning id').reader, true, 'RETURNING reads');
        assert.deepEqual(handle.prepare('select 1 as a, 2 as a').get(), { a: 2 }, 'a later column of the same name wins');
        // Beyond 2^53 an integer is read as the nearest number, as better-sqlite3 does.
        handle.exec('insert into r (id, v) values (9007199254740993, null)');
        assert.deepEqual(handle.prepare('select id from r where v is null and id > 3').all(), [{ id: 9007199254740992 }]);
      } finally {
        handle.close();
      }
    });

    test('rows built from their values (sqlite/rows.ts): columns in order, any name, an iteration ended early frees its statement', () => {
      const handle = openSqlite(':memory:', driver);
      try {
        const odd = handle.prepare(`select 1 as "z", 2 as "a""b", 3 as "back\\slash", 4 as "}; throw 1; ({", 5 as "é ü", 6 as "__proto__"`);
        const row = odd.get() as Record<string, unknown>;
        assert.deepEqual(Object.keys(row), ['z', 'a"b', 'back\\slash', '}; throw 1; ({', 'é ü', '__proto__']);
        assert.deepEqual(Object.values(row), [1, 2, 3, 4, 5, 6]);
        assert.equal(Object.getPrototypeOf(row), Object.prototype, 'a "__proto__" column is a property, not the prototype');
        const rows = handle.prepare('select value from json_each(?)');
        const iteration = rows.iterate('[1, 2, 3]');
        assert.equal(rows.busy, true, 'busy from the call on, before the first row is read');
        assert.deepEqual(iteration.next().value, { value: 1 });
        iteration.return?.();
        assert.equal(rows.busy, false, 'ended early: free again');
        assert.deepEqual(rows.all('[4]'), [{ value: 4 }]);
      } finally {
        handle.close();
      }
    });

    test('an iteration keeps its statement busy until it ends; the statement cache hands out another', () => {
      const cache = connection.statements!;
      cache.handle.exec("insert into t (id, v) values (100, 'i1'), (101, 'i2')");
      const text = 'select id from t where id >= 100 order by id';
      const first = cache.prepare(text);
      const rows = first.iterate();
      assert.deepEqual(rows.next().value, { id: 100 });
      assert.equal(first.busy, true);
      const second = cache.prepare(text);
      assert.notEqual(second, first, 'a busy statement is not handed out again');
      assert.deepEqual(second.all(), [{ id: 100 }, { id: 101 }]);
      assert.deepEqual(rows.next().value, { id: 101 }, 'the open iteration goes on');
      assert.equal(rows.next().done, true);
      assert.equal(first.busy, false);
      assert.equal(cache.prepare(text), first);
      cache.handle.exec('delete from t where id >= 100');
    });

    test('group commit: one COMMIT per batch, a failing unit rolled back alone with its constraint error', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const write = (id: number, v: string, n = 0) =>
        batcher.run(async (db) => {
          await sql`insert into t (id, v, n) values (${id}, ${v}, ${n})`.execute(db);
          return id;
        });
      const results = await Promise.allSettled([write(1, 'a'), write(2, 'a'), write(3, 'c', -1), write(4, 'd')]);
      assert.equal(batcher.stats.commits, 1, 'the four units in one commit');
      assert.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code?: string }).code)),
        [1, 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_CHECK', 4],
      );
      for (const r of results) if (r.status === 'rejected') assert.equal(isStoreUnavailable(r.reason), false, 'a constraint is a defect, not an outage');
      const rows = await sql<{ id: number }>`select id from t where id < 100 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [1, 4],
      );
      assert.equal(connection.statements!.handle.inTransaction, false);
    });

    test('group commit: nobody is answered before the batch is durable; a failed sync fails the batch like a failed COMMIT', async () => {
      let syncs = 0;
      let release!: () => void;
      let failNext = false;
      const durable = async () => {
        syncs++;
        if (failNext) throw Object.assign(new Error('fsync failed'), { code: 'EIO' });
        await new Promise<void>((resolve) => (release = resolve));
      };
      const batcher = new WriteBatcher(connection.db, connection.statements!, { durable });
      let settled = false;
      const units = Promise.all([60, 61].map((id) => batcher.run(async (db) => sql`insert into t (id, v, n) values (${id}, ${`d${id}`}, ${0})`.execute(db))));
      void units.then(() => (settled = true));
      while (syncs === 0) await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(settled, false, 'committed, not yet synced: not answered');
      release();
      await units;
      assert.equal(syncs, 1, 'one sync for the batch of two');
      failNext = true;
      await assert.rejects(
        batcher.run(async (db) => sql`insert into t (id, v, n) values (${62}, ${'d62'}, ${0})`.execute(db)),
        /fsync failed/,
      );
      assert.equal(connection.statements!.handle.inTransaction, false);
      assert.equal(syncs, 2);
    });

    test('the WAL sync: an fdatasync of the connection’s WAL file, again and again, without error', async () => {
      await sql`insert into t (id, v, n) values (${70}, ${'wal'}, ${0})`.execute(connection.db);
      assert.ok(fs.existsSync(path.join(dir, 'store.db-wal')), 'the WAL exists once something was written');
      await connection.sync!();
      await connection.sync!();
    });

    test('group commit of one unit: no savepoint; when it fails its transaction is rolled back and nothing stays', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const ok = await batcher.run(async (db) => {
        await sql`insert into t (id, v, n) values (${50}, ${'solo'}, ${0})`.execute(db);
        return 'ok';
      });
      assert.equal(ok, 'ok');
      await assert.rejects(
        batcher.run(async (db) => {
          await sql`insert into t (id, v, n) values (${51}, ${'half'}, ${0})`.execute(db);
          await sql`insert into t (id, v, n) values (${52}, ${'bad'}, ${-1})`.execute(db);
        }),
        (err: { code?: string }) => err.code === 'SQLITE_CONSTRAINT_CHECK',
      );
      assert.equal(connection.statements!.handle.inTransaction, false);
      assert.equal(batcher.stats.commits, 1, 'the failed unit committed nothing');
      const rows = await sql<{ id: number }>`select id from t where id between 50 and 59 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [50],
        'the failed unit’s first insert was rolled back with it',
      );
    });

    type UnitDb = Parameters<Parameters<WriteBatcher['run']>[0]>[0];
    const insert = (db: UnitDb, id: number, n = 0) => sql`insert into t (id, v, n) values (${id}, ${`u${id}`}, ${n})`.execute(db);
    /** The units' outcomes (true, or the error's code) and the transaction control statements they cost. */
    async function controlOf(units: () => Array<Promise<unknown>>) {
      const counter = connection.statements!.counter;
      counter.log = [];
      counter.start();
      const results = await Promise.allSettled(units());
      counter.stop();
      const control = counter.log.filter((s) => !/^insert/i.test(s));
      counter.log = null;
      return { outcomes: results.map((r) => r.status === 'fulfilled' || (r.reason as { code?: string }).code), control };
    }

    test('group commit: a failing first unit is rolled back with its transaction (no savepoint), the units after it commit in another', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const { outcomes, control } = await controlOf(() => [
        batcher.run(async (db) => {
          await insert(db, 80);
          await insert(db, 81, -1);
        }),
        batcher.run((db) => insert(db, 82)),
        batcher.run((db) => insert(db, 83)),
      ]);
      assert.deepEqual(outcomes, ['SQLITE_CONSTRAINT_CHECK', true, true]);
      assert.deepEqual(control, ['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', 'SAVEPOINT group_commit_item', 'RELEASE group_commit_item', 'COMMIT']);
      assert.equal(batcher.stats.commits, 1);
      const rows = await sql<{ id: number }>`select id from t where id between 80 and 89 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [82, 83],
        'the first unit left nothing',
      );
    });

    test('group commit: units that fail after writing are rolled back to their own savepoint, those before and after them commit', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const { outcomes, control } = await controlOf(() => [
        batcher.run((db) => insert(db, 200)),
        batcher.run(async (db) => {
          await insert(db, 201);
          await insert(db, 202, -1);
        }),
        batcher.run((db) => insert(db, 203)),
        batcher.run(async (db) => {
          await insert(db, 204);
          await insert(db, 205);
          await insert(db, 206, -1);
        }),
        batcher.run((db) => insert(db, 207)),
      ]);
      assert.deepEqual(outcomes, [true, 'SQLITE_CONSTRAINT_CHECK', true, 'SQLITE_CONSTRAINT_CHECK', true]);
      // One savepoint per unit after the first: released when the unit is done, rolled back to (then released) when it fails.
      const [savepoint, back, release] = ['SAVEPOINT', 'ROLLBACK TO', 'RELEASE'].map((verb) => `${verb} group_commit_item`);
      assert.deepEqual(control, ['BEGIN IMMEDIATE', savepoint, back, release, savepoint, release, savepoint, back, release, savepoint, release, 'COMMIT']);
      assert.equal(batcher.stats.commits, 1);
      const rows = await sql<{ id: number }>`select id from t where id between 200 and 209 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [200, 203, 207],
        'the failed units left nothing, the others everything',
      );
    });

    test('group commit: single statements need no savepoint; a failing one is undone by SQLite alone, those before and after it commit', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const write = (id: number, n = 0) => batcher.execute(sql`insert into t (id, v, n) values (${id}, ${`s${id}`}, ${n})`.compile(connection.db));
      const { outcomes, control } = await controlOf(() => [
        batcher.run(async (db) => {
          await insert(db, 400);
          await insert(db, 401);
        }),
        write(402),
        write(403, -1),
        write(404),
      ]);
      assert.deepEqual(outcomes, [true, true, 'SQLITE_CONSTRAINT_CHECK', true]);
      assert.deepEqual(control, ['BEGIN IMMEDIATE', 'COMMIT']);
      const rows = await sql<{ id: number }>`select id from t where id between 400 and 409 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [400, 401, 402, 404],
      );
    });

    test('group commit: replayable units need no savepoint; when one fails after writing, the transaction is rolled back and those before it run again, once per batch', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const runs = new Map<number, number>();
      const replayable = (ids: number[], failing = false) =>
        batcher.run(
          async (db) => {
            runs.set(ids[0]!, (runs.get(ids[0]!) ?? 0) + 1);
            for (const id of ids) await insert(db, id);
            if (failing) await insert(db, ids[0]! + 50, -1);
          },
          { replayable: true },
        );
      const { outcomes, control } = await controlOf(() => [
        replayable([500, 501]),
        replayable([502]),
        replayable([503, 504], true),
        replayable([505]),
        replayable([506], true),
        replayable([507]),
      ]);
      assert.deepEqual(outcomes, [true, true, 'SQLITE_CONSTRAINT_CHECK', true, 'SQLITE_CONSTRAINT_CHECK', true]);
      const [savepoint, back, release] = ['SAVEPOINT', 'ROLLBACK TO', 'RELEASE'].map((verb) => `${verb} group_commit_item`);
      assert.deepEqual(control, [
        'BEGIN IMMEDIATE',
        // 500, 502 and 503 bare; 503 fails: all three rolled back, 500 and 502 run again, now with savepoints after the first.
        'ROLLBACK',
        'BEGIN IMMEDIATE',
        savepoint,
        release,
        savepoint,
        release,
        savepoint,
        back,
        release,
        savepoint,
        release,
        'COMMIT',
      ]);
      assert.deepEqual(Object.fromEntries(runs), { 500: 2, 502: 2, 503: 1, 505: 1, 506: 1, 507: 1 });
      assert.equal(batcher.stats.replays, 1);
      assert.equal(batcher.stats.commits, 1);
      const rows = await sql<{ id: number }>`select id from t where id between 500 and 599 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [500, 501, 502, 505, 507],
        'the failed units left nothing, the others everything, once',
      );
    });

    test('group commit: after a unit that may not run again, replayable units take savepoints', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const { outcomes, control } = await controlOf(() => [
        batcher.run((db) => insert(db, 600), { replayable: true }),
        batcher.run((db) => insert(db, 601)),
        batcher.run(
          async (db) => {
            await insert(db, 602);
            await insert(db, 603, -1);
          },
          { replayable: true },
        ),
        batcher.run((db) => insert(db, 604), { replayable: true }),
      ]);
      assert.deepEqual(outcomes, [true, true, 'SQLITE_CONSTRAINT_CHECK', true]);
      const [savepoint, back, release] = ['SAVEPOINT', 'ROLLBACK TO', 'RELEASE'].map((verb) => `${verb} group_commit_item`);
      assert.deepEqual(control, ['BEGIN IMMEDIATE', savepoint, release, savepoint, back, release, savepoint, release, 'COMMIT']);
      assert.equal(batcher.stats.replays, 0);
      const rows = await sql<{ id: number }>`select id from t where id between 600 and 609 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [600, 601, 604],
      );
    });

    test('group commit: a lingering unit joins the next commit another unit starts, or commits alone once it has waited; drain takes it at once', async () => {
      const batcher = new WriteBatcher(connection.db, connection.statements!);
      const insert = (id: number, lingerMs?: number) =>
        batcher.run((db) => sql`insert into t (id, v, n) values (${id}, ${`l${id}`}, ${0})`.execute(db), lingerMs === undefined ? {} : { lingerMs });
      const settled = new Set<number>();
      const track = (id: number, p: Promise<unknown>) => p.then(() => settled.add(id));

      const joined = track(90, insert(90, 60_000));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(settled.has(90), false, 'it starts no commit of its own');
      assert.equal(batcher.stats.commits, 0);
      await insert(91);
      await joined;
      assert.equal(batcher.stats.commits, 1, 'it joined the commit of the unit after it');

      await batcher.drain();
      const started = Date.now();
      const alone = track(92, insert(92, 80));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(settled.has(92), false);
      await alone;
      assert.ok(Date.now() - started >= 75, 'committed alone after its wait');
      assert.equal(batcher.stats.commits, 2);

      await batcher.drain();
      void track(93, insert(93, 60_000));
      await batcher.drain();
      assert.equal(settled.has(93), true, 'drain commits it without waiting');
      assert.equal(batcher.stats.commits, 3);
      assert.equal(batcher.stats.lingered, 3);
      const rows = await sql<{ id: number }>`select id from t where id between 90 and 99 order by id`.execute(connection.db);
      assert.deepEqual(
        rows.rows.map((r) => r.id),
        [90, 91, 92, 93],
      );
    });

    test('group commit: a lingering unit queued while a commit is under way waits for the next commit another unit starts; one queued with a commit about to start joins it', async () => {
      let late: Promise<unknown> | null = null;
      const batcher = new WriteBatcher(connection.db, connection.statements!, {
        beforeCommit: () => {
          late ??= batcher.run((db) => sql`insert into t (id, v, n) values (${95}, ${'busy'}, ${0})`.execute(db), { lingerMs: 60_000 });
        },
      });
      let lateSettled = false;
      await batcher.run((db) => sql`insert into t (id, v, n) values (${94}, ${'first'}, ${0})`.execute(db));
      void late!.then(() => (lateSettled = true));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(lateSettled, false, 'it starts no commit of its own after the one under way');
      assert.equal(batcher.stats.commits, 1);
      await batcher.run((db) => sql`insert into t (id, v, n) values (${96}, ${'next'}, ${0})`.execute(db));
      await late;
      assert.equal(batcher.stats.commits, 2, 'it joined the next commit another unit started');
      assert.equal(batcher.stats.lingered, 1);

      // Queued in the same turn as a unit that starts a commit: no wait, the same commit.
      const urgent = batcher.run((db) => sql`insert into t (id, v, n) values (${97}, ${'urgent'}, ${0})`.execute(db));
      const joining = batcher.run((db) => sql`insert into t (id, v, n) values (${98}, ${'joins'}, ${0})`.execute(db), { lingerMs: 60_000 });
      await Promise.all([urgent, joining]);
      assert.equal(batcher.stats.commits, 3);
      assert.equal(batcher.stats.lingered, 1, 'the second one did not linger');
    });

    test('inTransaction is asked of the connection: BEGIN, COMMIT, and a transaction SQLite ended by itself', () => {
      const handle = openSqlite(':memory:', driver);
      try {
        handle.exec('create table r (v text)');
        assert.equal(handle.inTransaction, false);
        handle.exec('begin immediate');
        assert.equal(handle.inTransaction, true);
        handle.prepare('commit').run();
        assert.equal(handle.inTransaction, false);
        // A RAISE(ROLLBACK) ends the transaction inside SQLite, as an I/O error or a full disk may.
        handle.exec("create trigger stop before insert on r when new.v = 'stop' begin select raise(rollback, 'stopped'); end");
        handle.exec('begin');
        handle.prepare('insert into r values (?)').run('kept?');
        const err = thrown(() => handle.prepare('insert into r values (?)').run('stop'));
        assert.ok(err instanceof SqliteError || err.code?.startsWith('SQLITE_'), String(err));
        assert.match(err.code!, /^SQLITE_CONSTRAINT/);
        assert.equal(handle.inTransaction, false, 'rolled back by SQLite');
        assert.deepEqual(handle.prepare('select count(*) as n from r').get(), { n: 0 });
      } finally {
        handle.close();
      }
    });

    test('outages: locked past the busy timeout and a full disk are, a constraint and a syntax error are not', () => {
      const file = path.join(dir, 'outage.db');
      const holder = openSqlite(file, driver);
      const other = openSqlite(file, driver);
      try {
        holder.pragma('journal_mode = WAL');
        holder.exec('create table o (v text unique)');
        other.pragma('busy_timeout = 0');
        holder.exec('begin immediate');
        const busy = thrown(() => other.prepare('insert into o values (?)').run('x'));
        holder.exec('rollback');
        assert.match(String(busy.code), /^SQLITE_BUSY/);
        assert.equal(isStoreUnavailable(busy), true);
        const beginBusy = (() => {
          holder.exec('begin immediate');
          try {
            return thrown(() => other.exec('begin immediate'));
          } finally {
            holder.exec('rollback');
          }
        })();
        assert.match(String(beginBusy.code), /^SQLITE_BUSY/, 'exec() names its errors too');

        const syntax = thrown(() => holder.prepare('selec 1'));
        assert.equal(syntax.code, 'SQLITE_ERROR');
        assert.equal(isStoreUnavailable(syntax), false);

        const pages = holder.pragma('page_count', { simple: true }) as number;
        holder.pragma(`max_page_count = ${pages}`);
        const full = thrown(() => {
          const insert = holder.prepare('insert into o values (?)');
          for (let i = 0; i < 10_000; i++) insert.run(`${i}`.padEnd(1000, 'y'));
        });
        assert.equal(full.code, 'SQLITE_FULL');
        assert.equal(isStoreUnavailable(full), true);
        assert.match(full.message, /full/);
      } finally {
        other.close();
        holder.close();
      }
    });

    test('the store reopens what it committed (WAL replayed by a new connection)', async () => {
      const file = path.join(dir, 'reopen.db');
      const first = connect({ kind: 'sqlite', path: file }, { sqliteDriver: driver });
      await sql`create table k (v text)`.execute(first.db);
      const batcher = new WriteBatcher(first.db, first.statements!);
      await Promise.all(['a', 'b', 'c'].map((v) => batcher.run((db) => sql`insert into k values (${v})`.execute(db))));
      // Not closed: as after a crash, the rows are in the WAL, not yet in the database file.
      const second = connect({ kind: 'sqlite', path: file }, { sqliteDriver: driver });
      try {
        const rows = await sql<{ v: string }>`select v from k order by v`.execute(second.db);
        assert.deepEqual(
          rows.rows.map((r) => r.v),
          ['a', 'b', 'c'],
        );
      } finally {
        await second.close();
        await first.close();
      }
    });
  });
}
