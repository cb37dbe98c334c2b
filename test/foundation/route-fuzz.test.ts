/**
 * Property-based fuzz of every registered route (issue 9, point 9), with fast-check.
 *
 * For each route of the running app (the route objects of src/services.ts plus the app's own
 * health, metrics and document routes; checked against /openapi.json) fast-check generates
 * requests from the route's TypeBox schemas: valid-shaped bodies, query strings and path
 * parameters built from real ids of existing resources (a transaction, a subscription, a point of
 * sale, …, of this merchant and of another one), then mutated with hostile values (`true`,
 * `"1e999"`, a raw JSON `1e999`, `"0x10"`, `[12]`, NUL, CR/LF, deep nesting, unknown currencies,
 * huge strings, …), odd headers (Idempotency-Key, Content-Type, Authorization) and other tenants'
 * credentials. A third of the requests stay clean (right credential, values the schema allows) so
 * that they get past validation and run the handlers. Every response must hold:
 *   - no 5xx (no documented 503 is expected: the database is up and workers are off);
 *   - a 4xx has the contract's error body (INTERFACE §3): `success: false`, an `errorCode` of the
 *     catalogue with that code's status, a `message`; a 422 VALIDATION_ERROR adds `errors` whose
 *     every message is `[rule]: text` with a contract rule (FIELD_RULE_PATTERN). Only the HTML
 *     pages (payment window, virtual terminal) may answer a browser with an HTML error page;
 *   - exact numbers only (INTERFACE §3): a 2xx never accepted a JSON body that its schema refuses
 *     without type coercion (a number as a string, `true`, `[12]`, a float, an out-of-range or
 *     non-finite number, an unknown currency), nor a query-string number not in decimal digits;
 *   - no table changes after a 4xx (see "Watching the database" below for the one exception);
 *   - no credential, a garbage one or one of the wrong tier never gets a 2xx; a merchant never gets
 *     a 2xx on another tenant's resource, nor sees another tenant's ids in a 2xx body.
 * Findings are collected, de-duplicated and printed as `# FAIL …` lines (route, input, response,
 * stack from the runtime's log); the property itself never fails, so that fast-check neither stops
 * at the first finding nor shrinks (a shrink would replay requests against a changed database).
 *
 * Seeds: a fixed one and a random one, each printed as `# fuzz seed …`. SQLite runs a pass with
 * each, PostgreSQL (when reachable) one shorter pass with the random one. Every pass starts from a
 * fresh database, so FUZZ_SEED=<n> replays it (the same inputs route by route); FUZZ_ROUTE=<regex>
 * narrows a replay to some routes, FUZZ_STORES=sqlite|postgres to one store. FUZZ_BUDGET_MS
 * (default 52 s) bounds the passes, set-up included; each route gets an equal share of what is left.
 * Routes run reads first, then writes, then what deletes or stops things, then the clock.
 *
 * Watching the database: before fuzzing, a trigger on every table counts row changes per table
 * (table `fuzz_change_counter`, the only table left out of the snapshots: it is this test's
 * instrument). After each request the counters say which tables changed; those are snapshotted
 * again (every row, ordered by primary key, hashed) and, after a 4xx, compared row by row with the
 * snapshot taken before the request. Every FULL_CHECK_EVERY routes the whole database is
 * snapshotted and compared, so a write the counters missed would still be found. Between routes
 * the due jobs run once (workers are off otherwise), then the baseline is taken afresh.
 * The one change a refused request may legitimately make: INTERFACE §4 stores the response of a
 * request refused after its Idempotency-Key was claimed (a 404 of an unknown resource, a 409, a
 * 422 other than schema/field validation) so that a retry replays it. So after such a 4xx the
 * `idempotency_keys` table may gain exactly one row: the request's (method, path, key), state
 * `completed`, with the response's status. Any other change of that table (or of any other) fails.
 * (A claim released after a 401/403/422-validation is inserted and deleted again: no net change.)
 *
 * Replaces the older test/foundation/no-500.test.ts: its inputs, routes and checks are all here.
 */
import assert from 'node:assert/strict';
import { createHash, randomInt } from 'node:crypto';
import { describe, test } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import fc from 'fast-check';
import { sql } from 'kysely';
import { isKnownCurrency } from '../../src/shared/currencies.js';
import { ERROR_CATALOGUE, FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import type { RouteDef } from '../../src/shared/route.js';
import { API, startTestRuntime, type TestClient, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores, type StoreKind } from '../support/stores.js';

// ---------------------------------------------------------------------------------------------
// Seeds and budget
// ---------------------------------------------------------------------------------------------

const FIXED_SEED = 20261123;
const REPLAY_SEED = process.env.FUZZ_SEED;
const SEEDS = REPLAY_SEED !== undefined && REPLAY_SEED !== '' ? [Number(REPLAY_SEED) >>> 0] : [FIXED_SEED, randomInt(1, 2 ** 31 - 1)];
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 52_000);
const ROUTE_FILTER = process.env.FUZZ_ROUTE ? new RegExp(process.env.FUZZ_ROUTE) : null;
/** Upper bound of requests per route and pass; the time share usually ends a route first. */
const MAX_REQUESTS_PER_PASS = 20_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Even when the time is up (a slow first request that compiles the route's schemas), a route gets this many. */
const MIN_RUNS_PER_ROUTE = 5;
/** How often (in routes) every table is snapshotted and compared, counters or not. */
const FULL_CHECK_EVERY = 10;

for (const seed of SEEDS) console.log(`# fuzz seed ${seed}${seed === FIXED_SEED ? ' (fixed)' : ' (random)'}: replay with FUZZ_SEED=${seed}`);

/** Stable 32-bit hash of a string (per-route seeds that do not move when routes are added). */
function hash32(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

// ---------------------------------------------------------------------------------------------
// The world: tenants, credentials and the ids of existing resources
// ---------------------------------------------------------------------------------------------

type Tenant = 'A' | 'B' | 'C';
type Principal = Tenant | 'operator' | null;

/** Pools of real ids by kind; `own` belong to tenant A (the fuzzing merchant), `foreign` to tenant B. */
interface Pool {
  own: string[];
  foreign: string[];
}

interface World {
  operatorKey: string;
  keys: Record<Tenant, string>;
  accountIds: Record<Tenant, string>;
  pools: Record<string, Pool>;
  /** Seeded id (lower case) → owning tenant. */
  owner: Map<string, Tenant>;
  /** Every seeded id, for "an id of the wrong kind". */
  allOwnIds: string[];
  allForeignIds: string[];
}

/** Path parameter or body field name → pool. */
const POOL_OF: Record<string, string> = {
  paymentMethodId: 'paymentMethodId',
  transactionId: 'transactionId',
  notificationId: 'notificationId',
  accountId: 'accountId',
  pointOfSaleId: 'pointOfSaleId',
  terminalId: 'terminalId',
  webhookId: 'webhookId',
  subscriptionId: 'subscriptionId',
  sessionId: 'sessionId',
  key: 'sessionKey',
  paymentLinkId: 'paymentLinkId',
  planId: 'billingPlanId',
  billingPlanId: 'billingPlanId',
  agreementId: 'billingAgreementId',
  billingAgreementId: 'billingAgreementId',
  billingAgreementChargeId: 'billingAgreementChargeId',
  transferId: 'settlementTransferId',
};

function poolName(name: string, parent: string): string | undefined {
  if (name === 'id' && parent === 'terminal') return 'terminalId';
  return POOL_OF[name];
}

const TEST_PANS = ['4111111111111111', '5555555555554444', '4242424242424242', '4000000000000002', '4000000000009995', '4000000000000259', '4000000000003220'];
const CURRENCIES = ['DKK', 'DKK', 'DKK', 'EUR', 'SEK', 'NOK', 'USD', 'GBP', 'JPY', 'ISK'];
const THIS_YEAR = new Date().getUTCFullYear();

const card = (number = '4111111111111111') => ({ number, expiryMonth: 12, expiryYear: THIS_YEAR + 3, cvc: '123', holderName: 'Fuzz Holder' });

function must(res: TestResponse, what: string): any {
  if (res.status !== 200) throw new Error(`seeding, ${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

interface TenantSeed {
  tenant: Tenant;
  accountId: string;
  key: string;
  api: TestClient;
  ids: Record<string, string[]>;
}

/** A merchant with one resource of every kind, made through the API the way an integrator would. */
async function seedTenant(t: TestRuntime, tenant: Tenant): Promise<TenantSeed> {
  const m = await t.createMerchant();
  // An API key: access tokens expire on the service clock, which the fuzz may move.
  const { key } = must(await m.api.post(`${API}/management/api-keys`, { name: `fuzz-${tenant}` }), 'api key');
  const api = t.client(key);
  const moto = async (extra: Record<string, unknown> = {}) =>
    must(
      await api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 5000, currency: 'DKK', instantCapture: 'OFF', customerId: 'cust-fuzz', ...extra },
        card: card(),
      }),
      'moto',
    ).transaction;
  const authorized = await moto({ notificationUrl: 'http://localhost:1/cb' });
  const captured = await moto();
  must(await api.post(`${API}/transactions/${captured.id}/capture`, { amount: 3000 }), 'capture');
  must(await api.post(`${API}/transactions/${captured.id}/refund`, { amount: 500 }), 'refund');
  const cit = must(
    await api.post(`${API}/cit`, {
      pointOfSaleId: m.onlinePointOfSaleId,
      amount: 100,
      currency: 'DKK',
      customerId: 'cust-sub',
      subscription: { type: 'UNSCHEDULED' },
    }),
    'cit',
  );
  must(await t.operator.post(`/sandbox/v1/sessions/${cit.session.id}/complete`, { card: card() }), 'complete session');
  await t.runtime.runner.drain();
  const session = must(await api.get(`${API}/sessions/${cit.session.id}`), 'session').session;
  if (!session.subscriptionId) throw new Error(`seeding: the CIT session did not complete: ${JSON.stringify(session)}`);
  const plan = must(
    await api.post(`${API}/subscriptions/billing/plans`, {
      name: 'Fuzz plan',
      amount: 900,
      currency: 'DKK',
      maxAttempts: 2,
      interval: { period: 'DAY', frequency: 1 },
    }),
    'plan',
  ).billingPlan;
  const agreement = must(
    await api.post(`${API}/subscriptions/billing/agreements`, { billingPlanId: plan.id, subscriptionId: session.subscriptionId }),
    'agreement',
  ).billingAgreement;
  const webhook = must(
    await api.post(`${API}/webhooks`, { url: 'http://localhost:1/wh', events: ['transaction.success.v1'], secret: 'Bearer fuzz' }),
    'webhook',
  ).webhook;
  const sale = must(
    await api.post(`${API}/sale`, {
      terminal: { id: m.terminalIds[0] },
      transaction: { pointOfSaleId: m.physicalPointOfSaleId, amount: 300, currency: 'DKK' },
    }),
    'sale',
  ).transaction;
  const notifications = must(await api.get(`${API}/transactions/${authorized.id}/notifications`), 'notifications').notifications as Array<{ id: string }>;
  return {
    tenant,
    accountId: m.accountId,
    key,
    api,
    ids: {
      accountId: [m.accountId],
      pointOfSaleId: [m.onlinePointOfSaleId, m.physicalPointOfSaleId!],
      terminalId: [...m.terminalIds],
      transactionId: [authorized.id, captured.id, session.transactionId, sale.id],
      paymentMethodId: [authorized.paymentMethodId, session.paymentMethodId].filter(Boolean),
      notificationId: notifications.map((n) => n.id),
      subscriptionId: [session.subscriptionId],
      sessionId: [session.id],
      sessionKey: [],
      billingPlanId: [plan.id],
      billingAgreementId: [agreement.id],
      billingAgreementChargeId: [],
      webhookId: [webhook.id],
      paymentLinkId: [],
      settlementTransferId: [],
    },
  };
}

/** After the clock moved: resources that must not expire before the fuzz reaches them, and what the jobs made. */
async function seedTenantLater(t: TestRuntime, s: TenantSeed): Promise<void> {
  const pos = s.ids.pointOfSaleId![0]!;
  const pending = must(await s.api.post(`${API}/cit`, { pointOfSaleId: pos, amount: 700, currency: 'DKK', timeout: 120 }), 'pending cit');
  // POST /payment-links answers flat {id, sessionId, url, qrCode} (INTERFACE §11.5).
  const link = must(await s.api.post(`${API}/payment-links`, { pointOfSaleId: pos, amount: 1200, currency: 'DKK' }), 'payment link');
  s.ids.sessionId!.push(pending.session.id, link.sessionId);
  s.ids.sessionKey!.push(pending.key, String(link.url).split('/').pop()!);
  s.ids.paymentLinkId!.push(link.id);
  const charges = must(await s.api.get(`${API}/subscriptions/billing/charges`), 'charges').items as Array<{
    billingAgreementCharge: { id: string; transactionId: string | null };
  }>;
  for (const { billingAgreementCharge: c } of charges) {
    s.ids.billingAgreementChargeId!.push(c.id);
    if (c.transactionId) s.ids.transactionId!.push(c.transactionId);
  }
  const transfers = must(await s.api.get(`${API}/settlements/transfers`), 'transfers').items as Array<{ settlementTransfer: { id: string } }>;
  s.ids.settlementTransferId!.push(...transfers.map((i) => i.settlementTransfer.id));
}

async function buildWorld(t: TestRuntime): Promise<World> {
  const a = await seedTenant(t, 'A');
  const b = await seedTenant(t, 'B');
  // Two days on: the billing agreements charge and the daily settlement run makes transfers.
  must(await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 2 * 86_400 }), 'clock');
  await t.runtime.runner.drain();
  await seedTenantLater(t, a);
  await seedTenantLater(t, b);
  await t.runtime.runner.drain();
  // C: an account of its own, for the partner routes that deactivate or delete one.
  const { account } = must(
    await t.operator.post(`${API}/partner/accounts`, { name: 'Fuzz C', email: 'c@example.com', currencyCode: 'DKK', timezone: 'UTC', domain: 'localhost' }),
    'account C',
  );
  must(await t.operator.patch(`${API}/partner/accounts/${account.id}/activate`), 'activate C');
  const { accessToken } = must(await t.operator.post(`${API}/partner/accounts/${account.id}/access-token`, { environment: 'test' }), 'token C');

  const pools: Record<string, Pool> = {};
  const owner = new Map<string, Tenant>();
  for (const name of Object.keys(a.ids)) pools[name] = { own: [...new Set(a.ids[name])], foreign: [...new Set(b.ids[name] ?? [])] };
  pools.accountId!.own.push(account.id);
  for (const s of [a, b]) for (const ids of Object.values(s.ids)) for (const id of ids) owner.set(id.toLowerCase(), s.tenant);
  owner.set(account.id.toLowerCase(), 'C');
  for (const [name, pool] of Object.entries(pools)) {
    if (name !== 'accountId' && pool.own.length === 0) throw new Error(`seeding made no ${name}`);
  }
  return {
    operatorKey: t.operatorKey,
    keys: { A: a.key, B: b.key, C: accessToken },
    accountIds: { A: a.accountId, B: b.accountId, C: account.id },
    pools,
    owner,
    allOwnIds: Object.values(a.ids).flat(),
    allForeignIds: Object.values(b.ids).flat(),
  };
}

// ---------------------------------------------------------------------------------------------
// Values: valid ones from the schemas, and hostile ones
// ---------------------------------------------------------------------------------------------

type Schema = Record<string, any>;

/**
 * Arbitraries are built once per pass and shared by every route: building fast-check's string
 * arbitraries is costly (each one precomputes its "dangerous strings"). Cleared when a pass starts.
 */
const arbitraryCache = new Map<string, fc.Arbitrary<any>>();
function memo<T>(key: string, build: () => fc.Arbitrary<T>): fc.Arbitrary<T> {
  let arb = arbitraryCache.get(key);
  if (!arb) arbitraryCache.set(key, (arb = build()));
  return arb;
}
const str = (unit: 'grapheme-ascii' | 'grapheme', minLength: number, maxLength: number): fc.Arbitrary<string> =>
  memo(`string:${unit}:${minLength}:${maxLength}`, () => fc.string({ unit, minLength, maxLength }));

/** A JSON value written as raw text: numbers JSON.stringify cannot produce. */
class Raw {
  constructor(readonly text: string) {}
}
/** Extra `"key": value` pairs written after an object's own (duplicate keys). */
const DUPLICATES = Symbol('duplicate keys');
/** A query-string value sent as is (broken percent-encoding and the like). */
class RawQuery {
  constructor(readonly text: string) {}
}

const HUGE = 'x'.repeat(300_000);
const LONG = 'y'.repeat(10_000);
const nest = (depth: number, leaf: unknown, array = false): unknown => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = array ? [value] : { a: value };
  return value;
};

/** The old no-500 test's strings (folded in here) and more. */
const HOSTILE_STRINGS = [
  '',
  ' ',
  'x',
  'null',
  'true',
  'false',
  '0',
  '-1',
  '12',
  ' 12',
  '12 ',
  '+12',
  '1_000',
  '1,5',
  '1.5',
  '١٢',
  '１２',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e999',
  '-1e999',
  '1e309',
  '1e3',
  '0x10',
  '0b11',
  '0o7',
  '1n',
  'XYZ',
  'dkk',
  'Dkk',
  'EUR ',
  'EURO',
  'ZZZ',
  'a\r\nb',
  '\r\nX-Injected: yes',
  'a\nb',
  '\t',
  'a\u0000b',
  '\u0000',
  '\u0001',
  '\uD800',
  '\uFFFF',
  '💳',
  'Ω≈ç√',
  '\u202Eevil',
  'é',
  '\\',
  '"',
  "'",
  "'; drop table transactions; --",
  '../../etc/passwd',
  '%00',
  '%2F',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  'x'.repeat(5000),
  LONG,
  HUGE,
  '4111111111111111',
  '4111 1111 1111 1111',
  '2016-12-31T23:59:60Z',
  '2024-02-30',
  '2024-13-01',
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '9999-12-31',
  '9999-12-31T23:59:59.999Z',
  '2026-01-01T00:00:00+14:00',
  '2026-01-01 00:00:00',
  '1700000000',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-4fff-bfff-ffffffffffff',
  'ABCDEFGHJKM',
  'abcdefghjkm',
  'ILOU0000000',
  // URLs that fail fast if a callback to one is ever tried (no cloud metadata address, no DNS name).
  'http://0.0.0.0:1/latest',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'http://[::1]/cb',
  'ftp://localhost/x',
  'http://localhost:99999/',
  'http://localhost\r\n/x',
  '//localhost/x',
  'http://evil.example/localhost',
  'http://localhost.evil.example/',
  'http://user:pw@localhost/',
];

const HOSTILE_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  -0.0001,
  1.0000001,
  12.5,
  999_999_999,
  1_000_000_000,
  999_999_999.5,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  2 ** 63,
  1e21,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  Number.EPSILON,
];

const RAW_NUMBERS = [
  '1e999',
  '-1e999',
  '1e-999',
  '12345678901234567890',
  '1.0',
  '-0',
  '1E2',
  '1e2',
  '0.1e1',
  '999999999.0000001',
  '100000000000000000000000',
].map((text) => new Raw(text));

function hostileArb(world: World): fc.Arbitrary<unknown> {
  return memo('hostile', () => hostileArbUncached(world));
}

function hostileArbUncached(world: World): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...HOSTILE_STRINGS) },
    { weight: 4, arbitrary: fc.constantFrom<unknown>(...HOSTILE_NUMBERS) },
    { weight: 3, arbitrary: fc.constantFrom<unknown>(...RAW_NUMBERS) },
    { weight: 3, arbitrary: fc.constantFrom<unknown>(true, false, null, [12], [], {}, [null], ['DKK'], { amount: 1 }, [[[]]], { '': '' }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        nest(40, 1),
        nest(40, 1, true),
        nest(20, 'x'),
        Array.from({ length: 600 }, () => ({ amount: 1 })),
      ),
    },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(...world.allForeignIds, ...world.allOwnIds, ...world.allOwnIds.map((id) => id.toUpperCase())) },
    // Any UTF-16 code units (lone surrogates, controls); fc.string's 'binary' unit costs a second to build.
    { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((codes) => String.fromCharCode(...codes)) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.uuid() },
  );
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw);

const dateOnly = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Ctx {
  world: World;
  name: string;
  parent: string;
  /** The clock the service had when the route's fuzz began (dates near it are the interesting ones). */
  now: number;
}

function idArb(pool: Pool | undefined, world: World): fc.Arbitrary<string> {
  const options: Array<fc.WeightedArbitrary<string>> = [{ weight: 1, arbitrary: fc.uuid() }];
  if (pool?.own.length) options.push({ weight: 6, arbitrary: fc.constantFrom(...pool.own) });
  if (pool?.foreign.length) options.push({ weight: 1, arbitrary: fc.constantFrom(...pool.foreign) });
  if (!pool) options.push({ weight: 1, arbitrary: fc.constantFrom(...world.allOwnIds) });
  return fc.oneof(...options);
}

function integerArb(schema: Schema, ctx: Ctx): fc.Arbitrary<number> {
  const I32 = 2 ** 31 - 1;
  const lo = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : -1000;
  const hi = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : 1_000_000;
  const clamp = (v: number) => Math.max(-I32, Math.min(I32, v));
  const edges = fc.constantFrom(lo, hi);
  switch (ctx.name) {
    case 'expiryMonth':
      return fc.integer({ min: 1, max: 12 });
    case 'expiryYear':
      return fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: THIS_YEAR, max: THIS_YEAR + 8 }) },
        { weight: 1, arbitrary: fc.constantFrom(THIS_YEAR - 1, 30, 999, 10000) },
      );
    case 'advanceSeconds':
      return fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 7200 }) }, { weight: 1, arbitrary: edges });
    case 'amount':
    case 'fee':
      return fc.oneof({ weight: 5, arbitrary: fc.integer({ min: Math.max(lo, 1), max: clamp(Math.min(hi, 6000)) }) }, { weight: 1, arbitrary: edges });
    default:
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: clamp(lo), max: clamp(Math.min(hi, lo + 1000)) }) }, { weight: 1, arbitrary: edges });
  }
}

function stringArb(schema: Schema, ctx: Ctx): fc.Arbitrary<string> {
  const { name, parent, world, now } = ctx;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  switch (schema.format) {
    case 'uuid':
      return idArb(world.pools[poolName(name, parent) ?? ''], world);
    case 'date':
      return fc.integer({ min: -30, max: 800 }).map((days) => dateOnly(now + days * 86_400_000));
    case 'date-time':
      return fc.integer({ min: -30 * 86_400, max: 400 * 86_400 }).map((s) => new Date(now + s * 1000).toISOString());
    case 'uri':
      return fc.constantFrom(
        // On the approved domain (`localhost`) or not; none needs DNS or waits if a callback is tried.
        'http://localhost:1/cb',
        'https://localhost:1/return?order=1',
        'http://127.0.0.1:1/cb',
        'https://example.com/off-domain',
        `http://localhost:1/${'p'.repeat(2000)}`,
      );
    case 'email':
      return fc.constantFrom('fuzz@example.com', 'a.b+c@sub.example.org');
    case 'iso4217':
      return fc.constantFrom(...CURRENCIES);
    default:
      break;
  }
  if (schema.pattern === '^[A-Z]{3}$') return fc.constantFrom(...CURRENCIES);
  const pool = poolName(name, parent);
  if (pool && world.pools[pool]) return idArb(world.pools[pool], world);
  if (name === 'number' && parent === 'card') return fc.constantFrom(...TEST_PANS);
  if (name === 'cvc') return fc.constantFrom('123', '1234', '000');
  if (name === 'customerId') return fc.constantFrom('cust-fuzz', 'cust-sub', 'cust-new');
  if (name === 'domain') return fc.constantFrom('localhost', 'localhost', 'example.com');
  if (name === 'secret' || name === 'webhookAuthentication') return fc.constantFrom('Bearer fuzz-secret', 'Basic dXNlcjpwdw==');
  if (name === 'offset') return fc.constantFrom('', '', 'bm90LWEtY3Vyc29y', 'garbage!');
  if (typeof schema.pattern === 'string') {
    return memo(`pattern:${schema.pattern}:${minLength}:${maxLength}`, () =>
      fc.stringMatching(new RegExp(schema.pattern), { size: 'xsmall' }).filter((s) => s.length >= minLength && s.length <= maxLength),
    );
  }
  const max = Math.max(minLength, Math.min(maxLength, 24));
  return fc.oneof(
    { weight: 6, arbitrary: str('grapheme-ascii', minLength, max) },
    { weight: 1, arbitrary: str('grapheme', minLength, max) },
    ...(Number.isFinite(maxLength) && maxLength <= 100_000 ? [{ weight: 1, arbitrary: fc.constant('z'.repeat(maxLength)) }] : []),
  );
}

/** A value the schema accepts (mostly): the starting point that mutations then break. */
function valueArb(schema: Schema | undefined, ctx: Ctx, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 12) return fc.constant(null);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) {
    const concrete = union.filter((s) => s.type !== 'null');
    const options: Array<fc.WeightedArbitrary<unknown>> = concrete.map((s) => ({ weight: 4, arbitrary: valueArb(s, ctx, depth + 1) }));
    if (concrete.length < union.length) options.push({ weight: 1, arbitrary: fc.constant(null) });
    return fc.oneof(...options);
  }
  if (Array.isArray(schema.allOf)) return valueArb(Object.assign({}, ...(schema.allOf as Schema[])), ctx, depth + 1);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const type = schema.type ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>((schema.required as string[] | undefined) ?? []);
      const names = Object.keys(props);
      if (names.length === 0) {
        const pattern = Object.values((schema.patternProperties ?? {}) as Record<string, Schema>)[0];
        if (!pattern) return fc.constant({});
        return fc.dictionary(str('grapheme-ascii', 1, 8), valueArb(pattern, { ...ctx, name: '', parent: ctx.name }, depth + 1), { maxKeys: 3 });
      }
      const entries: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of names) entries[key] = valueArb(props[key], { ...ctx, name: key, parent: ctx.name }, depth + 1);
      // Fields with a default are optional for a client even when the compiled schema lists them.
      return fc.record(entries, { requiredKeys: names.filter((k) => required.has(k) && props[k]?.default === undefined) });
    }
    case 'array': {
      const items = valueArb(schema.items as Schema | undefined, { ...ctx, parent: ctx.name }, depth + 1);
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxLength = Math.max(minLength, Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 3, 3));
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'integer':
      return integerArb(schema, ctx);
    case 'number':
      return fc.oneof(integerArb(schema, ctx), fc.double({ min: 0, max: 1000, noNaN: true }));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'string':
      return stringArb(schema, ctx);
    default:
      return fc.constant(null);
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------------

interface Mutation {
  at: number;
  op: 'replace' | 'delete' | 'add' | 'duplicate' | 'wrap';
  key: string;
  value: unknown;
}

function mutationsArb(world: World): fc.Arbitrary<Mutation[]> {
  const one = fc.record({
    at: fc.nat(),
    op: fc.constantFrom<Mutation['op']>('replace', 'replace', 'replace', 'replace', 'delete', 'add', 'duplicate', 'wrap'),
    key: fc.constantFrom('unknownField', '__proto__', 'constructor', 'prototype', '', 'amount ', 'AMOUNT', '__proto__x', 'constructorx'),
    value: hostileArb(world),
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<Mutation[]>([]) },
    { weight: 6, arbitrary: fc.array(one, { minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.array(one, { minLength: 2, maxLength: 3 }) },
  );
}

/** Every (container, key) inside a value, objects and arrays alike. */
function slots(value: unknown): Array<[Record<string, unknown> | unknown[], string | number]> {
  const out: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const stack: unknown[] = [value];
  while (stack.length) {
    const node = stack.pop();
    const children: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((child, i) => [i, child]) : isObject(node) ? Object.entries(node) : [];
    for (const [key, child] of children) {
      out.push([node as Record<string, unknown> | unknown[], key]);
      stack.push(child);
    }
  }
  return out;
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A fresh copy of a generated value (Raw kept as is): generated values are shared between runs,
 * and putting the same object into the tree twice could make a mutation nest it in itself (a cycle).
 */
function fresh(value: unknown): unknown {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fresh);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fresh(v)]));
}

/** Applies the mutations to a deep copy of `value`; returns what was done, for the report. */
function mutate(value: unknown, mutations: Mutation[]): { value: unknown; notes: string[] } {
  let root = structuredClone(value);
  const notes: string[] = [];
  for (const m of mutations) {
    const all = slots(root);
    const objects = [root, ...all.map(([c, k]) => (c as any)[k])].filter(isObject);
    if (m.op === 'add' || m.op === 'duplicate') {
      const target = objects[m.at % Math.max(objects.length, 1)];
      if (!target) continue;
      if (m.op === 'add') {
        setOwn(target, m.key, fresh(m.value));
        notes.push(`add ${JSON.stringify(m.key)}`);
      } else {
        const keys = Object.keys(target);
        const key = keys[m.at % Math.max(keys.length, 1)] ?? m.key;
        const extra = ((target as any)[DUPLICATES] ??= []) as Array<[string, unknown]>;
        extra.push([key, fresh(m.value)]);
        notes.push(`duplicate key ${key}`);
      }
      continue;
    }
    if (all.length === 0) {
      if (m.op === 'replace') root = fresh(m.value);
      continue;
    }
    const [container, key] = all[m.at % all.length]!;
    if (m.op === 'delete') {
      if (Array.isArray(container)) container.splice(key as number, 1);
      else delete container[key as string];
      notes.push(`delete ${key}`);
    } else if (m.op === 'wrap') {
      (container as any)[key] = [(container as any)[key]];
      notes.push(`wrap ${key} in an array`);
    } else {
      (container as any)[key] = fresh(m.value);
      notes.push(`replace ${key}`);
    }
  }
  return { value: root, notes };
}

/** JSON text with Raw numbers and duplicate keys. */
function encode(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : encode(v))).join(',')}]`;
  if (isObject(value)) {
    const pairs = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${encode(v)}`);
    for (const [k, v] of ((value as any)[DUPLICATES] ?? []) as Array<[string, unknown]>) pairs.push(`${JSON.stringify(k)}:${encode(v)}`);
    return `{${pairs.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Flat form fields (the payment window posts application/x-www-form-urlencoded). */
function formEncode(value: unknown): string {
  const params = new URLSearchParams();
  const walk = (v: unknown, prefix: string) => {
    if (isObject(v)) for (const [k, x] of Object.entries(v)) walk(x, prefix && prefix !== 'card' ? `${prefix}[${k}]` : k);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${prefix}[${i}]`));
    else params.append(prefix || 'value', v instanceof Raw ? v.text : typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  };
  walk(value, '');
  return params.toString();
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

interface Target {
  method: string;
  url: string;
  auth: RouteDef['auth'];
  idempotent: boolean;
  acceptsForm: boolean;
  schema: { body?: Schema; querystring?: Schema; params?: Schema };
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Who the Authorization header names, when it names anyone. */
  principal: Principal;
  authLabel: string;
  notes: string[];
}

const HOSTILE_QUERY = [
  '0x10',
  '1e3',
  ' 5',
  '+5',
  '5 ',
  'Infinity',
  '-Infinity',
  'NaN',
  '5.0',
  '5.5',
  '-0',
  '-1',
  '0',
  '00005',
  '1e999',
  '9'.repeat(30),
  '',
  'true',
  'null',
  '[]',
  '{}',
  '١٢',
  '５',
  'XYZ',
  'dkk',
  'a\r\nb',
  'a\u0000b',
  'x'.repeat(5000),
  '2024-02-30',
  '2016-12-31T23:59:60Z',
  '9999-12-31T23:59:59.999Z',
  "'",
  'EXACT',
  'PREFIX',
].map((v) => v as string | RawQuery);
const RAW_QUERY = ['%', '%zz', '%FF', '%C0%AF', '%E2%82', '%0D%0A', '%00', '+5', '5%20', '%2B5', '%u0035'].map((v) => new RawQuery(v));

function queryArb(target: Target, ctx: Ctx): fc.Arbitrary<{ text: string; cleanText: string; notes: string[] }> {
  const base = target.schema.querystring ? valueArb(target.schema.querystring, { ...ctx, name: '', parent: '' }) : fc.constant({});
  const world = ctx.world;
  const valueArbQ = fc.oneof<fc.Arbitrary<string | RawQuery>[]>(
    fc.constantFrom(...HOSTILE_QUERY),
    fc.constantFrom(...RAW_QUERY),
    fc.constantFrom(...world.allForeignIds, ...world.allOwnIds),
  );
  const op = fc.record({
    at: fc.nat(),
    op: fc.constantFrom('replace', 'replace', 'repeat', 'array', 'unknown', 'raw'),
    value: valueArbQ,
    key: fc.constantFrom('x', '__proto__', 'constructor[prototype][x]', '', 'perPage', 'page', 'offset', 'amount', 'currency'),
  });
  const ops = fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 5, arbitrary: fc.array(op, { minLength: 1, maxLength: 3 }) });
  return fc.tuple(base, ops).map(([value, mutations]) => {
    const entries: Array<[string, string | RawQuery]> = [];
    if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined || v === null) continue;
        for (const item of Array.isArray(v) ? v : [v]) entries.push([k, typeof item === 'string' ? item : (JSON.stringify(item) ?? '')]);
      }
    }
    const toText = (list: Array<[string, string | RawQuery]>) => {
      const text = list.map(([k, v]) => `${encodeURIComponent(k)}=${v instanceof RawQuery ? v.text : encodeURIComponent(v)}`).join('&');
      return text ? `?${text}` : '';
    };
    const cleanText = toText(entries);
    const notes: string[] = [];
    for (const m of mutations) {
      const i = entries.length ? m.at % entries.length : -1;
      const entry = i >= 0 ? entries[i] : undefined;
      if (m.op === 'replace' && entry) {
        entry[1] = m.value;
        notes.push(`query ${entry[0]} replaced`);
      } else if (m.op === 'repeat' && entry) {
        entries.push([entry[0], m.value]);
        notes.push(`query ${entry[0]} repeated`);
      } else if (m.op === 'array' && entry) {
        entry[0] = `${entry[0]}${m.at % 2 ? '[]' : '[0]'}`;
        notes.push(`query ${entry[0]} as array`);
      } else if (m.op === 'raw') {
        entries.push([m.key, m.value instanceof RawQuery ? m.value : new RawQuery(`${m.at % 3 === 0 ? '&&' : ';'}`)]);
        notes.push('raw query text');
      } else {
        entries.push([m.key, m.value]);
        notes.push(`query ${m.key} added`);
      }
    }
    return { text: toText(entries), cleanText, notes };
  });
}

const GARBAGE_SEGMENTS = [
  'x',
  '0',
  '-1',
  '1e3',
  '%00',
  '%2F',
  '..',
  '%2E%2E',
  'null',
  'undefined',
  '%zz',
  '%FF',
  '%',
  'a'.repeat(5000),
  '%0A',
  '%0D%0Ax',
  '%F0%9F%92%B3',
  "'",
  '%27%20or%201%3D1',
  '{id}',
  ':id',
  'ABCDEFGHJKM',
  '00000000-0000-0000-0000-000000000000',
  '%20',
  'pk_',
  'pk_x',
  ' ',
];

function segmentArb(name: string, target: Target, world: World): fc.Arbitrary<string> {
  const pool = world.pools[POOL_OF[name] ?? ''];
  // Never delete tenant A itself (every later request would be 401); B and C may go.
  const own = name === 'accountId' && target.method === 'DELETE' ? (pool?.own ?? []).filter((id) => id !== world.accountIds.A) : (pool?.own ?? []);
  const options: Array<fc.WeightedArbitrary<string>> = [
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom(...world.allOwnIds.map(encodeURIComponent)) },
    { weight: 2, arbitrary: fc.constantFrom(...GARBAGE_SEGMENTS.map((s) => (s.includes('%') || s === '..' ? s : encodeURIComponent(s)))) },
  ];
  if (own.length) {
    options.push({ weight: 8, arbitrary: fc.constantFrom(...own.map(encodeURIComponent)) });
    options.push({
      weight: 2,
      arbitrary: fc.constantFrom(
        ...own.flatMap((id) => [
          encodeURIComponent(id.toUpperCase()),
          encodeURIComponent(id.toLowerCase()),
          [...id].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
          `${encodeURIComponent(id)}%20`,
          `%20${encodeURIComponent(id)}`,
          `${encodeURIComponent(id)}%00`,
          `${encodeURIComponent(id)}x`,
          `${encodeURIComponent(id)}%2F..`,
        ]),
      ),
    });
  }
  if (pool?.foreign.length) options.push({ weight: 2, arbitrary: fc.constantFrom(...pool.foreign.map(encodeURIComponent)) });
  if (name === 'accountId' && target.method !== 'DELETE') options.push({ weight: 2, arbitrary: fc.constant(world.accountIds.A) });
  return fc.oneof(...options);
}

interface AuthChoice {
  label: string;
  header: string | null;
  principal: Principal;
}

function authArb(target: Target, world: World): fc.Arbitrary<AuthChoice> {
  const merchantRoute = target.auth === 'merchant';
  const right = merchantRoute ? world.keys.A : world.operatorKey;
  const rightPrincipal: Principal = merchantRoute ? 'A' : 'operator';
  const wrongTier = merchantRoute ? world.operatorKey : world.keys.A;
  const options: Array<fc.WeightedArbitrary<AuthChoice>> = [
    { weight: 24, arbitrary: fc.constant({ label: 'right credential', header: `Bearer ${right}`, principal: rightPrincipal }) },
    { weight: 2, arbitrary: fc.constant({ label: 'no Authorization', header: null, principal: null }) },
    { weight: 2, arbitrary: fc.constant({ label: 'wrong tier', header: `Bearer ${wrongTier}`, principal: merchantRoute ? 'operator' : 'A' }) },
    { weight: 1, arbitrary: fc.constant({ label: 'tenant C token', header: `Bearer ${world.keys.C}`, principal: 'C' as Principal }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<AuthChoice>(
        { label: 'lower-case scheme', header: `bearer ${right}`, principal: rightPrincipal },
        { label: 'extra spaces', header: `BEARER   ${right}  `, principal: rightPrincipal },
      ),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          'Bearer',
          'Bearer ',
          `Bearer ${right} extra`,
          `Basic ${Buffer.from(`user:${right}`).toString('base64')}`,
          `Bearer ${right}x`,
          `Bearer ${right.toUpperCase()}`,
          `Token ${right}`,
          right,
          `Bearer ${'x'.repeat(10_000)}`,
          'Bearer null',
          'Bearer undefined',
          `Bearer ${right},Bearer ${right}`,
          'Bearer é',
          'Bearer %00',
          `Bearer\t${right}x`,
        )
        .map((header) => ({ label: 'garbage credential', header, principal: null })),
    },
  ];
  if (merchantRoute)
    options.push({ weight: 3, arbitrary: fc.constant({ label: 'other merchant (B)', header: `Bearer ${world.keys.B}`, principal: 'B' as Principal }) });
  return fc.oneof(...options);
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json;charset=UTF-16',
  'application/json; charset=latin1',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/vnd.api+json',
  'application/merge-patch+json',
  '*/*',
  'application/json, text/plain',
  '',
  'application/jsonx',
];

const RAW_BODIES = [
  '{',
  '{"a":',
  '{"a":1}{',
  '{"a":1}{"b":2}',
  '',
  ' ',
  'null',
  '[]',
  '"x"',
  '1e999',
  '\u0000',
  '\uFEFF{}',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"a":1,"a":2}',
  '{"amount": 1e999}',
  '{"amount": -1e999}',
  "{'a':1}",
  '{"amount":10,}',
  'NaN',
  '[1,]',
  'nul',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  `${'['.repeat(100_000)}`,
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `{"a":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`,
];

function idempotencyArb(): fc.Arbitrary<string | null> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constant('fuzz-reused-key') },
    { weight: 2, arbitrary: fc.constantFrom('', ' ', 'a b', 'x'.repeat(255), 'x'.repeat(256), '\t', 'é', 'k'.repeat(2000), '"quoted"', '%00', 'key\u007f') },
  );
}

function requestArb(target: Target, world: World, now: number): fc.Arbitrary<FuzzRequest> {
  const ctx: Ctx = { world, name: '', parent: '', now };
  const paramNames = [...target.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const params = fc.tuple(...paramNames.map((name) => segmentArb(name, target, world)));
  const cleanParams = fc.tuple(
    ...paramNames.map((name) => {
      const own = (world.pools[POOL_OF[name] ?? '']?.own ?? []).filter(
        (id) => !(name === 'accountId' && target.method === 'DELETE' && id === world.accountIds.A),
      );
      return own.length ? fc.constantFrom(...own.map(encodeURIComponent)) : fc.constant(encodeURIComponent(world.accountIds.A));
    }),
  );
  const hasBody = target.schema.body !== undefined;
  const bodyShape = hasBody
    ? fc.oneof(
        { weight: 30, arbitrary: fc.constant('schema' as const) },
        { weight: 2, arbitrary: fc.constant('hostile' as const) },
        { weight: 2, arbitrary: fc.constant('raw' as const) },
        { weight: 1, arbitrary: fc.constant('none' as const) },
        { weight: 1, arbitrary: fc.constant('oversized' as const) },
      )
    : fc.oneof(
        { weight: 12, arbitrary: fc.constant('none' as const) },
        { weight: 1, arbitrary: fc.constant('hostile' as const) },
        { weight: 1, arbitrary: fc.constant('raw' as const) },
      );
  const contentType = fc.oneof(
    { weight: 20, arbitrary: fc.constant(target.acceptsForm ? 'form' : 'application/json') },
    { weight: target.acceptsForm ? 10 : 0, arbitrary: fc.constant('application/json') },
    { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  const methodSwap = fc.oneof(
    { weight: 40, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD').filter((m) => m !== target.method) },
  );
  return fc
    .record({
      params,
      cleanParams,
      query: queryArb(target, ctx),
      body: valueArb(target.schema.body, ctx),
      mutations: mutationsArb(world),
      bodyShape,
      hostileBody: hostileArb(world),
      rawBody: fc.constantFrom(...RAW_BODIES),
      contentType,
      auth: authArb(target, world),
      idempotencyKey: idempotencyArb(),
      methodSwap,
      // A third of the requests change nothing but the values the schemas allow (right credential,
      // JSON, no mutation): they get past validation and run the handlers on real resources.
      clean: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 2, arbitrary: fc.constant(false) }),
    })
    .map((r): FuzzRequest => {
      if (r.clean) {
        r.auth = {
          label: 'right credential',
          header: `Bearer ${target.auth === 'merchant' ? world.keys.A : world.operatorKey}`,
          principal: target.auth === 'merchant' ? 'A' : 'operator',
        };
        r.query = { ...r.query, text: r.query.cleanText, notes: [] };
        r.mutations = [];
        if (hasBody) r.bodyShape = 'schema';
        if (r.contentType !== 'form') r.contentType = 'application/json';
        r.methodSwap = null;
        r.params = r.cleanParams;
        if (r.idempotencyKey !== null && !/^[0-9a-f-]{36}$/.test(r.idempotencyKey)) r.idempotencyKey = null;
      }
      let i = 0;
      const path = target.url.replace(/:(\w+)/g, () => r.params[i++] ?? 'x');
      const notes = r.clean ? ['clean'] : [...r.query.notes];
      const headers: Record<string, string> = {};
      if (r.auth.header !== null) headers.authorization = r.auth.header;
      if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey;
      let payload: string | undefined;
      switch (r.bodyShape) {
        case 'schema': {
          const mutated = mutate(r.body, r.mutations);
          notes.push(...mutated.notes);
          payload = r.contentType === 'form' ? formEncode(mutated.value) : encode(mutated.value);
          break;
        }
        case 'hostile':
          payload = encode(r.hostileBody);
          notes.push('hostile body');
          break;
        case 'raw':
          payload = r.rawBody;
          notes.push('raw body');
          break;
        case 'oversized':
          payload = `{"x":"${'a'.repeat(1024 * 1024 + 10)}"}`;
          notes.push('body over 1 MiB');
          break;
        default:
          break;
      }
      if (payload !== undefined && r.contentType !== null)
        headers['content-type'] = r.contentType === 'form' ? 'application/x-www-form-urlencoded' : r.contentType;
      return {
        method: r.methodSwap ?? target.method,
        url: `${path}${r.query.text}`,
        headers,
        ...(payload === undefined ? {} : { payload }),
        principal: r.auth.principal,
        authLabel: r.auth.label,
        notes: r.methodSwap ? [...notes, `method ${target.method} → ${r.methodSwap}`] : notes,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Watching the database
// ---------------------------------------------------------------------------------------------

const COUNTER_TABLE = 'fuzz_change_counter';
const IDEMPOTENCY_TABLE = 'idempotency_keys';

interface TableSnapshot {
  hash: string;
  rows: Map<string, string>;
}

interface TableDiff {
  table: string;
  added: string[];
  removed: string[];
  changed: Array<[string, string]>;
}

class DatabaseWatch {
  private tables: Array<{ name: string; keys: string[] }> = [];
  private counters = new Map<string, number>();
  private baseline = new Map<string, TableSnapshot>();
  snapshots = 0;

  constructor(
    private readonly t: TestRuntime,
    private readonly kind: StoreKind,
  ) {}

  private get db() {
    return this.t.runtime.store.db;
  }

  async install(): Promise<void> {
    const db = this.db;
    if (this.kind === 'sqlite') {
      const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(db))
        .rows;
      for (const { name } of names) {
        const keys = (await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${name}) where pk > 0 order by pk`.execute(db)).rows;
        this.tables.push({ name, keys: keys.map((k) => k.name) });
      }
      await sql.raw(`create table ${COUNTER_TABLE} (name text primary key, n integer not null)`).execute(db);
      for (const { name } of this.tables) {
        await sql`insert into ${sql.table(COUNTER_TABLE)} (name, n) values (${name}, 0)`.execute(db);
        for (const event of ['insert', 'update', 'delete']) {
          await sql
            .raw(`create trigger fuzz_${name}_${event} after ${event} on "${name}" begin update ${COUNTER_TABLE} set n = n + 1 where name = '${name}'; end`)
            .execute(db);
        }
      }
    } else {
      const names = (
        await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`.execute(db)
      ).rows;
      const keys = (
        await sql<{ table: string; column: string }>`
          select kcu.table_name as "table", kcu.column_name as "column"
          from information_schema.table_constraints tc
          join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
          where tc.constraint_type = 'PRIMARY KEY' and tc.table_schema = current_schema()
          order by kcu.table_name, kcu.ordinal_position`.execute(db)
      ).rows;
      for (const { name } of names) this.tables.push({ name, keys: keys.filter((k) => k.table === name).map((k) => k.column) });
      await sql.raw(`create table ${COUNTER_TABLE} (name text primary key, n bigint not null)`).execute(db);
      await sql
        .raw(
          `create function fuzz_bump() returns trigger language plpgsql as $$ begin update ${COUNTER_TABLE} set n = n + 1 where name = TG_ARGV[0]; return null; end $$`,
        )
        .execute(db);
      for (const { name } of this.tables) {
        await sql`insert into ${sql.table(COUNTER_TABLE)} (name, n) values (${name}, 0)`.execute(db);
        await sql
          .raw(`create trigger fuzz_bump_row after insert or update or delete on "${name}" for each row execute function fuzz_bump('${name}')`)
          .execute(db);
      }
    }
    this.counters = await this.readCounters();
    for (const { name } of this.tables) this.baseline.set(name, await this.snapshotTable(name));
  }

  get tableCount(): number {
    return this.tables.length;
  }

  private async readCounters(): Promise<Map<string, number>> {
    const rows = (await sql<{ name: string; n: number | string }>`select name, n from ${sql.table(COUNTER_TABLE)}`.execute(this.db)).rows;
    return new Map(rows.map((r) => [r.name, Number(r.n)]));
  }

  private async snapshotTable(name: string): Promise<TableSnapshot> {
    this.snapshots++;
    const table = this.tables.find((t) => t.name === name)!;
    const order = table.keys.length ? ` order by ${table.keys.map((k) => `"${k}"`).join(', ')}` : '';
    const rows = (await sql.raw<Record<string, unknown>>(`select * from "${name}"${order}`).execute(this.db)).rows;
    const map = new Map<string, string>();
    const texts: string[] = [];
    for (const row of rows) {
      const text = JSON.stringify(row);
      const key = table.keys.length ? JSON.stringify(table.keys.map((k) => row[k] ?? row[k.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())])) : text;
      texts.push(text);
      map.set(key, text);
    }
    if (!table.keys.length) texts.sort();
    return { hash: createHash('sha256').update(texts.join('\n')).digest('hex'), rows: map };
  }

  /** The tables whose counters moved since the last call (re-snapshotted), with their row diffs. */
  async changes(everything = false): Promise<TableDiff[]> {
    const counters = await this.readCounters();
    const moved = this.tables.filter(({ name }) => everything || counters.get(name) !== this.counters.get(name)).map((t) => t.name);
    this.counters = counters;
    const diffs: TableDiff[] = [];
    for (const name of moved) {
      const before = this.baseline.get(name)!;
      const after = await this.snapshotTable(name);
      this.baseline.set(name, after);
      if (before.hash === after.hash) continue;
      const diff: TableDiff = { table: name, added: [], removed: [], changed: [] };
      for (const [key, row] of after.rows) {
        const old = before.rows.get(key);
        if (old === undefined) diff.added.push(row);
        else if (old !== row) diff.changed.push([old, row]);
      }
      for (const [key, row] of before.rows) if (!after.rows.has(key)) diff.removed.push(row);
      diffs.push(diff);
    }
    return diffs;
  }
}

/** A table's changes in a line: new and removed rows (abbreviated), and the columns that changed. */
function describeDiff(d: TableDiff): string {
  const parts: string[] = [];
  if (d.added.length) parts.push(`+${d.added.length} row(s), e.g. ${abbreviate(d.added[0]!, 300)}`);
  if (d.removed.length) parts.push(`-${d.removed.length} row(s), e.g. ${abbreviate(d.removed[0]!, 300)}`);
  for (const [before, after] of d.changed.slice(0, 2)) {
    const a = JSON.parse(before) as Record<string, unknown>;
    const b = JSON.parse(after) as Record<string, unknown>;
    const columns = Object.keys(b).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    parts.push(
      `changed row ${String(b.id ?? b.key ?? '')}: ${columns.map((k) => `${k} ${abbreviate(JSON.stringify(a[k]) ?? '', 80)} → ${abbreviate(JSON.stringify(b[k]) ?? '', 80)}`).join(', ')}`,
    );
  }
  if (d.changed.length > 2) parts.push(`and ${d.changed.length - 2} more changed rows`);
  return `${d.table}: ${parts.join('; ')}`;
}

/** INTERFACE §4: a refusal decided after the claim is stored under the request's key (one new row). */
function allowedIdempotencyRecord(diff: TableDiff, req: FuzzRequest, target: Target, status: number): boolean {
  if (diff.table !== IDEMPOTENCY_TABLE || diff.removed.length || diff.changed.length || diff.added.length !== 1) return false;
  const key = req.headers['idempotency-key'];
  if (!target.idempotent || key === undefined || req.method !== target.method) return false;
  const row = JSON.parse(diff.added[0]!) as Record<string, unknown>;
  // Compared decoded: the stored path is the request's as the server saw it (light-my-request
  // and Node may normalise percent-escapes such as %27).
  const samePath = decodeURIComponentSafe(String(row.path)) === decodeURIComponentSafe(req.url.split('?')[0]!);
  return row.key === key && row.method === req.method && samePath && row.state === 'completed' && Number(row.responseStatus ?? row.response_status) === status;
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

interface Failure {
  kind: string;
  route: string;
  detail: string;
  request: string;
  response: string;
  log: string[];
}

const abbreviate = (text: string, max = 600): string => {
  const squeezed = text.replace(/(.)\1{39,}/gs, (run, c: string) => `${c}…×${run.length}`);
  return squeezed.length > max ? `${squeezed.slice(0, max)}…(${squeezed.length} chars)` : squeezed;
};

function describeRequest(req: FuzzRequest, world: World): string {
  const redact = (v: string) =>
    v
      .replaceAll(world.operatorKey, '<operator key>')
      .replaceAll(world.keys.A, '<key A>')
      .replaceAll(world.keys.B, '<key B>')
      .replaceAll(world.keys.C, '<token C>');
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${JSON.stringify(abbreviate(redact(v), 120))}`)
    .join('; ');
  const body = req.payload === undefined ? '(no body)' : JSON.stringify(abbreviate(req.payload));
  return `${req.method} ${abbreviate(req.url, 300)} [${req.authLabel}] {${headers}} body=${body}${req.notes.length ? ` (${req.notes.join(', ')})` : ''}`;
}

const ERROR_KEYS = new Set(['success', 'errorCode', 'message', 'errors']);

/** The contract's error body (INTERFACE §3); returns what is wrong, or null. */
function errorBodyProblem(status: number, text: string, contentType: string): string | null {
  if (!contentType.startsWith('application/json')) return `content-type ${contentType || '(none)'} instead of application/json`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return 'the body is not JSON';
  }
  if (!isObject(body)) return 'the body is not an object';
  if (body.success !== false) return '`success` is not false';
  if (typeof body.errorCode !== 'string' || !(body.errorCode in ERROR_CATALOGUE)) return `errorCode ${JSON.stringify(body.errorCode)} is not in the catalogue`;
  const expected = ERROR_CATALOGUE[body.errorCode as keyof typeof ERROR_CATALOGUE].status;
  if (expected !== status) return `errorCode ${body.errorCode} belongs to HTTP ${expected}, sent with ${status}`;
  if (typeof body.message !== 'string' || body.message.length === 0) return '`message` is not a non-empty string';
  if (/\n\s+at |node_modules|\/src\//.test(body.message)) return 'the message shows internals';
  const extra = Object.keys(body).filter((k) => !ERROR_KEYS.has(k));
  if (extra.length) return `unexpected keys ${extra.join(', ')}`;
  if (body.errorCode === 'VALIDATION_ERROR') {
    if (!isObject(body.errors) || Object.keys(body.errors).length === 0) return 'VALIDATION_ERROR without field errors';
    for (const [field, messages] of Object.entries(body.errors)) {
      if (!Array.isArray(messages) || messages.length === 0) return `errors.${field} is not a non-empty array`;
      for (const message of messages) {
        if (typeof message !== 'string' || !FIELD_RULE_PATTERN.test(message))
          return `errors.${field}: ${JSON.stringify(message)} is not "[rule]: text" with a contract rule`;
      }
    }
  } else if ('errors' in body) return `${body.errorCode} carries field errors`;
  return null;
}

/**
 * Oracles for "exact numbers only" (INTERFACE §3). A JSON body that a 2xx accepted must be valid
 * against the route's schema compiled here WITHOUT type coercion (a number sent as a string, `true`
 * for 1, `[12]` for 12, a non-integer, a non-finite or out-of-range number, an unknown currency:
 * each makes the schema fail, so the request must have been refused).
 */
const exactBodyCompiler = AjvCompiler()({}, {
  customOptions: { allErrors: false, coerceTypes: false, useDefaults: true, removeAdditional: true, strict: false },
  onCreate: (ajv: any) => ajv.addFormat('iso4217', { type: 'string', validate: isKnownCurrency }),
} as any) as unknown as (route: {
  schema: Schema;
  method: string;
  url: string;
  httpPart: string;
}) => ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };
const exactBodyValidators = new WeakMap<Schema, ReturnType<typeof exactBodyCompiler>>();

/** Why the accepted JSON body breaks its schema without coercion, or null. */
function inexactBody(target: Target, req: FuzzRequest): string | null {
  const schema = target.schema.body;
  if (!schema || target.acceptsForm || req.payload === undefined || req.method !== target.method) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.payload);
  } catch {
    return null;
  }
  let validate = exactBodyValidators.get(schema);
  if (!validate) exactBodyValidators.set(schema, (validate = exactBodyCompiler({ schema, method: target.method, url: target.url, httpPart: 'body' })));
  try {
    if (validate(structuredClone(parsed))) return null;
  } catch {
    return 'body too deep to validate'; // thousands of levels: recursion runs out of stack
  }
  const error = validate.errors?.[0];
  return `body${error?.instancePath ?? ''} ${error?.message ?? 'is invalid'}`;
}

const isNumericSchema = (schema: Schema | undefined): boolean =>
  !!schema &&
  (schema.type === 'integer' || schema.type === 'number' || ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.some(isNumericSchema) === true);

/** A query-string number a 2xx accepted must have been written in decimal digits (INTERFACE §3), or null. */
function inexactQueryNumber(target: Target, req: FuzzRequest): string | null {
  const properties = (target.schema.querystring?.properties ?? {}) as Record<string, Schema>;
  const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  for (const pair of query.split('&')) {
    const at = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((at < 0 ? pair : pair.slice(0, at)).replace(/\+/g, ' '));
      value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, ' '));
    } catch {
      continue;
    }
    if (isNumericSchema(properties[name]) && !/^-?\d+$/.test(value)) return `query ${name}=${JSON.stringify(value)} is not decimal digits`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/** The app's own routes (registered in src/http/app.ts, not route objects). */
const APP_ROUTES: Target[] = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs'].map((url) => ({
  method: 'GET',
  url,
  auth: 'public',
  idempotent: false,
  acceptsForm: false,
  schema: {},
}));

/** Reads first, then writes, then what deletes or stops things, then what moves time: each route finds the seeded resources alive. */
function phase(target: Target): number {
  if (target.url.endsWith('/clock') || target.url.endsWith('/settlements/run')) return 4;
  if (target.method === 'DELETE' || /\/(stop|abort|pause|activate)$/.test(target.url)) return 3;
  return target.method === 'GET' ? 1 : 2;
}

function targetsOf(t: TestRuntime): Target[] {
  const fromRoutes = t.runtime.services.routes.map((def): Target => ({
    method: def.method,
    url: def.root ? def.url : `${API}${def.url}`,
    auth: def.auth,
    idempotent: def.idempotent === true,
    acceptsForm: def.acceptsForm === true,
    schema: def.schema as Target['schema'],
  }));
  return [...fromRoutes, ...APP_ROUTES]
    .map((target, index) => ({ target, index }))
    .sort((a, b) => phase(a.target) - phase(b.target) || a.index - b.index)
    .map((x) => x.target);
}

/** Thrown by the property when the route's share of the time is used up: ends its run early. */
class OutOfTime extends Error {}

interface PassResult {
  routes: number;
  requests: number;
  byClass: Record<string, number>;
  snapshots: number;
  failures: Map<string, Failure & { count: number }>;
  ms: number;
  setupMs: number;
  fuzzMs: number;
}

async function runPass(kind: StoreKind, seed: number, budgetMs: number): Promise<PassResult> {
  const started = Date.now();
  arbitraryCache.clear();
  const log: string[] = [];
  const t = await startTestRuntime(kind, { logLevel: 'warn' }, { startWorkers: false, logDestination: { write: (line: string) => void log.push(line) } });
  const result: PassResult = { routes: 0, requests: 0, byClass: {}, snapshots: 0, failures: new Map(), ms: 0, setupMs: 0, fuzzMs: 0 };
  let fuzzEnded = Date.now();
  try {
    const world = await buildWorld(t);
    // Durability is not under test here: without an fsync per commit the fuzz sends several times more requests.
    if (kind === 'sqlite') await sql`pragma synchronous = off`.execute(t.runtime.store.db);
    const watch = new DatabaseWatch(t, kind);
    await watch.install();
    result.setupMs = Date.now() - started;

    const targets = targetsOf(t).filter((target) => !ROUTE_FILTER || ROUTE_FILTER.test(`${target.method} ${target.url}`));
    // Every documented operation is among the fuzzed routes.
    const doc = JSON.parse((await t.runtime.app.inject({ method: 'GET', url: '/openapi.json' })).body) as { paths: Record<string, Record<string, unknown>> };
    const known = new Set(targetsOf(t).map((x) => `${x.method} ${x.url}`));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const key = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
        assert.ok(known.has(key), `${key} is in /openapi.json but not among the fuzzed routes`);
      }
    }
    result.routes = targets.length;
    const routeOf = new Map(targetsOf(t).map((x) => [`${x.method} ${x.url}`, x]));

    const fail = (f: Failure) => {
      const key = `${f.kind}|${f.route}|${f.detail.slice(0, 160)}`;
      const seen = result.failures.get(key);
      if (seen) seen.count++;
      else result.failures.set(key, { ...f, count: 1 });
    };

    const fuzzDeadline = started + budgetMs;
    const numRuns = Math.max(10, Math.ceil(MAX_REQUESTS_PER_PASS / Math.max(targets.length, 1)));
    const refusal: { last: { route: string; req: FuzzRequest; status: number } | null } = { last: null };

    for (const [index, target] of targets.entries()) {
      const route = `${target.method} ${target.url}`;
      const now = t.runtime.clock.now();
      // An equal share of what is left, so that time a fast route did not use goes to the others.
      const routeStart = Date.now();
      let runs = 0;
      const statuses: Record<number, number> = {};
      const routeDeadline = Date.now() + Math.max(30, (fuzzDeadline - Date.now()) / (targets.length - index));
      const execute = async (req: FuzzRequest): Promise<boolean> => {
        if (++runs > MIN_RUNS_PER_ROUTE && Date.now() > routeDeadline) throw new OutOfTime();
        // A write between two requests (after the previous one answered) is looked at first.
        const late = await watch.changes();
        if (late.length && refusal.last) {
          fail({
            kind: 'table changed after a 4xx (late)',
            route: refusal.last.route,
            detail: late.map(describeDiff).join(' | '),
            request: describeRequest(refusal.last.req, world),
            response: String(refusal.last.status),
            log: [],
          });
        }
        const logStart = log.length;
        let res: Awaited<ReturnType<typeof t.runtime.app.inject>>;
        try {
          res = await Promise.race([
            t.runtime.app.inject({
              method: req.method as 'GET',
              url: req.url,
              headers: req.headers,
              ...(req.payload === undefined ? {} : { payload: req.payload }),
            }),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS).unref()),
          ]);
        } catch (err) {
          // Header values Node refuses to send (a client could not send them either) are skipped.
          if ((err as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR' || (err as NodeJS.ErrnoException).code === 'ERR_HTTP_INVALID_HEADER_VALUE')
            return true;
          fail({ kind: 'no response', route, detail: String(err), request: describeRequest(req, world), response: '', log: log.slice(logStart) });
          return true;
        }
        result.requests++;
        const status = res.statusCode;
        // The route that answered: the fuzzed one, or the one a swapped method reached (HEAD is GET's).
        const actual = routeOf.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${target.url}`);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (process.env.FUZZ_DEBUG === 'clean' && req.notes[0] === 'clean' && status >= 400)
          console.log(`# clean ${route} → ${status} ${res.body.slice(0, 300)}`);
        const cls = `${Math.floor(status / 100)}xx`;
        result.byClass[cls] = (result.byClass[cls] ?? 0) + 1;
        const text = res.body;
        const contentType = String(res.headers['content-type'] ?? '');
        const report = (kind: string, detail: string, withLog = false) =>
          fail({
            kind,
            route,
            detail,
            request: describeRequest(req, world),
            response: `${status} ${abbreviate(text, 400)}`,
            log: withLog ? log.slice(logStart) : [],
          });

        if (status >= 500) report('5xx', `HTTP ${status}`, true);
        else if (status >= 400 && req.method !== 'HEAD') {
          // Pages (the payment window, the virtual terminal) answer a browser in HTML.
          const page = (actual ?? target).auth === 'public' && contentType.startsWith('text/html');
          const problem = page ? null : errorBodyProblem(status, text, contentType);
          if (problem) report('error body', problem);
        }
        if (status < 400 && !actual) report('a method without a route answered', `HTTP ${status}`);
        if (status < 300 && actual) {
          const inexact = inexactBody(actual, req) ?? inexactQueryNumber(actual, req);
          if (inexact) report('accepted an inexact value', inexact);
        }
        if (status < 400 && actual && actual.auth !== 'public') {
          if (req.principal === null) report('no credential, yet not refused', `HTTP ${status} with ${req.authLabel}`);
          else if ((actual.auth === 'merchant') !== (req.principal !== 'operator')) report('wrong tier, yet not refused', `HTTP ${status}`);
        }
        if (status < 300 && actual?.auth === 'merchant' && req.principal && req.principal !== 'operator') {
          const path = req.url.split('?')[0]!;
          for (const segment of path.split('/')) {
            let decoded = segment;
            try {
              decoded = decodeURIComponent(segment);
            } catch {}
            const owner = world.owner.get(decoded.toLowerCase());
            if (owner && owner !== req.principal) report("another tenant's resource served", `path id of tenant ${owner}, principal ${req.principal}`);
          }
          const sent = `${decodeURIComponentSafe(req.url)} ${req.payload ?? ''}`.toLowerCase();
          const received = text.toLowerCase();
          for (const [id, owner] of world.owner) {
            if (owner !== req.principal && received.includes(id) && !sent.includes(id)) {
              report("another tenant's id in a response", `id of tenant ${owner} for principal ${req.principal}`);
              break;
            }
          }
        }
        const diffs = await watch.changes();
        if (status >= 400 && diffs.length) {
          const wrong = diffs.filter((d) => !(actual && allowedIdempotencyRecord(d, req, actual, status)));
          if (wrong.length) {
            report('table changed after a 4xx', wrong.map(describeDiff).join(' | '));
          }
        }
        refusal.last = status >= 400 ? { route, req, status } : null;
        return true;
      };

      const routeSeed = (seed ^ hash32(route)) >>> 0;
      // The property records what it finds instead of failing (see OutOfTime), so fast-check
      // neither stops at the first finding nor shrinks: shrinking would replay requests against a
      // database the earlier ones changed. fast-check's own time limit is not used either: it
      // abandons the request in flight, which then races the next route's requests.
      const run = await fc.check(fc.asyncProperty(requestArb(target, world, now), execute), { seed: routeSeed, numRuns, endOnFailure: true });
      if (run.failed && !(run.errorInstance instanceof OutOfTime)) throw run.errorInstance;
      if (process.env.FUZZ_DEBUG) console.log(`# ${route}: ${runs} runs, ${Date.now() - routeStart} ms, ${JSON.stringify(statuses)}`);
      // Route boundary: writes since the last request (a 4xx's late write is still its write).
      const late = await watch.changes();
      if (late.length && refusal.last) {
        fail({
          kind: 'table changed after a 4xx (late)',
          route,
          detail: late.map(describeDiff).join(' | '),
          request: describeRequest(refusal.last.req, world),
          response: String(refusal.last.status),
          log: [],
        });
      }
      refusal.last = null;
      // Every FULL_CHECK_EVERY routes (and after the last), every table, whatever the counters say.
      const missed = (index + 1) % FULL_CHECK_EVERY === 0 || index === targets.length - 1 ? await watch.changes(true) : [];
      if (missed.length) {
        const request = `(a write the change counters missed, somewhere in the ${FULL_CHECK_EVERY} routes up to this one)`;
        fail({ kind: 'uncounted table change', route, detail: missed.map(describeDiff).join(' | '), request, response: '', log: [] });
      }
      // Between routes the due jobs run (sales reach their terminals, MITs finish, callbacks are
      // tried), so that later routes meet resources in more states; then a fresh baseline.
      await t.runtime.runner.drain(3);
      await watch.changes();
    }
    result.snapshots = watch.snapshots;
    fuzzEnded = Date.now();
  } finally {
    await t.close();
  }
  result.ms = Date.now() - started;
  result.fuzzMs = fuzzEnded - started - result.setupMs;
  return result;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function stackOf(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string; stack?: string } };
      if (entry.err?.stack) out.push(entry.err.stack.split('\n').slice(0, 8).join('\n    '));
      else if (entry.msg && entry.msg !== 'request') out.push(entry.msg);
    } catch {
      out.push(line.slice(0, 300));
    }
  }
  return out;
}

const stores = (await availableStores()).filter((kind) => !process.env.FUZZ_STORES || process.env.FUZZ_STORES.split(',').includes(kind));
/**
 * SQLite runs both seeds; PostgreSQL (when reachable) one shorter pass with the last seed (the
 * random one, or the replayed one): its set-up alone (schema, migrations, seeding) takes seconds.
 */
const passes = [
  ...SEEDS.map((seed) => ({ kind: 'sqlite' as StoreKind, seed, weight: 2 })),
  ...(stores.includes('postgres') ? [{ kind: 'postgres' as StoreKind, seed: SEEDS[SEEDS.length - 1]!, weight: 1.6 }] : []),
].filter((pass) => stores.includes(pass.kind));
const deadline = Date.now() + BUDGET_MS;

describe('route fuzz: every route, near-valid and hostile input', () => {
  passes.forEach((pass, index) => {
    test(`${pass.kind}, seed ${pass.seed}`, { timeout: BUDGET_MS + 120_000 }, async () => {
      const remainingWeight = passes.slice(index).reduce((sum, p) => sum + p.weight, 0);
      const budget = Math.max(3_000, ((deadline - Date.now()) * pass.weight) / remainingWeight);
      const result = await runPass(pass.kind, pass.seed, budget);
      console.log(
        `# fuzz ${pass.kind} seed ${pass.seed}: ${result.routes} routes, ${result.requests} requests (${Object.entries(result.byClass)
          .sort()
          .map(([k, v]) => `${k} ${v}`)
          .join(
            ', ',
          )}), ${result.snapshots} table snapshots, ${(result.ms / 1000).toFixed(1)} s (set-up ${(result.setupMs / 1000).toFixed(1)} s, fuzz ${(result.fuzzMs / 1000).toFixed(1)} s)`,
      );
      const failures = [...result.failures.values()];
      for (const f of failures) {
        console.log(
          [
            `# FAIL [${f.kind}] ${f.route} — ${f.detail} (×${f.count}; replay: FUZZ_SEED=${pass.seed} FUZZ_ROUTE='${f.route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$')`,
            `#   request:  ${f.request}`,
            `#   response: ${f.response}`,
            ...stackOf(f.log).map((l) => `#   log: ${l.replace(/\n/g, '\n#   ')}`),
          ].join('\n'),
        );
      }
      assert.equal(failures.length, 0, `${failures.length} distinct fuzz failures on ${pass.kind} (seed ${pass.seed}); each is printed above as # FAIL`);
    });
  });
});
