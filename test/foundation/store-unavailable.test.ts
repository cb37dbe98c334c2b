/**
 * "The database cannot be used now" (src/storage/unavailable.ts), without a database server:
 *   - the classifier on real errors: node-postgres refused, reset and timed-out connections, a pool
 *     closed on purpose (not an outage), SQLite locked past its busy timeout and out of pages, and
 *     on the SQLSTATEs and codes it names; errors wrapped in `cause` or an AggregateError count;
 *   - PostgreSQL readiness never hangs: ping() against a server that accepts and never answers
 *     fails within the ping timeout, as an outage;
 *   - the job runner backs off while claiming fails (250 ms doubling to 5 s), says so once per
 *     outage, resumes by itself; a handler failing on an outage never makes its job dead;
 *   - over HTTP (SQLite runtime): an outage error becomes 503 SERVICE_UNAVAILABLE with Retry-After
 *     and the standard body; the request's Idempotency-Key is not answered by it but reopened, so an
 *     immediate retry continues the interrupted MOTO (the same transaction, one acquirer call)
 *     instead of paying twice.
 * The outage itself, on a real PostgreSQL, is test/e2e/database-outage.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openSqlite, SqliteError } from '../../src/storage/sqlite/driver.js';
import pg from 'pg';
import { toErrorResponse } from '../../src/http/error-handler.js';
import { AppError } from '../../src/shared/errors.js';
import type { Job, JobStore } from '../../src/jobs/job.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { connect, PING_TIMEOUT_MS } from '../../src/storage/connect.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_S } from '../../src/storage/unavailable.js';
import { motoBody } from '../online/helpers.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';

/** A local server that does `onSocket` with every connection (nothing speaks PostgreSQL here). */
async function server(onSocket: (socket: net.Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    port: (srv.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

describe('isStoreUnavailable: which storage errors are an outage', () => {
  test('node-postgres: refused, reset, terminated and timed-out connections are; a pool ended on purpose is not', async () => {
    // Refused: a port where nothing listens.
    const closed = await server(() => undefined);
    const closedPort = closed.port;
    await closed.close();
    const refused = await rejection(new pg.Client({ host: '127.0.0.1', port: closedPort, user: 'x', database: 'x' }).connect());
    assert.equal((refused as { code?: string }).code, 'ECONNREFUSED');
    assert.equal(isStoreUnavailable(refused), true, 'ECONNREFUSED');

    // The server hangs up at once: "Connection terminated unexpectedly" (no code).
    const hangUp = await server((socket) => socket.destroy());
    const terminated = await rejection(new pg.Client({ host: '127.0.0.1', port: hangUp.port, user: 'x', database: 'x' }).connect());
    assert.match((terminated as Error).message, /Connection terminated|ECONNRESET/);
    assert.equal(isStoreUnavailable(terminated), true, (terminated as Error).message);
    await hangUp.close();

    // The server accepts and never answers: the pool's connection timeout, then a full pool's queue timeout.
    const silent = await server(() => undefined);
    const pool = new pg.Pool({ host: '127.0.0.1', port: silent.port, user: 'x', database: 'x', max: 1, connectionTimeoutMillis: 200 });
    pool.on('error', () => undefined);
    const [connecting, queued] = await Promise.all([rejection(pool.query('select 1')), rejection(pool.query('select 1'))]);
    assert.equal(isStoreUnavailable(connecting), true, (connecting as Error).message);
    assert.equal(isStoreUnavailable(queued), true, (queued as Error).message);
    await silent.close();

    // A pool closed on purpose (shutdown) is not an outage: that stays a 500 if it ever reaches a request.
    await pool.end();
    const ended = await rejection(pool.query('select 1'));
    assert.match((ended as Error).message, /Cannot use a pool after calling end/);
    assert.equal(isStoreUnavailable(ended), false);
  });

  test('PostgreSQL SQLSTATEs and socket codes', () => {
    const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const code of ['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']) {
      assert.equal(isStoreUnavailable(withCode(code)), true, code);
    }
    for (const code of ['23505', '40001', '42P01', '22P02', 'ENOENT', 'FST_ERR_CTP_INVALID_JSON_BODY']) {
      assert.equal(isStoreUnavailable(withCode(code)), false, code);
    }
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
    ]) {
      assert.equal(isStoreUnavailable(new Error(message)), true, message);
    }
    // Wrapped: a cause chain, an AggregateError (a host name with several addresses, all refused).
    assert.equal(isStoreUnavailable(new Error('claim failed', { cause: withCode('57P01', 'terminating connection due to administrator command') })), true);
    assert.equal(isStoreUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed')), true);
    // Not outages: defects, business errors, and values that are no errors at all.
    for (const value of [
      new TypeError('x is undefined'),
      new AppError('CONFLICT'),
      new Error('Client was closed and is not queryable'),
      null,
      undefined,
      'ECONNRESET',
      42,
    ]) {
      assert.equal(isStoreUnavailable(value), false, String(value));
    }
    const cyclic: Error & { cause?: unknown } = new Error('loop');
    cyclic.cause = cyclic;
    assert.equal(isStoreUnavailable(cyclic), false, 'a cause cycle ends');
  });

  test('SQLite: locked past the busy timeout, disk full and I/O errors are; a constraint is not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unavailable-'));
    try {
      const file = path.join(dir, 'db.sqlite');
      const holder = openSqlite(file);
      holder.exec('create table t (v text)');
      const other = openSqlite(file);
      other.pragma('busy_timeout = 0');
      holder.exec('begin immediate');
      const busy = (() => {
        try {
          other.prepare('insert into t values (?)').run('x');
        } catch (err) {
          return err;
        }
        return assert.fail('the write should find the database locked');
      })();
      holder.exec('rollback');
      assert.match(String((busy as { code?: string }).code), /^SQLITE_BUSY/);
      assert.equal(isStoreUnavailable(busy), true, 'SQLITE_BUSY');

      holder.exec('create table u (v text unique)');
      holder.prepare('insert into u values (?)').run('a');
      const unique = (() => {
        try {
          holder.prepare('insert into u values (?)').run('a');
        } catch (err) {
          return err;
        }
        return assert.fail('the duplicate should be refused');
      })();
      assert.equal(isStoreUnavailable(unique), false, 'SQLITE_CONSTRAINT_UNIQUE');

      // Full: the file may not grow past its current pages.
      const pages = holder.pragma('page_count', { simple: true }) as number;
      holder.pragma(`max_page_count = ${pages}`);
      const full = (() => {
        try {
          const insert = holder.prepare('insert into t values (?)');
          for (let i = 0; i < 10_000; i++) insert.run('y'.repeat(1000));
        } catch (err) {
          return err;
        }
        return assert.fail('the database should be full');
      })();
      assert.equal((full as { code?: string }).code, 'SQLITE_FULL');
      assert.equal(isStoreUnavailable(full), true, 'SQLITE_FULL');
      other.close();
      holder.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(isStoreUnavailable(new SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE')), true, 'SQLITE_IOERR_WRITE');
    assert.equal(isStoreUnavailable(new SqliteError('disk I/O error', 'SQLITE_IOERR')), true, 'SQLITE_IOERR');
    assert.equal(isStoreUnavailable(new SqliteError('no such table: x', 'SQLITE_ERROR')), false, 'SQLITE_ERROR');
  });

  test('the error handler answers an outage with 503 SERVICE_UNAVAILABLE and the standard body', () => {
    const { status, body, unexpected } = toErrorResponse(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
    assert.equal(status, 503);
    assert.deepEqual(body, { success: false, errorCode: 'SERVICE_UNAVAILABLE', message: body.message });
    assert.doesNotMatch(body.message, /administrator|57P01/, 'no internals');
    assert.equal(unexpected, false);
    assert.equal(toErrorResponse(new Error('Cannot use a pool after calling end on the pool')).status, 500);
  });
});

describe('PostgreSQL readiness never hangs', () => {
  test('ping() against a server that accepts and never answers fails within the ping timeout, as an outage', async () => {
    const silent = await server(() => undefined);
    const connection = connect({ kind: 'postgres', url: `postgres://x@127.0.0.1:${silent.port}/x` });
    try {
      const started = Date.now();
      const err = await rejection(connection.ping());
      const ms = Date.now() - started;
      assert.ok(ms < PING_TIMEOUT_MS + 1000, `ping failed after ${ms} ms`);
      assert.equal(isStoreUnavailable(err), true, String(err));
    } finally {
      await silent.close(); // the pending connection attempt fails now, so the pool can end
      await connection.close();
    }
  });
});

describe('the job runner during an outage (no database: a store that fails)', () => {
  const outageError = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const logger = () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const at = (level: string) => (_obj: unknown, msg?: string) => void lines.push({ level, msg: msg ?? '' });
    return { lines, log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } };
  };
  const clock = { now: () => Date.now(), nowIso: () => new Date().toISOString() };

  test('claims back off exponentially, the outage is logged once, claiming resumes by itself', async () => {
    let down = true;
    const claims: number[] = [];
    const store = {
      async claim() {
        claims.push(Date.now());
        if (down) throw outageError();
        return [];
      },
      async nextDueAt() {
        return null;
      },
      async releaseLeases() {
        return 0;
      },
    } as unknown as JobStore;
    const { lines, log } = logger();
    const runner = new JobRunner({ store, clock, logger: log as never, definitions: [], idlePollMs: 250 });
    runner.start();
    try {
      await sleep(2_000);
      // 250 ms doubling: attempts at 0, 0.25, 0.75, 1.75 s (a fixed 250 ms poll would make 9).
      assert.ok(claims.length >= 3 && claims.length <= 5, `${claims.length} claims in 2 s`);
      const gaps = claims.slice(1).map((at, i) => at - claims[i]!);
      for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! >= gaps[i - 1]! * 1.5, `the waits grow: ${gaps.join(', ')} ms`);
      assert.deepEqual(
        lines.filter((l) => l.level !== 'debug').map((l) => l.level),
        ['warn'],
        'one warning for the whole outage',
      );
      down = false;
      // The wait in progress is at most the 5 s cap; then claiming goes on at the normal pace.
      const deadline = Date.now() + 6_000;
      while (!lines.some((l) => l.level === 'info') && Date.now() < deadline) await sleep(50);
      const resumedAt = claims.length;
      await sleep(2_000);
      assert.ok(claims.length > resumedAt, 'claiming resumed once the store answered, at the idle pace');
      assert.equal(lines.filter((l) => l.level === 'info').length, 1, 'the end of the outage is said once');
    } finally {
      await runner.stop(100);
    }
  });

  test('a handler failing on an outage is deferred without counting an attempt, never made dead, even on its last attempt', async () => {
    const job: Job = {
      id: 'job-1',
      kind: 'k',
      payload: {},
      state: 'running',
      attempts: 3,
      maxAttempts: 3,
      runAt: '',
      lastError: null,
      createdAt: '',
      updatedAt: '',
    };
    const failures: Array<number | null> = [];
    const deferrals: number[] = [];
    let claimed = false;
    const store = {
      async claim() {
        if (claimed) return [];
        claimed = true;
        return [job];
      },
      async fail(_id: string, _worker: string, _now: number, _error: string, retryAt: number | null) {
        failures.push(retryAt);
      },
      async defer(_id: string, _worker: string, runAt: number) {
        deferrals.push(runAt);
      },
      async complete() {},
    } as unknown as JobStore;
    const { log } = logger();
    const definitions = [{ kind: 'k', maxAttempts: 3, leaseMs: 15_000, backoff: () => 1000, handle: async () => Promise.reject(outageError()) }];
    const runner = new JobRunner({ store, clock, logger: log as never, definitions: definitions as never });
    await runner.drain(1);
    assert.deepEqual(failures, [], 'not recorded as a failed attempt');
    assert.equal(deferrals.length, 1, 'given back to the queue');
    assert.ok(deferrals[0]! > clock.now() - 1000, 'to run again shortly');

    // The same last attempt failing for another reason is dead, as before.
    claimed = false;
    definitions[0]!.handle = async () => Promise.reject(new Error('a defect'));
    await runner.drain(1);
    assert.deepEqual(failures, [null], 'dead');
  });
});

describe('an outage during a request (SQLite runtime)', () => {
  let t: TestRuntime;
  let m: TestMerchant;
  const acquirer = new ScriptedAcquirer();
  /** While set, reading a transaction or its operations fails the way a locked or failing database does. */
  let outage = false;
  /** Set when the acquirer has answered: the database "goes away" during the acquirer call. */
  let failAfterAcquirer = false;

  before(async () => {
    const authorize = acquirer.authorize.bind(acquirer);
    acquirer.authorize = async (request) => {
      const result = await authorize(request);
      if (failAfterAcquirer) outage = true;
      return result;
    };
    t = await startTestRuntime('sqlite', {}, { acquirer, startWorkers: false });
    m = await t.createMerchant();
    // The MOTO answer reads the transaction's operations after the acquirer's answer committed.
    const repository = t.runtime.store.transactions as unknown as Record<'findById' | 'operationsOf', (...args: unknown[]) => Promise<unknown>>;
    for (const method of ['findById', 'operationsOf'] as const) {
      const read = repository[method].bind(repository);
      repository[method] = (...args: unknown[]) => (outage ? Promise.reject(new SqliteError('database is locked', 'SQLITE_BUSY')) : read(...args));
    }
  });
  after(() => t.close());

  test('503 with Retry-After and the standard body; an immediate retry continues the interrupted MOTO: one transaction, one acquirer call', async () => {
    const key = randomUUID();
    const reference = `outage-${key}`;
    const moto = motoBody(m);
    const body = { ...moto, transaction: { ...moto.transaction, reference } };
    failAfterAcquirer = true;
    const first = await m.api.post(`${API}/moto`, body, { idempotencyKey: key });
    failAfterAcquirer = false;
    assert.equal(first.status, 503, first.text);
    assert.deepEqual(first.body, { success: false, errorCode: 'SERVICE_UNAVAILABLE', message: first.body.message });
    assert.equal(first.headers['retry-after'], String(STORE_RETRY_AFTER_S));

    // Still down: reads answer 503 too.
    const listed = await m.api.get(`${API}/transactions/${randomUUID()}`);
    assert.equal(listed.status, 503, listed.text);
    outage = false;

    // The interrupted request committed its transaction and its acquirer answer before the failure.
    const written = await t.runtime.store.db.selectFrom('transactions').select(['id', 'state']).where('reference', '=', reference).execute();
    assert.equal(written.length, 1);

    const retry = await m.api.post(`${API}/moto`, body, { idempotencyKey: key });
    assert.equal(retry.status, 200, `the key was reopened, not left locked or stored as the answer: ${retry.text}`);
    assert.equal(retry.headers['idempotent-replayed'], undefined, 'executed (resumed), not a replay of the 503');
    assert.equal(retry.body.transaction.id, written[0]!.id, 'the retry continues the transaction the interrupted request wrote');
    assert.equal(acquirer.callsOf(written[0]!.id, 'authorize').length, 1, 'the card was authorized once');
    const after = await t.runtime.store.db.selectFrom('transactions').select('id').where('reference', '=', reference).execute();
    assert.equal(after.length, 1, 'one transaction for the key');

    const replay = await m.api.post(`${API}/moto`, body, { idempotencyKey: key });
    assert.equal(replay.headers['idempotent-replayed'], 'true', 'from now on the stored 200 is the answer');
    assert.equal(replay.body.transaction.id, written[0]!.id);
  });
});
