/**
 * Micro-bench of the embedded store's drivers (src/storage/sqlite/driver.ts): the group commit
 * (WAL synced before any answer) and the statement path, on every driver that loads on this Node.
 *
 *   node --import tsx bench/sqlite-driver.ts [seconds per figure, default 2]
 *   npx -y node@24 --import tsx bench/sqlite-driver.ts
 *
 * Figures: durable units of work per second through WriteBatcher, one at a time (each its own
 * commit: the fsync rate) and 64 in flight (group commit: units per commit grow with the load); a
 * unit is an insert and an update in its own savepoint, like a small payment write. Then the
 * statement path alone, inside one transaction: a cached insert, and a read of 50 rows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { connect } from '../src/storage/connect.js';
import { availableSqliteDrivers, type SqliteDriverName } from '../src/storage/sqlite/driver.js';
import { WriteBatcher } from '../src/storage/sqlite/group-commit.js';

const seconds = Number(process.argv[2] ?? 2);

async function groupCommit(driver: SqliteDriverName, inFlight: number): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-driver-bench-'));
  const connection = connect({ kind: 'sqlite', path: path.join(dir, 'b.db') }, { sqliteDriver: driver });
  try {
    await sql`create table t (id integer primary key, v text not null, n integer not null default 0)`.execute(connection.db);
    const batcher = new WriteBatcher(connection.db, connection.statements!);
    let done = 0;
    let next = 0;
    const end = performance.now() + seconds * 1000;
    const cpu = process.cpuUsage();
    const worker = async () => {
      while (performance.now() < end) {
        const id = ++next;
        await batcher.run(async (db) => {
          await sql`insert into t (id, v) values (${id}, ${'x'.repeat(200)})`.execute(db);
          await sql`update t set n = n + 1 where id = ${id}`.execute(db);
        });
        done++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: inFlight }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const { commits } = batcher.stats;
    return (
      `${(done / elapsed).toFixed(0).padStart(6)} units/s, ${(commits / elapsed).toFixed(0).padStart(5)} commits/s, ` +
      `${(done / commits).toFixed(1).padStart(5)} units/commit, ${((used.user + used.system) / done).toFixed(0).padStart(4)} µs CPU/unit`
    );
  } finally {
    await connection.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function statements(driver: SqliteDriverName): string {
  const connection = connect({ kind: 'sqlite', path: ':memory:' }, { sqliteDriver: driver });
  const cache = connection.statements!;
  try {
    cache.handle.exec('create table t (id integer primary key, v text not null, n integer not null)');
    cache.handle.exec('begin');
    const insertSql = 'insert into t (id, v, n) values (?, ?, ?)';
    let n = 0;
    let started = performance.now();
    const end = started + seconds * 500;
    while (performance.now() < end) for (let i = 0; i < 1000; i++, n++) cache.prepare(insertSql).run([n, 'payment', n]);
    const inserts = n / ((performance.now() - started) / 1000);
    const readSql = 'select id, v, n from t where id >= ? order by id limit 50';
    let reads = 0;
    started = performance.now();
    while (performance.now() < started + seconds * 500) for (let i = 0; i < 100; i++, reads++) cache.prepare(readSql).all([reads % 1000]);
    const perRead = ((performance.now() - started) * 1000) / reads;
    cache.handle.exec('commit');
    return `${(inserts / 1000).toFixed(0).padStart(5)} k inserts/s, ${perRead.toFixed(1).padStart(5)} µs per 50-row read`;
  } finally {
    void connection.close();
  }
}

const drivers = availableSqliteDrivers();
console.log(`Node ${process.versions.node}; SQLite drivers that load here: ${drivers.join(', ') || 'none'}; ${seconds} s per figure`);
for (const driver of drivers) {
  console.log(`${driver.padEnd(15)} group commit, 1 in flight:  ${await groupCommit(driver, 1)}`);
  console.log(`${driver.padEnd(15)} group commit, 64 in flight: ${await groupCommit(driver, 64)}`);
  console.log(`${driver.padEnd(15)} statements:                 ${statements(driver)}`);
}
