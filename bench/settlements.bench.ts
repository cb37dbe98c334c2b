/**
 * A settlement run over 10k and 100k seeded SUCCESS operations (captures, sales, refunds,
 * payouts) on SQLite and PostgreSQL: seconds, operations per second and peak memory (rss and
 * heapUsed sampled every 10 ms, live heap after a full GC once a second). The baseline of the same run is the naive alternative — one
 * query that loads every unsettled operation at once — so that the memory figures show what
 * streaming saves. Targets: the run's peak heap growth stays flat from 10k to 100k (it streams),
 * and below what loading everything costs; the scan reads the partial index without sorting.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { sql } from 'kysely';
import type { Operation, OperationType } from '../src/modules/transactions/transaction.js';
import type { NewTransaction } from '../src/modules/transactions/transactions.repository.js';
import { SCAN_FROM_SETTING } from '../src/modules/settlements/settlements.service.js';
import { TRANSFER_READY_EVENT } from '../src/modules/settlements/settlement.js';
import type { Runtime } from '../src/runtime.js';
import { newId } from '../src/shared/ids.js';
import { KyselySettlementsRepository } from '../src/storage/repositories/settlements.js';
import { distinctTransactionIds } from './lib/distinct-ids.js';
import { explain, recordQueries } from './lib/explain.js';
import { benchDatabase, migrationFingerprint, openSeeded, measuredStores, type StoreKind } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';

const SEED_VERSION = 'settlements-v1';
const GROWTH_LIMIT = 1.5;
const CURRENCIES = ['DKK', 'DKK', 'DKK', 'EUR', 'SEK', 'NOK'];

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Meta {
  accountIds: string[];
  operations: number;
}

const label = (n: number): string => `${n / 1000}k`;
const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/**
 * Six merchants; per transaction one money-moving SUCCESS operation, a tenth of the captures
 * refunded in part (a second operation). Written through the real repositories, 2 000 rows a
 * commit, generated chunk by chunk (the seeder does not hold 100k rows either).
 */
async function seed(runtime: Runtime, operations: number): Promise<Meta> {
  const { accounts, pointsOfSale } = runtime.services;
  const merchants: Array<{ accountId: string; pointOfSaleId: string }> = [];
  for (let i = 0; i < 6; i++) {
    const account = await accounts.create({
      name: `Settlement merchant ${i + 1}`,
      email: `settle${i + 1}@shop.example.com`,
      currencyCode: 'DKK',
      timezone: 'UTC',
      domain: 'shop.example.com',
    });
    await accounts.activate(account.id);
    const pos = await pointsOfSale.create(account.id, { name: 'Web shop', domain: 'shop.example.com', webhookAuthentication: 'Bearer bench', type: 'ONLINE' });
    merchants.push({ accountId: account.id, pointOfSaleId: pos.id });
  }
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  let made = 0;
  let i = 0;
  const nextTransactionId = distinctTransactionIds();
  while (made < operations) {
    const txs: NewTransaction[] = [];
    const ops: Operation[] = [];
    while (made < operations && ops.length < 2000) {
      const m = merchants[i % merchants.length]!;
      const at = new Date(start + i * 1000).toISOString();
      const amount = 100 + ((i * 7919) % 250_000);
      const kind: OperationType = i % 20 === 0 ? 'PAYOUT' : i % 20 === 1 ? 'SALE' : 'CAPTURE';
      const id = nextTransactionId();
      txs.push({
        id,
        accountId: m.accountId,
        pointOfSaleId: m.pointOfSaleId,
        terminalId: null,
        sessionId: null,
        subscriptionId: null,
        billingAgreementChargeId: null,
        paymentMethodId: null,
        paymentMethodType: 'CARD',
        paymentMethodSubType: 'Visa',
        paymentMethodExpiry: null,
        paymentMethodDisplayText: null,
        paymentMethodHolderName: null,
        customerId: null,
        type: kind === 'PAYOUT' ? 'PAYOUT' : 'PAYMENT',
        flow: kind === 'PAYOUT' ? 'PAYOUT' : kind === 'SALE' ? 'SALE' : 'MOTO',
        state: 'SUCCESS',
        errorCode: null,
        externalStatusCodes: null,
        scaMode: null,
        amount,
        fee: 0,
        currency: CURRENCIES[i % CURRENCIES.length]!,
        instantCapture: 'OFF',
        notificationUrl: null,
        reference: `order-${i}`,
        textOnStatement: null,
        descriptor: null,
        exemptions: null,
        attributes: null,
        clientIp: null,
        clientCountry: null,
        acquirer: 'sandbox',
        acquirerReference: `acq-${i}`,
        authorizedAmount: kind === 'PAYOUT' ? 0 : amount,
        capturedAmount: kind === 'PAYOUT' ? 0 : amount,
        paidOutAmount: kind === 'PAYOUT' ? amount : 0,
        createdAt: at,
        updatedAt: at,
        finalizedAt: at,
      });
      const op = (type: OperationType, value: number, offsetMs: number): Operation => {
        const when = new Date(start + i * 1000 + offsetMs).toISOString();
        return {
          id: newId(),
          accountId: m.accountId,
          transactionId: id,
          pointOfSaleId: m.pointOfSaleId,
          type,
          state: 'SUCCESS',
          amount: value,
          referenceOperationId: null,
          errorCode: null,
          externalStatusCodes: null,
          acquirerReference: `acq-${i}-${type}`,
          createdAt: when,
          finalizedAt: when,
        };
      };
      ops.push(op(kind, amount, 0));
      made++;
      if (kind === 'CAPTURE' && i % 10 === 3 && made < operations) {
        ops.push(op('REFUND', Math.floor(amount / 3), 500));
        made++;
      }
      i++;
    }
    await runtime.store.transaction(async (repos) => {
      await repos.transactions.insert(txs);
      await repos.transactions.insertOperations(ops);
    });
  }
  return { accountIds: merchants.map((m) => m.accountId), operations };
}

/** Forgets every settlement, so that each measurement settles the whole seeded set again. */
async function resetSettlements(runtime: Runtime): Promise<void> {
  const db = runtime.store.db;
  await db.deleteFrom('settlementTransactions').execute();
  await db.deleteFrom('settlementTransfers').execute();
  await db.deleteFrom('events').where('event', '=', TRANSFER_READY_EVENT).execute();
  await db.deleteFrom('settings').where('key', '=', SCAN_FROM_SETTING).execute();
  if (runtime.store.dialect === 'postgres') await sql`vacuum analyze settlement_transactions, settlement_transfers`.execute(db);
}

interface Sampled<T> {
  value: T;
  seconds: number;
  /** Peak heapUsed over the value before, sampled every 10 ms (includes garbage not yet collected). */
  peakHeap: number;
  /** Peak live heap (heapUsed right after a full GC, once a second and at probes) over the value before. */
  peakLive: number;
  peakRss: number;
  rssBefore: number;
}

const SAMPLE_MS = 10;
// A full GC costs tens of ms: often enough to see what stays live, rare enough not to slow the run much.
const LIVE_SAMPLE_MS = 1000;

/** Runs `fn` with memory sampled on timers and whenever `fn` calls probe() (a live-heap sample). */
async function sampled<T>(fn: (probe: () => void) => Promise<T>): Promise<Sampled<T>> {
  gc();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed;
  let peakLive = before.heapUsed;
  let peakRss = before.rss;
  const sample = () => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
  };
  const probe = () => {
    sample();
    gc();
    peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
  };
  const timers = [setInterval(sample, SAMPLE_MS), setInterval(probe, LIVE_SAMPLE_MS)];
  const started = performance.now();
  try {
    const value = await fn(probe);
    const seconds = (performance.now() - started) / 1000;
    sample();
    return { value, seconds, peakHeap: peakHeap - before.heapUsed, peakLive: peakLive - before.heapUsed, peakRss, rssBefore: before.rss };
  } finally {
    for (const timer of timers) clearInterval(timer);
  }
}

interface SizeResult {
  operations: number;
  run: Sampled<number>;
  naive: Sampled<number>;
}

async function runSize(ctx: BenchContext, kind: StoreKind, operations: number): Promise<SizeResult> {
  const { report } = ctx;
  const name = `settle_${label(operations).toLowerCase()}`;
  const db = benchDatabase(kind, name);
  const fingerprint = migrationFingerprint(kind, /\b(?:ON|TABLE)\s+(?:transactions|operations|settlement_\w+)\b/i, `${SEED_VERSION}:${operations}`);
  report.section(`${kind} ${label(operations)} operations`);
  const seeded = await openSeeded(db, fingerprint, (runtime) => seed(runtime, operations));
  const { runtime, meta } = seeded;
  report.note(seeded.seeded ? `seeded ${operations} operations in ${seeded.seedSeconds.toFixed(1)} s` : 'reusing seeded database');
  try {
    await resetSettlements(runtime);
    const repo = (d: typeof runtime.store.db) => new KyselySettlementsRepository(d);
    const window = { from: null, to: new Date().toISOString() };

    const [scan] = await recordQueries(runtime.store.db, (d) => repo(d).settleable(meta.accountIds[0]!, window, null, 1000));
    const plan = await explain(runtime.store.db, runtime.store.dialect, scan!);
    report.note(`plan (settleable batch): ${plan.lines.map((l) => l.trim()).join(' | ')}`);
    report.target(
      `${kind} ${label(operations)} scan reads operations_settleable without sorting`,
      plan.index === 'operations_settleable' && plan.usesIndexWithoutSort,
      plan.index ? `index ${plan.index}${plan.usesIndexWithoutSort ? ', no sort' : ', but sorts'}` : 'no index',
    );

    // Baseline: every unsettled operation of every merchant loaded at once (what streaming avoids).
    const naive = await sampled(async (probe) => {
      const all = [];
      for (const accountId of meta.accountIds) all.push(...(await repo(runtime.store.db).settleable(accountId, window, null, Number.MAX_SAFE_INTEGER)));
      probe(); // while everything is held
      return all.length;
    });
    if (naive.value !== operations) throw new Error(`baseline read ${naive.value} operations, seeded ${operations}`);

    const run = await sampled(async () => (await runtime.services.settlements.run({ postingDate: '2026-06-01' })).settled);
    if (run.value !== operations) throw new Error(`the run settled ${run.value} of ${operations} operations`);
    const { n } = await runtime.store.db
      .selectFrom('settlementTransactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(n) !== operations) throw new Error(`${n} settlement transactions stored, ${operations} expected`);

    const line = (what: string, x: Sampled<number>) =>
      report.note(
        `${what.padEnd(34)} ${x.seconds.toFixed(2).padStart(7)} s ${Math.round(operations / x.seconds)
          .toString()
          .padStart(
            7,
          )} ops/s   heap peak +${mb(x.peakHeap).padStart(8)} (${(x.peakHeap / naive.peakHeap).toFixed(2)}×)   live peak +${mb(x.peakLive).padStart(8)} (${(x.peakLive / naive.peakLive).toFixed(2)}×)   rss peak ${mb(x.peakRss)} (before ${mb(x.rssBefore)})`,
      );
    line(`BASELINE load all ${label(operations)} at once`, naive);
    line(`settlement run ${label(operations)}`, run);
    report.target(
      `${kind} ${label(operations)} run live heap below loading everything`,
      run.peakLive < naive.peakLive,
      `${mb(run.peakLive)} vs ${mb(naive.peakLive)}`,
    );
    return { operations, run, naive };
  } finally {
    await runtime.close();
  }
}

export default defineSuite({
  name: 'settlements',
  description: 'settlement run over 10k and 100k operations: seconds and peak memory (streams in batches of 1 000)',
  async run(ctx) {
    const sizes = ctx.quick ? [10_000] : [10_000, 100_000];
    for await (const kind of measuredStores(ctx.report, 'settlement figures')) {
      const results: SizeResult[] = [];
      for (const operations of sizes) results.push(await runSize(ctx, kind, operations));
      const small = results.find((r) => r.operations === 10_000);
      const large = results.find((r) => r.operations === 100_000);
      ctx.report.section(`${kind} targets`);
      if (!small || !large) {
        ctx.report.note('100k not measured (BENCH_QUICK=1): the growth target is not checked');
        continue;
      }
      // Flat, not proportional: the run holds one batch whatever the total; loading everything grows 10×.
      const floor = 4 * 1_048_576; // a batch in flight is 1–2 MB: below 4 MB the ratio is noise
      const growth = Math.max(large.run.peakLive, floor) / Math.max(small.run.peakLive, floor);
      ctx.report.target(
        `${kind} run live heap 100k/10k ≤ ${GROWTH_LIMIT} (streams)`,
        growth <= GROWTH_LIMIT,
        `${growth.toFixed(2)} (${mb(large.run.peakLive)} / ${mb(small.run.peakLive)}; loading everything: ${(large.naive.peakLive / small.naive.peakLive).toFixed(2)}×)`,
      );
    }
  },
});
