/**
 * POST /transactions/{id}/capture on SQLite and PostgreSQL, durable settings, rate limits off,
 * sandbox acquirer without latency: every request captures the whole amount of its own
 * authorization (so neither the per-transaction rate limit nor the remaining amount ever
 * interferes), with and without Idempotency-Key, beside a bare route with the same schemas.
 *
 * The authorizations: one real MIT authorization made through the API (merchant, CIT session
 * completed in the sandbox, POST /mit, its payment.drive job), then cloned — same columns, new
 * ids — in bulk through the repositories, as many as the run can use up (a request that would
 * find none left is reported as a failure).
 *
 * Last, the store alone (storeAlone): one capture's statements replayed for other authorizations
 * without the service — on SQLite the ceiling of the figure above on this machine.
 */
import { sql } from 'kysely';
import { CaptureBody, OperationResponse } from '../src/modules/operations/operations.schemas.js';
import type { Operation, Transaction } from '../src/modules/transactions/transaction.js';
import type { NewTransaction } from '../src/modules/transactions/transactions.repository.js';
import { TransactionParams } from '../src/modules/transactions/transactions.schemas.js';
import type { Runtime } from '../src/runtime.js';
import { newId } from '../src/shared/ids.js';
import { startBaseline } from './lib/baseline.js';
import { distinctTransactionIds } from './lib/distinct-ids.js';
import type { Measurement, RequestTemplate } from './lib/load.js';
import { API, call, createMitMerchant } from './lib/merchant.js';
import { formatMs, loadNote } from './lib/report.js';
import { type Replayed, replayRequest, storeAloneNote } from './lib/statement-replay.js';
import { type BenchDatabase, benchDatabase, openRuntime, measuredStores, resetDatabase, serve, type StoreKind } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';

const CAPTURE = `${API}/transactions/:transactionId/capture`;
const AMOUNT = 1000;
const NAME = 'capture';
/** Issue 10: a capture at ≥ 0.3× the baseline's requests a second, on both stores. */
const RATIO_TARGET = 0.3;
/** Captures replayed on the store alone (storeAlone). */
const REPLAYED = 3000;
/**
 * The store alone: the statements of one capture (of `template`), recorded, then replayed for each
 * of `others` without the service (statement-replay.ts): what the store does with them alone.
 */
async function storeAlone(prepared: Prepared, template: string, others: string[], connections: number): Promise<Replayed> {
  const { db, runtime, apiKey } = prepared;
  const capture = async (id: string) => {
    const answer = await call<{ success: boolean }>(runtime, 'POST', `${API}/transactions/${id}/capture`, apiKey, { amount: AMOUNT });
    if (!answer.success) throw new Error(`capture of ${id} failed: ${JSON.stringify(answer)}`);
  };
  // Warms what the service caches (the API key's credentials): the recorded capture reads what one under load does.
  await capture(others[0]!);
  const rest = others.slice(1);
  return replayRequest(
    db,
    async () => {
      await capture(template);
      return [template];
    },
    (copy) => [rest[copy]!],
    rest.length,
    connections,
  );
}

interface Prepared {
  db: BenchDatabase;
  runtime: Runtime;
  apiKey: string;
  /** Authorizations nobody captured yet, in the order the load uses them. */
  ids: string[];
  /** A real capture answer, served by the baseline. */
  sample: unknown;
}

/** The clone of `tx` (and its AUTHORIZATION) as a new authorization created at `at`. */
function cloneOf(tx: Transaction, authorization: Operation, at: string, id: string): { transaction: NewTransaction; operation: Operation } {
  return {
    transaction: { ...tx, id, reference: `bench-${id}`, idempotencyKey: null, createdAt: at, updatedAt: at, finalizedAt: at },
    operation: { ...authorization, id: newId(), transactionId: id, createdAt: at, finalizedAt: at },
  };
}

/** `count` authorizations to capture, and the runtime (runner off) on their database; `note` hears how long it took. */
export async function prepare(note: (line: string) => void, kind: StoreKind, count: number): Promise<Prepared> {
  const db = benchDatabase(kind, NAME);
  await resetDatabase(db);
  const started = performance.now();
  const setup = await openRuntime(db, { sandbox: true });
  let apiKey: string;
  let tx: Transaction;
  let authorization: Operation;
  try {
    const merchant = await createMitMerchant(setup, 1);
    apiKey = merchant.apiKey;
    const { transaction } = await call<{ transaction: { id: string } }>(setup, 'POST', `${API}/mit`, apiKey, {
      subscriptionId: merchant.subscriptionIds[0],
      amount: AMOUNT,
      currency: 'DKK',
      reference: 'bench-template',
      notificationUrl: 'http://127.0.0.1/callbacks',
    });
    await setup.runner.drain();
    const found = await setup.store.transactions.findById(merchant.accountId, transaction.id);
    const operations = await setup.store.transactions.operationsOf(transaction.id);
    const auth = operations.find((o) => o.type === 'AUTHORIZATION' && o.state === 'SUCCESS');
    if (found?.state !== 'SUCCESS' || found.authorizedAmount !== AMOUNT || !auth)
      throw new Error(`the template MIT is ${found?.state ?? 'missing'}, not an authorization of ${AMOUNT}`);
    tx = found;
    authorization = auth;
  } finally {
    await setup.close();
  }
  const runtime = await openRuntime(db);
  try {
    // One more than the load uses: the first is captured here for the baseline's answer.
    const ids: string[] = [];
    const base = Date.now() - 3_600_000;
    const newCloneId = distinctTransactionIds();
    for (let made = 0; made <= count;) {
      const chunk = Array.from({ length: Math.min(2000, count + 1 - made) }, (_, i) =>
        cloneOf(tx, authorization, new Date(base + made + i).toISOString(), newCloneId()),
      );
      await runtime.store.transaction(async (repos) => {
        await repos.transactions.insert(chunk.map((c) => c.transaction));
        await repos.transactions.insertOperations(chunk.map((c) => c.operation));
      });
      ids.push(...chunk.map((c) => c.transaction.id));
      made += chunk.length;
    }
    // What autovacuum would do soon after a bulk load; the planner needs the statistics.
    if (runtime.store.dialect === 'postgres') await sql`analyze transactions, operations`.execute(runtime.store.db);
    const first = ids.shift()!;
    const sample = await call<{ success: boolean; state: string }>(runtime, 'POST', `${API}/transactions/${first}/capture`, apiKey, { amount: AMOUNT });
    if (!sample.success || sample.state !== 'SUCCESS') throw new Error(`capture of a cloned authorization: ${JSON.stringify(sample)}`);
    note(`${count} authorizations of ${AMOUNT} cloned from a real MIT authorization in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { db, runtime, apiKey, ids, sample };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}

async function runStore(ctx: BenchContext, kind: StoreKind): Promise<void> {
  const { report } = ctx;
  report.section(`${kind} POST /transactions/{id}/capture, ${ctx.load.connections} connections, each request the full amount of its own authorization`);
  report.note(loadNote());
  // Enough for the fastest plausible rate over every round and warm-up, for both figures.
  const perFigure = (ctx.load.durationSeconds + ctx.load.warmupSeconds) * (ctx.quick ? 4000 : 3000);
  const prepared = await prepare((line) => report.note(line), kind, 2 * perFigure + REPLAYED + 1);
  const { runtime, apiKey, ids, sample } = prepared;
  let baseline: Awaited<ReturnType<typeof startBaseline>> | null = null;
  try {
    const base = await serve(runtime);
    baseline = await startBaseline({
      authenticate: (secret) => runtime.services.accounts.authenticate(secret),
      routes: [
        { method: 'POST', url: CAPTURE, schema: { params: TransactionParams, body: CaptureBody, response: { 200: OperationResponse } }, payload: sample },
      ],
    });
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const path = `${API}/transactions/{item}/capture`;
    const body = JSON.stringify({ amount: AMOUNT });
    const plain: RequestTemplate = { method: 'POST', body, items: ids.slice(0, perFigure), expect: '"success":true' };
    const keyed: RequestTemplate = { method: 'POST', body, items: ids.slice(perFigure, 2 * perFigure), expect: '"success":true' };
    const stats = runtime.store.batcher?.stats;
    const before = stats ? { commits: stats.commits, closures: stats.closures } : null;
    const [mBase, mCapture, mKeyed] = (await ctx.compare([
      { url: baseline.url + path, headers, request: { ...plain, wrapItems: true } },
      { url: base + path, headers, request: plain },
      { url: base + path, headers: { ...headers, 'idempotency-key': 'bench-{seq}' }, request: keyed },
    ])) as [Measurement, Measurement, Measurement];
    report.header();
    report.baseline(`${kind} capture (auth + schema, fixed answer)`, mBase);
    report.figure(`${kind} POST /transactions/{id}/capture`, mCapture, mBase);
    report.figure(`${kind} POST /transactions/{id}/capture with Idempotency-Key`, mKeyed, mBase);
    if (stats && before) {
      const commits = stats.commits - before.commits;
      const closures = stats.closures - before.closures;
      report.note(`group commit: ${closures} units of work in ${commits} commits (${commits ? (closures / commits).toFixed(1) : 'n/a'} per commit)`);
    }
    // Every answer checked said success; the database must agree: one SUCCESS capture per
    // authorization used (the sample's included), in-flight ones at the end of a round included.
    const { n } = await runtime.store.db
      .selectFrom('operations')
      .where('type', '=', 'CAPTURE')
      .where('state', '=', 'SUCCESS')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const used = mCapture.itemsUsed + mKeyed.itemsUsed;
    report.note(
      `${Number(n)} captures recorded SUCCESS; ${used} + 1 authorizations used (${mCapture.requests + mKeyed.requests} measured answers, the rest warm-up)`,
    );
    if (Number(n) < mCapture.requests + mKeyed.requests || Number(n) > used + 1)
      report.broken.push(`${kind} capture: ${Number(n)} SUCCESS captures for ${used + 1} requests sent`);
    // After the check above: the replayed captures are SUCCESS captures too.
    const alone = await storeAlone(prepared, ids[2 * perFigure]!, ids.slice(2 * perFigure + 1), ctx.load.connections);
    report.note(storeAloneNote('one capture', alone, ctx.load.connections, mCapture, mBase));
    report.target(
      `${kind} capture req/s ≥ ${RATIO_TARGET * 100} % of baseline`,
      mCapture.rps >= RATIO_TARGET * mBase.rps,
      `${mCapture.rps.toFixed(0)} req/s = ${((mCapture.rps / mBase.rps) * 100).toFixed(0)} % of ${mBase.rps.toFixed(0)}, p99 ${formatMs(mCapture.p99)} ms (baseline ${formatMs(mBase.p99)} ms)`,
    );
  } finally {
    await baseline?.close();
    await runtime.close();
    await resetDatabase(benchDatabase(kind, NAME));
  }
}

export default defineSuite({
  name: 'capture',
  description: `POST ${API}/transactions/{id}/capture, each request on its own authorization`,
  async run(ctx) {
    for await (const kind of measuredStores(ctx.report, 'capture figures')) {
      await runStore(ctx, kind);
    }
  },
});
