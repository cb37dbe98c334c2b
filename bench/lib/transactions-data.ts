/**
 * Seeded transaction rows with a realistic mix — several merchants of different sizes, their
 * home currency dominant, most payments successful, flows and payment methods mixed — written
 * straight through the drivers in large batches (the API would take hours for a million rows).
 * Deterministic: the same count gives the same rows.
 */
import SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { withPgClient, type BenchDatabase } from './stores.js';

/** Bump when the generated data changes, so cached databases are seeded again. */
export const SEED_VERSION = 'transactions-v1';

export interface SeedMerchant {
  accountId: string;
  pointOfSaleIds: string[];
  terminalIds: string[];
  homeCurrency: string;
  /** Share of all rows. */
  weight: number;
}

type Kind = 'text' | 'int' | 'time';
// Column order of every generated row; types for PostgreSQL's unnest casts.
export const COLUMNS: Array<[string, Kind]> = [
  ['id', 'text'],
  ['account_id', 'text'],
  ['point_of_sale_id', 'text'],
  ['terminal_id', 'text'],
  ['session_id', 'text'],
  ['subscription_id', 'text'],
  ['billing_agreement_charge_id', 'text'],
  ['payment_method_id', 'text'],
  ['payment_method_type', 'text'],
  ['payment_method_sub_type', 'text'],
  ['payment_method_expiry', 'text'],
  ['payment_method_display_text', 'text'],
  ['payment_method_holder_name', 'text'],
  ['customer_id', 'text'],
  ['type', 'text'],
  ['flow', 'text'],
  ['state', 'text'],
  ['error_code', 'text'],
  ['external_status_codes', 'text'],
  ['sca_mode', 'text'],
  ['amount', 'int'],
  ['fee', 'int'],
  ['currency', 'text'],
  ['instant_capture', 'text'],
  ['notification_url', 'text'],
  ['reference', 'text'],
  ['text_on_statement', 'text'],
  ['descriptor', 'text'],
  ['exemptions', 'text'],
  ['attributes', 'text'],
  ['client_ip', 'text'],
  ['client_country', 'text'],
  ['acquirer', 'text'],
  ['acquirer_reference', 'text'],
  ['authorized_amount', 'int'],
  ['captured_amount', 'int'],
  ['refunded_amount', 'int'],
  ['voided_amount', 'int'],
  ['paid_out_amount', 'int'],
  ['pending_amount', 'int'],
  ['created_at', 'time'],
  ['updated_at', 'time'],
  ['finalized_at', 'time'],
];
type Value = string | number | null;

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function picker<T>(random: () => number, table: Array<[T, number]>): () => T {
  const total = table.reduce((s, [, w]) => s + w, 0);
  return () => {
    let x = random() * total;
    for (const [value, w] of table) if ((x -= w) < 0) return value;
    return table[table.length - 1]![0];
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const HEX = '0123456789abcdef';

/** Rows oldest first, spread over two years ending at a fixed instant, merchants interleaved. */
export function* transactionRows(count: number, merchants: SeedMerchant[]): Generator<Value[]> {
  const random = prng(20260101 ^ count);
  const txId = () => {
    let s = '';
    for (let i = 0; i < 11; i++) s += CROCKFORD[Math.floor(random() * 32)];
    return s;
  };
  const uuid = () => {
    let s = '';
    for (let i = 0; i < 32; i++) s += HEX[Math.floor(random() * 16)];
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20)}`;
  };
  const merchant = picker(
    random,
    merchants.map((m) => [m, m.weight] as [SeedMerchant, number]),
  );
  const currencyPickers = new Map(
    merchants.map((m) => {
      const others = ['DKK', 'EUR', 'SEK', 'NOK', 'USD', 'GBP'].filter((c) => c !== m.homeCurrency);
      const table: Array<[string, number]> = [
        [m.homeCurrency, 60],
        [others[0]!, 20],
        [others[1]!, 8],
        [others[2]!, 7],
        [others[3]!, 3],
        [others[4]!, 2],
      ];
      return [m.accountId, picker(random, table)] as const;
    }),
  );
  const state = picker<string>(random, [
    ['SUCCESS', 80],
    ['FAILED', 16],
    ['PENDING', 2.5],
    ['PROCESSING', 1.5],
  ]);
  const flow = picker<string>(random, [
    ['CIT', 45],
    ['MIT', 35],
    ['SALE', 12],
    ['MOTO', 5],
    ['PAYOUT', 3],
  ]);
  const method = picker<[string, string]>(random, [
    [['CARD', 'Visa'], 47],
    [['CARD', 'Mastercard'], 38],
    [['VIPPS_MOBILEPAY', 'MobilePay'], 8],
    [['APPLE_PAY', 'Visa'], 4],
    [['GOOGLE_PAY', 'Mastercard'], 3],
  ]);
  const failure = picker<string>(random, [
    ['DECLINED_BY_ISSUER_OR_SCHEME', 50],
    ['INSUFFICIENT_FUNDS', 30],
    ['CARD_EXPIRED', 10],
    ['EXPIRED', 10],
  ]);

  const end = Date.parse('2026-06-01T00:00:00.000Z');
  const span = 730 * 86_400_000;
  const step = span / count;
  const start = end - span;
  for (let i = 0; i < count; i++) {
    const m = merchant();
    const created = Math.floor(start + i * step + random() * step);
    const createdAt = new Date(created).toISOString();
    const f = flow();
    // A terminal holds at most one sale in flight (transactions_terminal_busy): old sales are final.
    let s = state();
    if (f === 'SALE' && s !== 'SUCCESS' && s !== 'FAILED') s = 'FAILED';
    const final = s === 'SUCCESS' || s === 'FAILED';
    const finalizedAt = final ? new Date(created + 500 + Math.floor(random() * 4000)).toISOString() : null;
    const [pmType, pmSub] = method();
    const amount = Math.round(Math.exp(Math.log(1000) + random() * (Math.log(500_000) - Math.log(1000))));
    const payout = f === 'PAYOUT';
    const captured = s === 'SUCCESS' && !payout && random() < 0.85 ? amount : 0;
    const refunded = captured && random() < 0.04 ? Math.floor(amount / 2) : 0;
    const last4 = String(1000 + Math.floor(random() * 9000));
    const failed = s === 'FAILED';
    const hasCustomer = random() < 0.6;
    yield [
      txId(),
      m.accountId,
      f === 'SALE' ? (m.pointOfSaleIds[1] ?? m.pointOfSaleIds[0]!) : m.pointOfSaleIds[0]!,
      f === 'SALE' ? (m.terminalIds[Math.floor(random() * m.terminalIds.length)] ?? null) : null,
      f === 'CIT' ? uuid() : null,
      f === 'MIT' ? uuid() : null,
      f === 'MIT' && random() < 0.3 ? uuid() : null,
      f === 'MIT' || (f === 'CIT' && random() < 0.3) ? uuid() : null,
      pmType,
      pmSub,
      `${String(1 + Math.floor(random() * 12)).padStart(2, '0')}/${28 + Math.floor(random() * 4)}`,
      `41111111XXXX${last4}`,
      null,
      hasCustomer ? `cust-${Math.floor(random() * 50_000)}` : null,
      payout ? 'PAYOUT' : f === 'MOTO' ? 'MOTO' : 'PAYMENT',
      f,
      s,
      failed ? failure() : null,
      failed ? '{"terminal":null,"acquirer":"05","network":"05","sca":null}' : null,
      f === 'CIT' ? 'NORMAL' : null,
      amount,
      0,
      currencyPickers.get(m.accountId)!(),
      f === 'CIT' || f === 'MIT' ? (random() < 0.5 ? 'OFF' : 'NO_VOID') : null,
      f === 'SALE' ? null : 'https://shop.example.com/payments/callback',
      random() < 0.7 ? `order-${i}` : null,
      null,
      'SHOP.EXAMPLE',
      null,
      random() < 0.2 ? '{"channel":"web"}' : null,
      f === 'CIT' ? `192.0.2.${Math.floor(random() * 255)}` : null,
      f === 'CIT' ? 'DK' : null,
      'sandbox',
      final ? `acq-${i}` : null,
      s === 'SUCCESS' && !payout ? amount : 0,
      captured,
      refunded,
      0,
      s === 'SUCCESS' && payout ? amount : 0,
      0,
      createdAt,
      finalizedAt ?? createdAt,
      finalizedAt,
    ];
  }
}

/**
 * Bulk load with the transactions indexes dropped and built again afterwards (from their own
 * definitions in the database, so they are exactly the migration's): far faster than keeping
 * a dozen indexes up to date row by row.
 */
export async function loadTransactions(db: BenchDatabase, rows: Iterable<Value[]>): Promise<void> {
  if (db.config.kind === 'sqlite') loadSqlite(db.config.path, rows);
  else await withPgClient(db, (client) => loadPostgres(client, rows));
}

function loadSqlite(file: string, rows: Iterable<Value[]>): void {
  const sqlite = new SqliteDatabase(file);
  try {
    const indexes = sqlite
      .prepare(`select name, sql from sqlite_master where type = 'index' and tbl_name = 'transactions' and sql is not null`)
      .all() as Array<{ name: string; sql: string }>;
    const perStatement = 200;
    const tuple = `(${COLUMNS.map(() => '?').join(',')})`;
    const insertSql = (n: number) => `insert into transactions (${COLUMNS.map(([c]) => c).join(',')}) values ${Array(n).fill(tuple).join(',')}`;
    const full = sqlite.prepare(insertSql(perStatement));
    sqlite.transaction(() => {
      for (const index of indexes) sqlite.exec(`drop index ${index.name}`);
      let batch: Value[] = [];
      let n = 0;
      for (const row of rows) {
        batch.push(...row);
        if (++n === perStatement) {
          full.run(batch);
          batch = [];
          n = 0;
        }
      }
      if (n) sqlite.prepare(insertSql(n)).run(batch);
      for (const index of indexes) sqlite.exec(index.sql);
    })();
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
}

async function loadPostgres(client: pg.Client, rows: Iterable<Value[]>): Promise<void> {
  const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
    `select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'transactions'
       and indexname not in (select conname from pg_constraint where conrelid = 'transactions'::regclass)`,
  );
  const cast = { text: 'text[]', int: 'bigint[]', time: 'timestamptz[]' };
  // One parameter per column (an array), so that a batch of thousands of rows is one statement.
  const insert = `insert into transactions (${COLUMNS.map(([c]) => c).join(',')})
    select * from unnest(${COLUMNS.map(([, kind], i) => `$${i + 1}::${cast[kind]}`).join(',')})`;
  await client.query('set synchronous_commit = off');
  await client.query(`set maintenance_work_mem = '256MB'`);
  await client.query('begin');
  for (const index of indexes) await client.query(`drop index ${index.indexname}`);
  const flush = async (columns: Value[][]) => {
    if (columns[0]!.length) await client.query(insert, columns);
  };
  const perStatement = 10_000;
  let columns: Value[][] = COLUMNS.map(() => []);
  for (const row of rows) {
    for (let c = 0; c < row.length; c++) columns[c]!.push(row[c]!);
    if (columns[0]!.length === perStatement) {
      await flush(columns);
      columns = COLUMNS.map(() => []);
    }
  }
  await flush(columns);
  for (const index of indexes) await client.query(index.indexdef);
  await client.query('commit');
  // What autovacuum would do soon after a bulk load; the planner needs the statistics.
  await client.query('analyze transactions');
}
