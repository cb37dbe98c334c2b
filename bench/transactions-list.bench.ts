/**
 * GET /transactions, the busiest read: the first page of a filtered list, and a page reached by
 * cursor half-way back through the merchant's history, at 10k and 1M rows, on SQLite and
 * PostgreSQL, at one connection and at BENCH_CONNECTIONS. Both sizes are served at once and
 * measured in alternating rounds with the baseline, so that the 1M/10k ratio compares like with
 * like. Targets: p99 ≤ 10 ms at 1M rows and within 1.5× of the 10k figure; the query plans
 * must read an index in list order, the cursor bounding the index search.
 */
import { CursorEnvelope, encodeCursor } from '../src/shared/pagination.js';
import { TransactionListQuery, TransactionResponse } from '../src/modules/transactions/transactions.schemas.js';
import type { Runtime } from '../src/runtime.js';
import { KyselyTransactionsRepository } from '../src/storage/repositories/transactions.js';
import { startBaseline } from './lib/baseline.js';
import { explain, recordQueries } from './lib/explain.js';
import type { Measurement } from './lib/load.js';
import { formatMs } from './lib/report.js';
import { benchDatabase, migrationFingerprint, openSeeded, measuredStores, serve, type StoreKind } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';
import { loadTransactions, SEED_VERSION, transactionRows, type SeedMerchant } from './lib/transactions-data.js';

const LIST = '/public/api/v1/transactions';
const FILTER = { state: 'SUCCESS', currency: 'DKK' } as const;
const PAGE = `${LIST}?perPage=25&state=${FILTER.state}&currency=${FILTER.currency}`;
const P99_LIMIT_MS = 10;
const GROWTH_LIMIT = 1.5;

interface Meta {
  apiKey: string;
  accountId: string;
  rows: number;
}

// Twelve merchants of falling size; the measured one is the largest, a Danish shop.
const MERCHANTS: Array<{ weight: number; homeCurrency: string }> = [
  [0.25, 'DKK'],
  [0.15, 'EUR'],
  [0.12, 'SEK'],
  [0.1, 'NOK'],
  [0.08, 'DKK'],
  [0.07, 'EUR'],
  [0.06, 'GBP'],
  [0.05, 'USD'],
  [0.04, 'DKK'],
  [0.03, 'EUR'],
  [0.03, 'SEK'],
  [0.02, 'NOK'],
].map(([weight, homeCurrency]) => ({ weight: weight as number, homeCurrency: homeCurrency as string }));

async function seed(runtime: Runtime, kind: StoreKind, name: string, rows: number): Promise<Meta> {
  const { accounts, pointsOfSale, terminals } = runtime.services;
  const merchants: SeedMerchant[] = [];
  for (const [i, m] of MERCHANTS.entries()) {
    const account = await accounts.create({
      name: `Bench merchant ${i + 1}`,
      email: `bench${i + 1}@shop.example.com`,
      currencyCode: m.homeCurrency,
      timezone: 'UTC',
      domain: 'shop.example.com',
    });
    await accounts.activate(account.id);
    const online = await pointsOfSale.create(account.id, {
      name: 'Web shop',
      domain: 'shop.example.com',
      webhookAuthentication: 'Bearer bench',
      type: 'ONLINE',
    });
    const shop = await pointsOfSale.create(account.id, { name: 'Store', domain: 'shop.example.com', webhookAuthentication: 'Bearer bench', type: 'PHYSICAL' });
    const tills = [await terminals.create(account.id, shop.id, { name: 'Till 1' }), await terminals.create(account.id, shop.id, { name: 'Till 2' })];
    merchants.push({
      accountId: account.id,
      pointOfSaleIds: [online.id, shop.id],
      terminalIds: tills.map((t) => t.terminal.id),
      homeCurrency: m.homeCurrency,
      weight: m.weight,
    });
  }
  const { key } = await accounts.createApiKey(merchants[0]!.accountId, 'bench');
  await runtime.close();
  await loadTransactions(benchDatabase(kind, name), transactionRows(rows, merchants));
  return { apiKey: key, accountId: merchants[0]!.accountId, rows };
}

const label = (rows: number): string => (rows >= 1_000_000 ? `${rows / 1_000_000}M` : `${rows / 1000}k`);

/** One size, seeded and served, with the URLs to measure. */
interface Served {
  rows: number;
  runtime: Runtime;
  meta: Meta;
  pageUrl: string;
  deepUrl: string;
  firstPage: unknown;
}

async function prepareSize(ctx: BenchContext, kind: StoreKind, rows: number): Promise<Served> {
  const { report } = ctx;
  const name = `tx_${label(rows).toLowerCase()}`;
  const db = benchDatabase(kind, name);
  const fingerprint = migrationFingerprint(kind, /^CREATE\b[^;]*\b(?:ON|TABLE)\s+transactions\b/i, `${SEED_VERSION}:${rows}`);
  const where = db.config.kind === 'sqlite' ? db.config.path : `schema ${db.schema}`;
  report.section(`${kind} ${label(rows)} rows`);
  const seeded = await openSeeded(db, fingerprint, (runtime) => seed(runtime, kind, name, rows));
  const { runtime, meta } = seeded;
  report.note(seeded.seeded ? `seeded ${rows} rows in ${seeded.seedSeconds.toFixed(1)} s (${where})` : `reusing seeded database (${where})`);
  try {
    const base = await serve(runtime);
    const headers = { authorization: `Bearer ${meta.apiKey}` };
    const sdb = runtime.store.db;
    const matching = sdb
      .selectFrom('transactions')
      .where('accountId', '=', meta.accountId)
      .where('state', '=', FILTER.state)
      .where('currency', '=', FILTER.currency);
    const { n } = await matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const { m } = await sdb
      .selectFrom('transactions')
      .where('accountId', '=', meta.accountId)
      .select((eb) => eb.fn.countAll<number>().as('m'))
      .executeTakeFirstOrThrow();
    report.note(`measured merchant: ${Number(m)} of ${rows} rows; ${Number(n)} match state=${FILTER.state}&currency=${FILTER.currency}`);

    // The cursor of the row half-way back: the next page starts deep in the index.
    const middle = await matching
      .select(['createdAt', 'id'])
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .offset(Math.floor(Number(n) / 2))
      .limit(1)
      .executeTakeFirstOrThrow();
    const pageUrl = base + PAGE;
    const deepUrl = `${base}${PAGE}&offset=${encodeCursor(middle)}`;

    // Both pages must really answer 25 matching rows before they are timed.
    const firstPage = await checkPage(pageUrl, headers);
    await checkPage(deepUrl, headers);

    const repository = (d: typeof sdb) => new KyselyTransactionsRepository(d, kind);
    const [pageQuery] = await recordQueries(sdb, (d) => repository(d).list(meta.accountId, FILTER, null, 26));
    const [deepQuery] = await recordQueries(sdb, (d) => repository(d).list(meta.accountId, FILTER, middle, 26));
    for (const [what, query] of [
      ['first page', pageQuery!],
      ['cursor page', deepQuery!],
    ] as const) {
      const plan = await explain(sdb, runtime.store.dialect, query);
      report.note(`plan (${what}): ${plan.lines.map((l) => l.trim()).join(' | ')}`);
      report.target(
        `${kind} ${label(rows)} ${what} reads an index in list order`,
        plan.usesIndexWithoutSort,
        plan.index ? `index ${plan.index}${plan.usesIndexWithoutSort ? ', no sort' : ', but sorts'}` : 'no index',
      );
      if (what === 'cursor page') {
        // The cursor must bound the index search; as a mere filter every row before it is read again.
        const bounded = /created_at/.test(plan.indexCondition ?? '');
        report.target(
          `${kind} ${label(rows)} cursor bounds the index search`,
          bounded,
          bounded ? 'created_at in the index condition' : 'cursor applied as a filter after the index search',
        );
      }
    }
    return { rows, runtime, meta, pageUrl, deepUrl, firstPage };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}

async function checkPage(url: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(url, { headers });
  const body = (await res.json()) as { items?: Array<{ transaction: { state: string; currency: string } }> };
  const items = body.items ?? [];
  if (res.status !== 200 || items.length !== 25 || items.some((i) => i.transaction.state !== FILTER.state || i.transaction.currency !== FILTER.currency)) {
    throw new Error(`GET ${url}: HTTP ${res.status}, ${items.length} items — not the page to measure`);
  }
  return body;
}

/** Figures of one load level, by size. */
interface Level {
  connections: number;
  base: Measurement;
  page: Map<number, Measurement>;
  deep: Map<number, Measurement>;
}

async function runStore(ctx: BenchContext, kind: StoreKind, sizes: number[]): Promise<void> {
  const { report } = ctx;
  const served: Served[] = [];
  let baseline: Awaited<ReturnType<typeof startBaseline>> | null = null;
  try {
    for (const rows of sizes) served.push(await prepareSize(ctx, kind, rows));
    const smallest = served[0]!;
    // Every size uses the same merchant layout, so one credential lookup stands for all.
    baseline = await startBaseline({
      authenticate: (secret) => smallest.runtime.services.accounts.authenticate(secret),
      routes: [
        {
          method: 'GET',
          url: LIST,
          schema: { querystring: TransactionListQuery, response: { 200: CursorEnvelope(TransactionResponse) } },
          payload: smallest.firstPage,
        },
      ],
    });
    const baseHeaders = { authorization: `Bearer ${smallest.meta.apiKey}` };

    report.section(`${kind} measurements (${served.map((s) => label(s.rows)).join(' and ')} served at once, measured in alternating rounds)`);
    // Two load levels: one connection shows what a request costs by itself (no queueing); the
    // configured concurrency (default 10) shows throughput and the latency under saturation.
    const levels: Level[] = [];
    for (const connections of [...new Set([1, ctx.load.connections])]) {
      const targets = [
        { url: baseline.url + PAGE, headers: baseHeaders },
        ...served.map((s) => ({ url: s.pageUrl, headers: { authorization: `Bearer ${s.meta.apiKey}` } })),
        ...served.map((s) => ({ url: s.deepUrl, headers: { authorization: `Bearer ${s.meta.apiKey}` } })),
      ];
      const figures = await ctx.compare(targets, { connections });
      const base = figures[0]!;
      const level: Level = { connections, base, page: new Map(), deep: new Map() };
      const c = `c=${connections}`;
      report.header();
      report.baseline(`${kind} ${c} (auth + schema, fixed page)`, base);
      for (const [i, s] of served.entries()) {
        level.page.set(s.rows, figures[1 + i]!);
        level.deep.set(s.rows, figures[1 + served.length + i]!);
        report.figure(`${kind} ${c} ${label(s.rows)} first page`, figures[1 + i]!, base);
      }
      for (const s of served) report.figure(`${kind} ${c} ${label(s.rows)} cursor page (half-way back)`, level.deep.get(s.rows)!, base);
      levels.push(level);
    }

    report.section(`${kind} targets`);
    if (!sizes.includes(1_000_000) || !sizes.includes(10_000)) {
      report.note('1M rows not measured (BENCH_QUICK=1): the 1M targets are not checked');
      return;
    }
    for (const level of levels) {
      const c = `c=${level.connections}`;
      for (const [what, figures] of [
        ['first page', level.page],
        ['cursor page', level.deep],
      ] as const) {
        const large = figures.get(1_000_000)!;
        const small = figures.get(10_000)!;
        const growth = large.p99 / small.p99;
        report.target(
          `${kind} ${what} ${c} p99 at 1M ≤ ${P99_LIMIT_MS} ms`,
          large.p99 <= P99_LIMIT_MS,
          `${formatMs(large.p99)} ms (baseline ${formatMs(level.base.p99)} ms)`,
        );
        report.target(
          `${kind} ${what} ${c} p99 1M/10k ≤ ${GROWTH_LIMIT}`,
          growth <= GROWTH_LIMIT,
          `${growth.toFixed(2)} (${formatMs(large.p99)} ms / ${formatMs(small.p99)} ms)`,
        );
      }
    }
  } finally {
    await baseline?.close();
    for (const s of served) await s.runtime.close();
  }
}

export default defineSuite({
  name: 'transactions-list',
  description: `GET ${PAGE} at 10k and 1M rows`,
  async run(ctx) {
    const sizes = ctx.quick ? [10_000] : [10_000, 1_000_000];
    for await (const kind of measuredStores(ctx.report, 'figures')) {
      await runStore(ctx, kind, sizes);
    }
  },
});
