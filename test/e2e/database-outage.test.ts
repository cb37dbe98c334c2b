/**
 * A PostgreSQL outage, end to end, without touching the shared server: the real service runs as a
 * child process whose DATABASE_URL points at a TCP proxy (test/support/tcp-proxy.ts) in front of
 * a fresh database. Under concurrent MIT and MOTO load the proxy cuts every connection (each one
 * sees a reset, new ones are reset at once), later it forwards again. Checked:
 *   - the process never ends (a connection error on a checked-out client used to kill it);
 *   - while the line is cut, every request is answered within a few seconds, with 200 (it
 *     committed before the cut) or 503 SERVICE_UNAVAILABLE with Retry-After and the standard
 *     error body, never a 500 and never a hang; /readyz answers 503;
 *   - the job runner logs the outage once, not once per poll;
 *   - once the line is back, /readyz is 200 again within seconds and new payments succeed;
 *   - requests refused with 503, retried with their Idempotency-Key, end up with one transaction
 *     each (a request cut off mid-way resumes its execution; nothing is done twice);
 *   - then, under load again, PostgreSQL itself kills the service's connections a few times
 *     (pg_terminate_backend on this test's database only: SQLSTATE 57P01, as in a restart): the
 *     process survives, answers only 200 or 503, and the refused requests' retries resume at once
 *     (their claims were reopened, the database being up);
 *   - every transaction acknowledged with 200 exists exactly once and reaches SUCCESS or FAILED, and
 *     no transaction exists that no answer accounts for.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { POSTGRES_SKIP_MESSAGE, postgresReachable, TEST_DATABASE_URL } from '../support/stores.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import {
  API,
  bootstrapMerchant,
  type Client,
  type E2eDatabase,
  freshDatabase,
  type Merchant,
  newKeys,
  type ServiceProcess,
  sleep,
  startService,
  assertExactlyOnce,
  subscribeByCit,
} from './service.js';

const VISA = '4111111111111111';
const CARD = { number: VISA, expiryMonth: 12, expiryYear: 2030, cvc: '123' };
const MIT_CLIENTS = 6;
const MOTO_CLIENTS = 4;
/** Cut once this many requests were answered 200 (or after CUT_AFTER_MS on a busy machine). */
const CUT_AT_ANSWERED = 40;
const CUT_AFTER_MS = 10_000;
/** How long the load keeps going against the cut line. */
const OUTAGE_LOAD_MS = 3_000;
/** No request may take longer than this, outage or not. */
const MAX_REQUEST_MS = 6_000;
/** Past the idempotency in-flight lock (5 min of service time) that a failed release leaves. */
const PAST_IN_FLIGHT_LOCK_S = 310;
/** Rounds of pg_terminate_backend on the service's connections, 300 ms apart, under load. */
const TERMINATIONS = 5;
const FINAL = new Set(['SUCCESS', 'FAILED']);

const reachable = await postgresReachable();
if (!reachable) console.log(`# ${POSTGRES_SKIP_MESSAGE}`);

interface Sent {
  key: string;
  path: string;
  body: unknown;
  reference: string;
  startedAt: number;
  ms: number;
  /** HTTP status, or null when no answer came within MAX_REQUEST_MS (or the connection died). */
  status: number | null;
  errorCode: string | null;
  retryAfter: string | null;
  body503: any;
  transactionId: string | null;
}

async function startReceiver() {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}/callbacks`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** One request with its own deadline; records what came back. */
async function send(baseUrl: string, token: string, record: Sent): Promise<void> {
  const started = Date.now();
  record.startedAt = started;
  try {
    const res = await fetch(`${baseUrl}${record.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': record.key },
      body: JSON.stringify(record.body),
      signal: AbortSignal.timeout(MAX_REQUEST_MS),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    record.status = res.status;
    record.errorCode = typeof json?.errorCode === 'string' ? json.errorCode : null;
    record.retryAfter = res.headers.get('retry-after');
    record.body503 = res.status === 503 ? json : null;
    record.transactionId = res.status === 200 ? (json?.transaction?.id ?? null) : null;
  } catch {
    record.status = null;
  }
  record.ms = Date.now() - started;
}

async function allTransactions(api: Client): Promise<any[]> {
  const out: any[] = [];
  let offset = '';
  for (;;) {
    const res = await api.get(`${API}/transactions?perPage=500&offset=${encodeURIComponent(offset)}`);
    assert.equal(res.status, 200, `list transactions: ${res.text}`);
    out.push(...res.body.items.map((i: any) => i.transaction));
    if (!res.body.hasMore) return out;
    offset = res.body.nextOffset;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function readyz(baseUrl: string): Promise<{ status: number | null; ms: number }> {
  const started = Date.now();
  try {
    const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(MAX_REQUEST_MS) });
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - started };
  } catch {
    return { status: null, ms: Date.now() - started };
  }
}

describe('database outage: PostgreSQL cut off under load, then back (postgres)', { timeout: 120_000 }, () => {
  let db: E2eDatabase | null = null;
  let proxy: TcpProxy | null = null;
  let service: ServiceProcess | null = null;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null;

  before(async () => {
    if (!reachable) return;
    db = await freshDatabase('postgres', 'outage');
    const target = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy({ host: target.hostname === 'localhost' ? '127.0.0.1' : target.hostname, port: Number(target.port || 5432) });
    receiver = await startReceiver();
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
    await receiver?.close();
    await db?.drop();
  });

  test(
    'the process survives, answers 503 with Retry-After while cut off, recovers by itself; nothing is lost or done twice',
    { skip: !reachable && POSTGRES_SKIP_MESSAGE },
    async () => {
      const t0 = Date.now();
      const url = new URL(db!.url);
      url.hostname = '127.0.0.1';
      url.port = String(proxy!.port);
      const databaseName = url.pathname.slice(1);
      // No ingestion cap: the load sends about as many MITs in its minute as the default cap (300),
      // and a faster run would meet it (429) — not what this test is about.
      const svc = await startService({
        databaseUrl: url.toString(),
        dir: db!.dir,
        ...newKeys(),
        latencyMs: 20,
        label: 'outage',
        env: { PAYMENTS_MIT_CAP_PER_MINUTE: '0' },
      });
      service = svc;
      const merchant: Merchant = await bootstrapMerchant(svc, 'Outage Shop');
      await svc.operator.must('PATCH', `${API}/partner/accounts/${merchant.accountId}/capabilities`, { moto: true });
      const subscriptionId = await subscribeByCit(svc, merchant, 'outage-customer', CARD);

      // --- load, then the cut -------------------------------------------------------------------
      const sent: Sent[] = [];
      let counter = 0;
      let stop = false;
      const next = (kind: 'mit' | 'moto'): Sent => {
        const n = ++counter;
        const reference = `outage-${n}`;
        const amount = 100 + (n % 4900);
        const body =
          kind === 'mit'
            ? { subscriptionId, amount, currency: 'DKK', reference, notificationUrl: receiver!.url }
            : { transaction: { pointOfSaleId: merchant.pointOfSaleId, reference, amount, currency: 'DKK' }, card: CARD };
        return {
          key: `outage-key-${n}`,
          path: `${API}/${kind}`,
          body,
          reference,
          startedAt: 0,
          ms: 0,
          status: null,
          errorCode: null,
          retryAfter: null,
          body503: null,
          transactionId: null,
        };
      };
      const loop = async (kind: 'mit' | 'moto') => {
        while (!stop) {
          const record = next(kind);
          sent.push(record);
          await send(svc.baseUrl, merchant.token, record);
          // Against a cut line the answers come fast; do not spin.
          if (record.status !== 200) await sleep(200);
        }
      };
      const loadStarted = Date.now();
      const clients = [...Array.from({ length: MIT_CLIENTS }, () => loop('mit')), ...Array.from({ length: MOTO_CLIENTS }, () => loop('moto'))];
      while (sent.filter((s) => s.status === 200).length < CUT_AT_ANSWERED && Date.now() - loadStarted < CUT_AFTER_MS) await sleep(10);
      const beforeCut = sent.filter((s) => s.status === 200).length;
      proxy!.cut();
      const cutAt = Date.now();
      await sleep(OUTAGE_LOAD_MS / 2);
      const readyDuring = await readyz(svc.baseUrl);
      await sleep(OUTAGE_LOAD_MS / 2);
      stop = true;
      await Promise.all(clients);
      // Errors emitted late (a socket's error after its query failed) would end the process now.
      await sleep(500);
      assert.ok(alive(svc.pid), `the service process is alive after the cut; log:\n${svc.logTail()}`);
      assert.doesNotMatch(fs.readFileSync(svc.logPath, 'utf8'), /Emitted 'error' event|Unhandled|uncaught/i, 'no unhandled error in the log');

      assert.ok(beforeCut >= 10, `enough load before the cut (${beforeCut} answered)`);
      assert.equal(readyDuring.status, 503, '/readyz is 503 while the database is unreachable');
      assert.ok(readyDuring.ms < 3_000, `/readyz answered in ${readyDuring.ms} ms`);
      const unanswered = sent.filter((s) => s.status === null);
      assert.deepEqual(
        unanswered.map((s) => `${s.key} after ${s.ms} ms`),
        [],
        `every request answered within ${MAX_REQUEST_MS} ms`,
      );
      const unexpected = sent.filter((s) => s.status !== 200 && s.status !== 503);
      assert.deepEqual(
        unexpected.map((s) => `${s.key}: ${s.status} ${s.errorCode}`),
        [],
        'only 200 or 503, never a 500',
      );
      const refused = sent.filter((s) => s.status === 503);
      assert.ok(refused.length >= 5, `requests during the outage are refused (${refused.length})`);
      for (const s of refused) {
        assert.deepEqual(Object.keys(s.body503 ?? {}).sort(), ['errorCode', 'message', 'success'], `${s.key}: the standard error body`);
        assert.equal(s.body503.success, false);
        assert.equal(s.errorCode, 'SERVICE_UNAVAILABLE', `${s.key}: SERVICE_UNAVAILABLE`);
        assert.match(s.retryAfter ?? '', /^[1-5]$/, `${s.key}: Retry-After in seconds`);
      }
      const startedAfterCut = sent.filter((s) => s.startedAt > cutAt + 100);
      assert.ok(startedAfterCut.length > 0 && startedAfterCut.every((s) => s.status === 503), 'a request that starts after the cut is refused with 503');
      const slowest = Math.max(...sent.map((s) => s.ms));

      // The job runner backs off and says so once per outage, not once per poll.
      const runnerWarnings = fs
        .readFileSync(svc.logPath, 'utf8')
        .split('\n')
        .filter((l) => l.includes('job runner')).length;
      assert.ok(runnerWarnings <= 2, `the runner logged the outage ${runnerWarnings} times`);

      // --- the line comes back --------------------------------------------------------------------
      const forwardedBefore = proxy!.forwarded;
      proxy!.restore();
      const restoredAt = Date.now();
      let ready = await readyz(svc.baseUrl);
      while (ready.status !== 200 && Date.now() - restoredAt < 10_000) {
        await sleep(100);
        ready = await readyz(svc.baseUrl);
      }
      const readyAfterMs = Date.now() - restoredAt;
      assert.equal(ready.status, 200, '/readyz is 200 again');
      assert.ok(readyAfterMs < 5_000, `ready again ${readyAfterMs} ms after the line came back`);
      assert.ok(proxy!.forwarded > forwardedBefore, 'the pool opened new connections');

      const fresh = [next('mit'), next('moto')];
      for (const record of fresh) {
        await send(svc.baseUrl, merchant.token, record);
        assert.equal(record.status, 200, `a new ${record.path} after the recovery: ${record.status} ${record.errorCode}`);
      }

      /**
       * Retries refused requests with their keys and checks what they leave. What a refused request
       * committed before the database went away (a MOTO cut off after writing its transaction) must
       * be continued by its retry, not made twice. A request refused before its claim simply runs
       * now; one refused after it runs at once if its claim could be reopened, else its key is
       * IDEMPOTENCY_KEY_IN_USE until the in-flight lock runs out (5 min of service time), after which
       * the retry resumes the cut-off execution.
       */
      const retryRefused = async (refusedNow: Sent[]) => {
        const committedBefore = new Map<string, string>();
        for (const tx of await allTransactions(merchant.api)) committedBefore.set(tx.reference, tx.id);
        const retriedNow = refusedNow.map((s) => ({ ...s }));
        await Promise.all(
          [0, 1, 2, 3].map(async (lane) => {
            for (const record of retriedNow.filter((_, i) => i % 4 === lane)) {
              await send(svc.baseUrl, merchant.token, record);
              assert.ok(
                record.status === 200 || (record.status === 409 && record.errorCode === 'IDEMPOTENCY_KEY_IN_USE'),
                `retry of ${record.key}: ${record.status} ${record.errorCode}`,
              );
            }
          }),
        );
        const lockedNow = retriedNow.filter((r) => r.status !== 200);
        if (lockedNow.length) await svc.operator.must('POST', '/sandbox/v1/clock', { advanceSeconds: PAST_IN_FLIGHT_LOCK_S });
        for (const record of lockedNow) {
          await send(svc.baseUrl, merchant.token, record);
          assert.equal(record.status, 200, `retry of ${record.key} past the in-flight lock: ${record.status} ${record.errorCode}`);
        }
        const interruptedNow = retriedNow.filter((r) => committedBefore.has(r.reference));
        for (const record of interruptedNow) {
          assert.equal(
            record.transactionId,
            committedBefore.get(record.reference),
            `retry of ${record.key} continues the transaction its cut-off execution wrote`,
          );
        }
        return { retried: retriedNow, locked: lockedNow.length, interrupted: interruptedNow.length };
      };
      // Retry every refused request with its key (see retryRefused).
      const first = await retryRefused(refused);

      // --- connections killed by the server under load (SQLSTATE 57P01) ----------------------------
      // pg_terminate_backend on this test's own database only: what a PostgreSQL restart or an
      // administrator does to the service's open connections, checked-out ones included.
      const terminate = async (): Promise<number> => {
        const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
            [databaseName],
          );
          return rows[0].n as number;
        } finally {
          await admin.end();
        }
      };
      const killedFrom = sent.length;
      stop = false;
      const clients2 = [...Array.from({ length: MIT_CLIENTS }, () => loop('mit')), ...Array.from({ length: MOTO_CLIENTS }, () => loop('moto'))];
      let terminated = 0;
      for (let i = 0; i < TERMINATIONS; i++) {
        await sleep(300);
        terminated += await terminate();
      }
      await sleep(300);
      stop = true;
      await Promise.all(clients2);
      await sleep(500);
      assert.ok(alive(svc.pid), `the service process is alive after its connections were terminated; log:\n${svc.logTail()}`);
      assert.ok(terminated > 0, 'server connections of the service were terminated');
      const killedPhase = sent.slice(killedFrom);
      assert.deepEqual(
        killedPhase.filter((s) => s.status !== 200 && s.status !== 503).map((s) => `${s.key}: ${s.status} ${s.errorCode}`),
        [],
        'connections killed under load: only 200 or 503, never a 500 or a hang',
      );
      const refusedKilled = killedPhase.filter((s) => s.status === 503);
      for (const s of refusedKilled) assert.equal(s.errorCode, 'SERVICE_UNAVAILABLE', `${s.key}: SERVICE_UNAVAILABLE`);
      assert.ok(killedPhase.filter((s) => s.status === 200).length > 0, 'requests between the terminations succeed: the pool replaces the killed connections');
      // With the database up, the 503's claim was reopened: the retry resumes at once, mostly.
      const second = await retryRefused(refusedKilled);
      const retried = [...first.retried, ...second.retried];

      // A second retry of each replays the stored answer: the same transaction.
      for (const record of retried.slice(0, 5)) {
        const again = { ...record };
        await send(svc.baseUrl, merchant.token, again);
        assert.equal(again.status, 200);
        assert.equal(again.transactionId, record.transactionId, `${record.key}: the replay names the same transaction`);
      }

      // --- nothing lost, nothing twice ------------------------------------------------------------
      const acknowledged = [...sent, ...fresh].filter((s) => s.status === 200);
      const expected = new Set([...acknowledged, ...retried].map((s) => s.transactionId!));
      assert.ok(!expected.has(null as never), 'every 200 names its transaction');
      const deadline = Date.now() + 40_000;
      let transactions: any[] = [];
      for (;;) {
        transactions = (await allTransactions(merchant.api)).filter((tx) => String(tx.reference).startsWith('outage-'));
        const byId = new Map(transactions.map((tx) => [tx.id, tx]));
        const open = [...expected].filter((id) => !FINAL.has(byId.get(id)?.state));
        if (open.length === 0) break;
        if (Date.now() > deadline) {
          assert.fail(
            `${open.length} transactions not final 40 s after the recovery, e.g. ${open
              .slice(0, 5)
              .map((id) => `${id}:${byId.get(id)?.state ?? 'missing'}`)
              .join(', ')}\n${svc.logTail(20)}`,
          );
        }
        await sleep(250);
      }
      assertExactlyOnce(transactions, expected);
      assert.ok(alive(svc.pid), 'still alive at the end');

      console.log(
        `# database outage: ${beforeCut} answered before the cut, ${sent.length} requests in all, ${refused.length} refused with 503 ` +
          `(slowest answer ${slowest} ms), /readyz 503 in ${readyDuring.ms} ms during the outage and 200 ${readyAfterMs} ms after the line came back; ` +
          `${first.retried.length} retried → one transaction each (${first.interrupted} had written theirs before the 503, ` +
          `${first.locked} keys locked in flight until the lock ran out); ` +
          `${terminated} server connections terminated in ${TERMINATIONS} rounds under load: ${killedPhase.length} requests, ${refusedKilled.length} refused with 503, ` +
          `retried → ${second.interrupted} continued, ${second.locked} locked; ${expected.size} transactions final, each exactly once; ` +
          `ready to final ${((Date.now() - restoredAt) / 1000).toFixed(1)} s; ` +
          `${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    },
  );
});
