/**
 * The database refuses bad values by itself (issue 9; migrations 012_value_constraints): on both
 * stores, every money, count and attempt column takes only integers in its range, every currency
 * only three upper-case letters, every state only its states — whoever writes (a repository, or
 * raw SQL). Legitimate boundary values are stored. A migration that would add a constraint to a
 * table holding a violating row stops and names the row; it never drops or changes data.
 *
 * Two things no CHECK can see, by the drivers' design, and what is asserted about them instead:
 *   - a numeric string ('12') is converted exactly to the integer by both engines before the
 *     check runs (SQLite's INTEGER affinity, PostgreSQL's int8 input): it is stored as the
 *     integer 12, never as text;
 *   - better-sqlite3 binds NaN as NULL: a NOT NULL column refuses it, a nullable one would store
 *     NULL (PostgreSQL refuses NaN everywhere). The edge refuses NaN before it gets here (§3).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { newId, newTransactionId } from '../../src/shared/ids.js';
import type { BillingCharge } from '../../src/modules/billing/charge.js';
import type { BillingPlan } from '../../src/modules/billing/plan.js';
import type { PaymentLink } from '../../src/modules/payment-links/payment-link.js';
import type { PointOfSale } from '../../src/modules/points-of-sale/point-of-sale.js';
import { DEFAULT_TERMINAL_REQUEST } from '../../src/modules/sales/sale.js';
import type { Session } from '../../src/modules/sessions/session.js';
import type { SettlementTransaction, TransferDelta } from '../../src/modules/settlements/settlement.js';
import type { Subscription } from '../../src/modules/subscriptions/subscription.js';
import type { Notification } from '../../src/delivery/notification.js';
import type { WebhookDelivery } from '../../src/modules/webhooks/webhook.js';
import { connect } from '../../src/storage/connect.js';
import { checksOf } from '../../src/storage/constraint-report.js';
import { migrate, splitStatements } from '../../src/storage/migrate.js';
import { availableStores, createTestDatabase, type StoreKind } from '../support/stores.js';
import {
  iso,
  newOperation,
  newPointOfSale,
  newTransaction,
  newWebhook,
  newWebhookDelivery,
  openTestStore,
  seedAccount,
  T0,
  type TestStore,
} from './fixtures.js';

const MIGRATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/storage/migrations');
const MIGRATION = '012_value_constraints';
const BEFORE = '011_job_indexes';
const MAX = 999_999_999;
const SAFE = Number.MAX_SAFE_INTEGER;

// --- What the constraints are meant to be, stated independently of the SQL -----------------------

type Spec =
  | { kind: 'int'; table: string; column: string; min: number; max: number; nullable?: boolean; related?: boolean; refusal?: string }
  | { kind: 'enum'; table: string; column: string; values: Array<string | number>; nullable?: boolean; related?: boolean; refusal?: string }
  | { kind: 'currency'; table: string; column: string }
  /** A rule across columns (settlement sums, sign of a gross): tested through the repositories. */
  | { kind: 'relation'; table: string; name: string };

const int = (table: string, column: string, min: number, max: number, more: { nullable?: boolean; related?: boolean; refusal?: string } = {}): Spec => ({
  kind: 'int',
  table,
  column,
  min,
  max,
  ...more,
});
const money = (table: string, column: string): Spec => int(table, column, 0, MAX);
const oneOf = (
  table: string,
  column: string,
  values: Array<string | number>,
  more: { nullable?: boolean; related?: boolean; refusal?: string } = {},
): Spec => ({
  kind: 'enum',
  table,
  column,
  values,
  ...more,
});
const flag = (table: string, column: string): Spec => oneOf(table, column, [0, 1]);
const currency = (table: string, column: string): Spec => ({ kind: 'currency', table, column });
const PAYMENT_METHOD_TYPES = ['CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA'];
const INSTANT_CAPTURE = ['OFF', 'VOID', 'NO_VOID'];
const PERIODS = ['DAY', 'WEEK', 'MONTH', 'YEAR'];

const SPEC: Spec[] = [
  oneOf('accounts', 'status', ['PENDING', 'ACTIVE', 'CLOSED']),
  currency('accounts', 'currency_code'),
  flag('accounts', 'cap_moto'),
  flag('accounts', 'cap_sync_payout'),
  oneOf('credentials', 'kind', ['access_token', 'api_key']),
  oneOf('credentials', 'environment', ['test', 'live']),
  oneOf('points_of_sale', 'type', ['ONLINE', 'PHYSICAL']),
  flag('terminals', 'fallback'),
  oneOf('transactions', 'type', ['PAYMENT', 'PAYOUT', 'MOTO']),
  oneOf('transactions', 'flow', ['MIT', 'CIT', 'MOTO', 'SALE', 'PAYOUT']),
  oneOf('transactions', 'state', ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED']),
  oneOf('transactions', 'sca_mode', ['SKIP', 'NORMAL', 'FORCE'], { nullable: true }),
  oneOf('transactions', 'instant_capture', INSTANT_CAPTURE, { nullable: true }),
  oneOf('transactions', 'payment_method_type', PAYMENT_METHOD_TYPES, { nullable: true }),
  money('transactions', 'amount'),
  money('transactions', 'fee'),
  currency('transactions', 'currency'),
  ...['authorized', 'captured', 'refunded', 'voided', 'paid_out', 'pending', 'pending_refund'].map((a) => money('transactions', `${a}_amount`)),
  oneOf('operations', 'type', ['AUTHORIZATION', 'SALE', 'CAPTURE', 'REFUND', 'VOID', 'RENEW', 'PAYOUT']),
  oneOf('operations', 'state', ['PROCESSING', 'SUCCESS', 'FAILED']),
  money('operations', 'amount'),
  oneOf('idempotency_keys', 'state', ['in_flight', 'completed']),
  int('idempotency_keys', 'response_status', 100, 599, { nullable: true }),
  oneOf('jobs', 'state', ['queued', 'running', 'done', 'dead']),
  int('jobs', 'attempts', 0, MAX),
  int('jobs', 'max_attempts', 1, MAX),
  oneOf('payment_methods', 'type', PAYMENT_METHOD_TYPES),
  oneOf('notifications', 'state', ['PENDING', 'DELIVERED', 'FAILED']),
  int('notifications', 'attempts', 0, MAX),
  int('notifications', 'last_status', 100, 999, { nullable: true }),
  int('notification_attempts', 'attempt', 1, MAX),
  int('notification_attempts', 'status_code', 100, 999, { nullable: true }),
  int('notification_attempts', 'duration_ms', 0, MAX),
  oneOf('sessions', 'state', ['PENDING', 'PROCESSING', 'COMPLETED', 'EXPIRED']),
  money('sessions', 'amount'),
  currency('sessions', 'currency'),
  oneOf('sessions', 'sca_mode', ['SKIP', 'NORMAL', 'FORCE']),
  int('sessions', 'timeout_minutes', 1, 86_400),
  oneOf('sessions', 'instant_capture', INSTANT_CAPTURE),
  int('sessions', 'max_attempts', 1, 10),
  int('sessions', 'attempts', 0, MAX),
  flag('sessions', 'report_failure'),
  currency('subscriptions', 'currency'),
  oneOf('subscriptions', 'state', ['PENDING', 'ACTIVE', 'INVALID', 'DISABLED']),
  oneOf('subscriptions', 'type', ['SCHEDULED', 'UNSCHEDULED']),
  oneOf('subscriptions', 'interval_period', PERIODS, { nullable: true }),
  int('subscriptions', 'interval_frequency', 1, 31, { nullable: true }),
  int('subscriptions', 'amount', 1, MAX, { nullable: true }),
  oneOf('webhooks', 'pause_reason', ['ERROR_RATE_TOO_HIGH', 'PAUSED_BY_MERCHANT'], { nullable: true }),
  oneOf('webhook_deliveries', 'state', ['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED']),
  int('webhook_deliveries', 'attempts', 0, MAX),
  int('webhook_delivery_attempts', 'attempt', 1, MAX),
  flag('webhook_delivery_attempts', 'success'),
  int('webhook_delivery_attempts', 'http_status', 100, 999, { nullable: true }),
  int('webhook_delivery_attempts', 'duration_ms', 0, MAX),
  int('webhook_event_fanouts', 'deliveries', 0, MAX),
  oneOf('terminal_sales', 'stage', ['QUEUED', 'WAITING_FOR_CARD', 'CARD_PRESENTED', 'COMPLETED', 'ABORTED', 'EXPIRED']),
  int('billing_plans', 'amount', 1, MAX),
  currency('billing_plans', 'currency'),
  int('billing_plans', 'max_attempts', 1, 31),
  oneOf('billing_plans', 'interval_period', PERIODS),
  int('billing_plans', 'interval_frequency', 1, 31),
  oneOf('billing_plans', 'instant_capture', INSTANT_CAPTURE),
  oneOf('billing_agreements', 'state', ['PENDING', 'ACTIVE', 'STOPPED']),
  oneOf('billing_agreement_charges', 'state', ['PROCESSING', 'SUCCESS', 'FAILED']),
  int('billing_agreement_charges', 'amount', 1, MAX),
  currency('billing_agreement_charges', 'currency'),
  int('billing_agreement_charges', 'max_attempts', 1, 31),
  int('billing_agreement_charges', 'attempts', 0, MAX),
  currency('settlement_transfers', 'currency'),
  oneOf('settlement_transfers', 'state', ['OPEN', 'READY']),
  int('settlement_transfers', 'transactions_count', 0, MAX),
  int('settlement_transfers', 'gross_amount', -SAFE, SAFE, { related: true }),
  int('settlement_transfers', 'acquirer_fee_amount', -SAFE, 0, { related: true }),
  int('settlement_transfers', 'interchange_fee_amount', -SAFE, 0, { related: true }),
  int('settlement_transfers', 'scheme_fee_amount', -SAFE, 0, { related: true }),
  { kind: 'relation', table: 'settlement_transfers', name: 'settlement_transfers_transactions_net_amount_check' },
  int('settlement_transfers', 'net_amount', -SAFE, SAFE),
  // An unknown type also fails the sign rule, which PostgreSQL (checks in name order) may name first.
  oneOf('settlement_transactions', 'operation_type', ['CAPTURE', 'SALE', 'REFUND', 'PAYOUT'], {
    related: true,
    refusal: '(settlement_transactions_operation_type_check|settlement_transactions_gross_sign_check)',
  }),
  currency('settlement_transactions', 'currency'),
  int('settlement_transactions', 'gross_amount', -MAX, MAX, { related: true }),
  { kind: 'relation', table: 'settlement_transactions', name: 'settlement_transactions_gross_sign_check' },
  int('settlement_transactions', 'acquirer_fee', -MAX, 0, { related: true }),
  int('settlement_transactions', 'interchange_fee', -MAX, 0, { related: true }),
  // Changed alone, a fee also breaks net = gross + fees, which PostgreSQL (name order) may name first.
  int('settlement_transactions', 'scheme_fee', -MAX, 0, {
    related: true,
    refusal: '(settlement_transactions_scheme_fee_check|settlement_transactions_net_amount_check)',
  }),
  { kind: 'relation', table: 'settlement_transactions', name: 'settlement_transactions_net_amount_check' },
  oneOf('payment_links', 'state', ['ACTIVE', 'PAID', 'CANCELLED', 'EXPIRED']),
  money('payment_links', 'amount'),
  currency('payment_links', 'currency'),
];

const nameOf = (s: Spec): string => (s.kind === 'relation' ? s.name : `${s.table}_${s.column}_check`);

/** Not integers: refused by every integer column (PostgreSQL: by the column type; SQLite: by typeof()). */
const NON_INTEGERS: unknown[] = [Infinity, -Infinity, NaN, 1.5, -0.5, 1e20, 'Infinity', '1.5', '12abc', '', 'NaN'];
const BAD_CURRENCIES: unknown[] = ['XYZ1', 'dkk', 'Dkk', 'DK', '', 'ÆØÅ', 'D1K', 123];
const BAD_STATES = (values: Array<string | number>): unknown[] =>
  typeof values[0] === 'number' ? [2, -1, 0.5, 'true', 'yes'] : ['UNKNOWN', otherCase(String(values[0])), '', ` ${String(values[0])}`];
/** The value in the other letter case: a state differing only in case is another (unknown) state. */
const otherCase = (v: string): string => (v === v.toLowerCase() ? v.toUpperCase() : v.toLowerCase());

// --- Assertions -----------------------------------------------------------------------------------

/**
 * How the write must fail: SQLite names the CHECK (a NaN arrives as NULL: NOT NULL); PostgreSQL
 * names the CHECK for an integer or a text, and refuses a non-integer by the column's type.
 */
function refusalOf(kind: StoreKind, constraint: string, value: unknown, integerColumn: boolean): RegExp {
  if (kind === 'sqlite') return Number.isNaN(value) ? /NOT NULL constraint failed/ : new RegExp(`CHECK constraint failed: ${constraint}\\b`);
  const checked = !integerColumn || (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 2 ** 63);
  return checked
    ? new RegExp(`violates check constraint "${constraint}"`)
    : /invalid input syntax for type (bigint|integer)|out of range for type (bigint|integer)/;
}

async function refused(
  kind: StoreKind,
  label: string,
  write: () => Promise<unknown>,
  constraint: string,
  value: unknown,
  integerColumn: boolean,
): Promise<void> {
  const expected = refusalOf(kind, constraint, value, integerColumn);
  await assert.rejects(
    write,
    (err: Error) => {
      assert.match(err.message, expected, `${label} = ${show(value)}: refused for the wrong reason`);
      return true;
    },
    `${label} = ${show(value)} was stored`,
  );
}

const show = (v: unknown): string => (typeof v === 'string' ? `'${v}'` : String(v));

/** Every integer a column must refuse: non-integers, and one past each end of its range. */
const badIntegers = (s: { min: number; max: number; nullable?: boolean }, kind: StoreKind): unknown[] => [
  ...NON_INTEGERS.filter((v) => !(kind === 'sqlite' && s.nullable && Number.isNaN(v))),
  s.min - 1,
  s.max + 1,
];

// --- Raw access to one row ------------------------------------------------------------------------

type Key = Record<string, unknown>;

function whereKey(key: Key) {
  return sql.join(
    Object.entries(key).map(([c, v]) => sql`${sql.ref(c)} = ${v}`),
    sql` and `,
  );
}

async function readColumn(db: Kysely<any>, kind: StoreKind, table: string, key: Key, column: string): Promise<{ value: unknown; type?: string }> {
  const type = kind === 'sqlite' ? sql`, typeof(${sql.ref(column)}) as t` : sql``;
  const rows = (await sql<{ v: unknown; t?: string }>`select ${sql.ref(column)} as v${type} from ${sql.table(table)} where ${whereKey(key)}`.execute(db)).rows;
  assert.equal(rows.length, 1, `${table} ${JSON.stringify(key)} exists`);
  return { value: rows[0]!.v, ...(rows[0]!.t ? { type: rows[0]!.t } : {}) };
}

const setColumn = (db: Kysely<any>, table: string, key: Key, column: string, value: unknown) =>
  sql`update ${sql.table(table)} set ${sql.ref(column)} = ${value} where ${whereKey(key)}`.execute(db);

const countWhere = async (db: Kysely<any>, table: string, key: Key): Promise<number> =>
  Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${whereKey(key)}`.execute(db)).rows[0]!.n);

// --- Fixtures -------------------------------------------------------------------------------------

const pointOfSale = (accountId: string): PointOfSale => ({ ...newPointOfSale(accountId), name: 'shop' });

const session = (accountId: string, pointOfSaleId: string, overrides: Partial<Session> = {}): Session => ({
  id: newId(),
  accountId,
  pointOfSaleId,
  clientKey: newId(),
  state: 'PENDING',
  amount: 1000,
  currency: 'DKK',
  reference: null,
  scaMode: 'SKIP',
  timeoutMinutes: 30,
  instantCapture: 'OFF',
  exemptions: [],
  textOnStatement: null,
  attributes: null,
  customerId: null,
  maxAttempts: 3,
  attempts: 0,
  notificationUrl: null,
  successUrl: null,
  failureUrl: null,
  reportFailure: false,
  subscriptionRequest: null,
  transactionId: null,
  subscriptionId: null,
  paymentMethodId: null,
  errorCode: null,
  expiresAt: iso(T0 + 1_800_000),
  createdAt: iso(T0),
  updatedAt: iso(T0),
  finalizedAt: null,
  ...overrides,
});

const plan = (accountId: string, overrides: Partial<BillingPlan> = {}): BillingPlan => ({
  id: newId(),
  accountId,
  name: 'monthly',
  amount: 4900,
  currency: 'DKK',
  maxAttempts: 3,
  interval: { period: 'MONTH', frequency: 1 },
  instantCapture: 'OFF',
  color: null,
  emoji: null,
  createdAt: iso(T0),
  ...overrides,
});

for (const kind of await availableStores()) {
  describe(`storage constraints (${kind})`, () => {
    let t: TestStore;
    let db: Kysely<any>;
    let accountId: string;
    let pos: PointOfSale;
    /** One stored row of every constrained table, written through the repositories: its key. */
    const seeded = new Map<string, Key>();
    /** Fixtures the write tests build on. */
    let agreementId: string;
    let transferId: string;
    let settledTx: { id: string; accountId: string; pointOfSaleId: string };
    let notificationId: string;
    /** A session without a link: every refused link insert names it (and is not stored). */
    let spareSessionId: string;

    before(async () => {
      t = await openTestStore(kind);
      db = t.store.db as unknown as Kysely<any>;
      const account = await seedAccount(t.store);
      accountId = account.id;
      seeded.set('accounts', { id: accountId });
      const credentialId = newId();
      await t.store.accounts.insertCredential({
        id: credentialId,
        accountId,
        kind: 'api_key',
        name: null,
        secretHash: `h-${newId()}`,
        environment: 'test',
        expiresAt: null,
        createdAt: iso(T0),
      });
      seeded.set('credentials', { id: credentialId });
      pos = pointOfSale(accountId);
      await t.store.pointsOfSale.insert(pos, 'sealed');
      seeded.set('points_of_sale', { id: pos.id });
      const terminalId = newId();
      await t.store.terminals.insert({
        id: terminalId,
        accountId,
        pointOfSaleId: pos.id,
        deviceId: null,
        externalId: null,
        name: 't',
        fallback: true,
        createdAt: iso(T0),
      });
      seeded.set('terminals', { id: terminalId });

      const tx = newTransaction(accountId, pos.id, { scaMode: 'SKIP', instantCapture: 'OFF' });
      await t.store.transactions.insert([tx]);
      seeded.set('transactions', { id: tx.id });
      const op = newOperation(tx);
      await t.store.transactions.insertOperations([op]);
      seeded.set('operations', { id: op.id });

      const ref = { accountId, method: 'POST', path: '/x', key: `k-${newId()}` };
      await t.store.idempotency.claim(ref, 'hash', { now: iso(T0), lockedUntil: iso(T0 + 60_000), expiresAt: iso(T0 + 86_400_000) });
      await t.store.idempotency.complete(ref, 201, '{}', 'application/json');
      seeded.set('idempotency_keys', { account_id: ref.accountId, method: ref.method, path: ref.path, key: ref.key });

      const dedupeKey = `constraints:${newId()}`;
      await t.store.jobs.enqueue({ kind: 'constraints-test', payload: null, runAt: T0, dedupeKey, maxAttempts: 5 });
      const job = (await sql<{ id: string }>`select id from jobs where dedupe_key = ${dedupeKey}`.execute(db)).rows[0]!;
      seeded.set('jobs', { id: job.id });

      const paymentMethodId = newId();
      await t.store.paymentMethods.insert(
        {
          id: paymentMethodId,
          accountId,
          type: 'KLARNA',
          subType: 'KLARNA',
          expiry: null,
          displayText: null,
          holderName: null,
          customerId: null,
          accountUpdatesEnabled: false,
          createdAt: iso(T0),
          deletedAt: null,
          card: null,
        },
        null,
      );
      seeded.set('payment_methods', { id: paymentMethodId });

      const notification: Notification = {
        id: newId(),
        accountId,
        transactionId: tx.id,
        event: 'SUCCESS',
        url: 'https://example.com/cb',
        state: 'PENDING',
        body: '{}',
        attempts: 0,
        lastStatus: null,
        lastError: null,
        nextAttemptAt: iso(T0),
        createdAt: iso(T0),
        updatedAt: iso(T0),
        deliveredAt: null,
        authorizationSealed: null,
      };
      notificationId = (await t.store.notifications.insertOnce(notification)).id;
      seeded.set('notifications', { id: notificationId });
      const attemptId = newId();
      await t.store.notifications.recordAttempt(
        { id: attemptId, notificationId, statusCode: 500, error: 'HTTP 500', durationMs: 12, createdAt: iso(T0) },
        { state: 'PENDING', lastStatus: 500, lastError: 'HTTP 500', nextAttemptAt: iso(T0 + 1000), deliveredAt: null, updatedAt: iso(T0) },
      );
      seeded.set('notification_attempts', { id: attemptId });

      const s = session(accountId, pos.id);
      await t.store.sessions.insert(s);
      seeded.set('sessions', { id: s.id });
      const spare = session(accountId, pos.id);
      await t.store.sessions.insert(spare);
      spareSessionId = spare.id;
      const subscription: Subscription = {
        id: newId(),
        accountId,
        pointOfSaleId: pos.id,
        paymentMethodId,
        sessionId: s.id,
        customerId: null,
        currency: 'DKK',
        reference: null,
        description: null,
        state: 'ACTIVE',
        statusReason: null,
        type: 'SCHEDULED',
        expiryDate: null,
        interval: { period: 'MONTH', frequency: 1 },
        amount: 100,
        createdAt: iso(T0),
        updatedAt: iso(T0),
      };
      await t.store.subscriptions.insert(subscription);
      seeded.set('subscriptions', { id: subscription.id });
      const link: PaymentLink = {
        id: newId(),
        accountId,
        sessionId: s.id,
        clientKey: s.clientKey,
        pointOfSaleId: pos.id,
        state: 'ACTIVE',
        amount: 1000,
        currency: 'DKK',
        reference: null,
        customerId: null,
        transactionId: null,
        expiresAt: s.expiresAt,
        stateChangedAt: iso(T0),
        createdAt: iso(T0),
        updatedAt: iso(T0),
      };
      await t.store.paymentLinks.insert(link);
      seeded.set('payment_links', { id: link.id });

      const webhookId = newId();
      await t.store.webhooks.insert(newWebhook(accountId, webhookId), 'sealed');
      seeded.set('webhooks', { id: webhookId });
      const delivery = newWebhookDelivery({ id: webhookId, accountId });
      await t.store.webhooks.insertDeliveries([delivery]);
      seeded.set('webhook_deliveries', { id: delivery.id });
      const deliveryAttemptId = newId();
      await t.store.webhooks.recordAttempt(
        {
          id: deliveryAttemptId,
          deliveryId: delivery.id,
          webhookId,
          attempt: 1,
          success: false,
          httpStatus: 500,
          error: 'HTTP 500',
          durationMs: 7,
          attemptedAt: iso(T0),
        },
        { state: 'PENDING', nextAttemptAt: iso(T0 + 1000), finishedAt: null },
      );
      seeded.set('webhook_delivery_attempts', { id: deliveryAttemptId });
      const eventId = newId();
      assert.deepEqual(await t.store.webhooks.claimFanouts([{ event: { id: eventId, createdAt: iso(T0) }, deliveries: 1 }], iso(T0)), new Set([eventId]));
      seeded.set('webhook_event_fanouts', { event_id: eventId });

      const saleTx = newTransaction(accountId, pos.id, { flow: 'SALE', state: 'PENDING', terminalId, paymentMethodType: null });
      assert.equal(
        await t.store.sales.insertIfTerminalFree(saleTx, {
          transactionId: saleTx.id,
          accountId,
          terminalId,
          stage: 'QUEUED',
          request: DEFAULT_TERMINAL_REQUEST,
          dispatchedAt: null,
          expiresAt: null,
          cardPresentedAt: null,
          endedAt: null,
          createdAt: iso(T0),
          updatedAt: iso(T0),
        }),
        true,
      );
      seeded.set('terminal_sales', { transaction_id: saleTx.id });

      const p = plan(accountId);
      await t.store.billingPlans.insert(p);
      seeded.set('billing_plans', { id: p.id });
      agreementId = newId();
      await t.store.billingAgreements.insert({
        id: agreementId,
        accountId,
        billingPlanId: p.id,
        subscriptionId: subscription.id,
        sessionId: null,
        customerId: null,
        state: 'ACTIVE',
        nextChargeAt: iso(T0),
        lastChargeAt: null,
        desiredDate: null,
        reference: null,
        stateChangedAt: iso(T0),
        createdAt: iso(T0),
        updatedAt: iso(T0),
      });
      seeded.set('billing_agreements', { id: agreementId });
      const c = charge(p.id, iso(T0));
      assert.equal(await t.store.billingCharges.insertIfAbsent(c), true);
      seeded.set('billing_agreement_charges', { id: c.id });

      const transfer = await t.store.settlements.lockOpenTransfer(accountId, 'DKK', iso(T0), () => ({
        id: newId(),
        accountId,
        currency: 'DKK',
        acquirer: 'sandbox',
        settlementName: 'run',
        settlementIds: ['agr'],
        postingDate: '2030-01-01',
        acquirerReference: 'STL1',
        openedAt: iso(T0),
        updatedAt: iso(T0),
      }));
      transferId = transfer.id;
      seeded.set('settlement_transfers', { id: transferId });
      settledTx = tx;
      const row = settlementRow(op.id, { grossAmount: 500, acquirerFee: -15, interchangeFee: -1, schemeFee: 0, netAmount: 484 });
      assert.equal((await t.store.settlements.insertTransactions([row])).length, 1);
      await t.store.settlements.addToTransfer(transferId, { count: 1, gross: 500n, acquirerFee: -15n, interchangeFee: -1n, schemeFee: 0n, net: 484n }, iso(T0));
      seeded.set('settlement_transactions', { id: row.id });
    });
    after(() => t.close());

    function charge(billingPlanId: string, periodStart: string, overrides: Partial<BillingCharge> = {}): BillingCharge {
      return {
        id: newId(),
        accountId,
        billingAgreementId: agreementId,
        billingPlanId,
        periodStart,
        state: 'PROCESSING',
        amount: 4900,
        currency: 'DKK',
        maxAttempts: 3,
        attempts: 0,
        transactionId: null,
        deadlineAt: iso(T0 + 30 * 86_400_000),
        nextAttemptAt: null,
        createdAt: iso(T0),
        updatedAt: iso(T0),
        finalizedAt: null,
        ...overrides,
      };
    }

    function settlementRow(operationId: string, overrides: Partial<SettlementTransaction> = {}): SettlementTransaction {
      return {
        id: newId(),
        settlementTransferId: transferId,
        accountId,
        operationId,
        operationType: 'CAPTURE',
        transactionId: settledTx.id,
        agreementId: 'agr',
        merchantReference: null,
        acquirerReference: null,
        postingDate: '2030-01-01',
        currency: 'DKK',
        grossAmount: 100,
        acquirerFee: 0,
        interchangeFee: 0,
        schemeFee: 0,
        netAmount: 100,
        createdAt: iso(T0),
        ...overrides,
      };
    }

    test('every constrained table got its row through the repositories (the rows the service writes pass)', () => {
      const tables = new Set(SPEC.map((s) => s.table));
      assert.deepEqual(
        [...tables].filter((x) => !seeded.has(x)),
        [],
      );
    });

    describe('writes through the repositories', () => {
      const TX_MONEY = ['amount', 'fee', 'authorizedAmount', 'capturedAmount', 'refundedAmount', 'voidedAmount', 'paidOutAmount', 'pendingAmount'] as const;
      const snake = (c: string) => c.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`);

      test('transactions.insert refuses every bad amount and aggregate, and stores nothing', async () => {
        for (const field of TX_MONEY) {
          for (const value of badIntegers({ min: 0, max: MAX }, kind)) {
            const tx = newTransaction(accountId, pos.id, { [field]: value } as never);
            await refused(kind, `transactions.${field}`, () => t.store.transactions.insert([tx]), `transactions_${snake(field)}_check`, value, true);
            assert.equal(await t.store.transactions.findById(accountId, tx.id), null, `transactions.${field} = ${show(value)}: nothing stored`);
          }
        }
      });

      test('transactions.insert stores 0 and 999999999 in every money column, as integers', async () => {
        for (const value of [0, MAX]) {
          const fields = Object.fromEntries(TX_MONEY.map((f) => [f, value]));
          const tx = newTransaction(accountId, pos.id, fields);
          await t.store.transactions.insert([tx]);
          const found = await t.store.transactions.findById(accountId, tx.id);
          for (const f of TX_MONEY) assert.equal(found?.[f], value, `${f} = ${value}`);
        }
      });

      test("a numeric string is stored as the exact integer, never as text ('12' → 12)", async () => {
        const tx = newTransaction(accountId, pos.id, { amount: '12' as never });
        await t.store.transactions.insert([tx]);
        const stored = await readColumn(db, kind, 'transactions', { id: tx.id }, 'amount');
        assert.equal(stored.value, 12);
        if (kind === 'sqlite') assert.equal(stored.type, 'integer');
      });

      test('transactions.insert refuses bad currencies and unknown states, types, flows and modes', async () => {
        const cases: Array<[string, string, unknown[]]> = [
          ['currency', 'transactions_currency_check', BAD_CURRENCIES],
          ['state', 'transactions_state_check', ['UNKNOWN', 'success', 'CAPTURED']],
          ['type', 'transactions_type_check', ['REFUND', 'payment']],
          ['flow', 'transactions_flow_check', ['ONLINE', 'mit']],
          ['scaMode', 'transactions_sca_mode_check', ['ALWAYS', 'skip']],
          ['instantCapture', 'transactions_instant_capture_check', ['ON', 'void']],
          ['paymentMethodType', 'transactions_payment_method_type_check', ['CHEQUE', 'card']],
        ];
        for (const [field, constraint, values] of cases) {
          for (const value of values) {
            const tx = newTransaction(accountId, pos.id, { [field]: value } as never);
            await refused(kind, `transactions.${field}`, () => t.store.transactions.insert([tx]), constraint, value, false);
            assert.equal(await t.store.transactions.findById(accountId, tx.id), null);
          }
        }
      });

      test('a batch with one bad transaction stores none of the batch', async () => {
        const good = newTransaction(accountId, pos.id);
        const bad = newTransaction(accountId, pos.id, { amount: -1 });
        await refused(kind, 'transactions batch', () => t.store.transactions.insert([good, bad]), 'transactions_amount_check', -1, true);
        assert.equal(await t.store.transactions.findById(accountId, good.id), null);
      });

      test('operations: bad amounts, types and states are refused', async () => {
        const tx = { id: seeded.get('transactions')!.id as string, accountId, pointOfSaleId: pos.id };
        for (const value of badIntegers({ min: 0, max: MAX }, kind)) {
          const op = newOperation(tx, { amount: value as number });
          await refused(kind, 'operations.amount', () => t.store.transactions.insertOperations([op]), 'operations_amount_check', value, true);
          assert.equal(await countWhere(db, 'operations', { id: op.id }), 0);
        }
        for (const [field, value] of [
          ['type', 'CHARGEBACK'],
          ['state', 'PENDING'],
          ['state', 'success'],
        ] as const) {
          const op = newOperation(tx, { [field]: value } as never);
          await refused(kind, `operations.${field}`, () => t.store.transactions.insertOperations([op]), `operations_${field}_check`, value, false);
          assert.equal(await countWhere(db, 'operations', { id: op.id }), 0);
        }
        const zero = newOperation(tx, { amount: 0 });
        const max = newOperation(tx, { amount: MAX });
        await t.store.transactions.insertOperations([zero, max]);
        assert.equal((await t.store.transactions.operationsOf(tx.id)).find((o) => o.id === max.id)?.amount, MAX);
      });

      test('billing plans: amount ≥ 1, maxAttempts and interval frequency 1..31, known period and capture mode', async () => {
        const cases: Array<[string, (v: any) => Partial<BillingPlan>, unknown[], boolean]> = [
          ['billing_plans_amount_check', (v) => ({ amount: v }), badIntegers({ min: 1, max: MAX }, kind), true],
          ['billing_plans_max_attempts_check', (v) => ({ maxAttempts: v }), badIntegers({ min: 1, max: 31 }, kind), true],
          ['billing_plans_interval_frequency_check', (v) => ({ interval: { period: 'MONTH', frequency: v } }), badIntegers({ min: 1, max: 31 }, kind), true],
          ['billing_plans_currency_check', (v) => ({ currency: v }), BAD_CURRENCIES, false],
          ['billing_plans_interval_period_check', (v) => ({ interval: { period: v, frequency: 1 } }), ['FORTNIGHT', 'month'], false],
          ['billing_plans_instant_capture_check', (v) => ({ instantCapture: v }), ['ALWAYS'], false],
        ];
        for (const [constraint, patch, values, integer] of cases) {
          for (const value of values) {
            const p = plan(accountId, patch(value));
            await refused(kind, constraint, () => t.store.billingPlans.insert(p), constraint, value, integer);
            assert.equal(await t.store.billingPlans.findById(accountId, p.id), null);
          }
        }
        const edges: Array<[number, number, number]> = [
          [1, 1, 1],
          [MAX, 31, 31],
        ];
        for (const [amount, maxAttempts, frequency] of edges) {
          const p = plan(accountId, { amount, maxAttempts, interval: { period: 'YEAR', frequency } });
          await t.store.billingPlans.insert(p);
          assert.deepEqual((await t.store.billingPlans.findById(accountId, p.id))?.interval, { period: 'YEAR', frequency });
        }
      });

      test('billing charges: amount ≥ 1, maxAttempts 1..31, attempts ≥ 0, known state and currency', async () => {
        const planId = seeded.get('billing_plans')!.id as string;
        let day = 1;
        const next = () => iso(T0 + day++ * 86_400_000);
        const cases: Array<[string, (v: any) => Partial<BillingCharge>, unknown[], boolean]> = [
          ['billing_agreement_charges_amount_check', (v) => ({ amount: v }), badIntegers({ min: 1, max: MAX }, kind), true],
          ['billing_agreement_charges_max_attempts_check', (v) => ({ maxAttempts: v }), badIntegers({ min: 1, max: 31 }, kind), true],
          ['billing_agreement_charges_attempts_check', (v) => ({ attempts: v }), badIntegers({ min: 0, max: MAX }, kind), true],
          ['billing_agreement_charges_currency_check', (v) => ({ currency: v }), BAD_CURRENCIES, false],
          ['billing_agreement_charges_state_check', (v) => ({ state: v }), ['PENDING', 'success'], false],
        ];
        for (const [constraint, patch, values, integer] of cases) {
          for (const value of values) {
            const c = charge(planId, next(), patch(value));
            await refused(kind, constraint, () => t.store.billingCharges.insertIfAbsent(c), constraint, value, integer);
            assert.equal(await t.store.billingCharges.findById(accountId, c.id), null);
          }
        }
        const c = charge(planId, next(), { state: 'PROCESSING', attempts: 1 });
        assert.equal(await t.store.billingCharges.insertIfAbsent(c), true);
        for (const attempts of [-1, 1.5, Infinity]) {
          await refused(
            kind,
            'billingCharges.updateIf attempts',
            () => t.store.billingCharges.updateIf(accountId, c.id, { state: 'PROCESSING', attempts: 1 }, { attempts }),
            'billing_agreement_charges_attempts_check',
            attempts,
            true,
          );
        }
        assert.equal((await t.store.billingCharges.findById(accountId, c.id))?.attempts, 1, 'unchanged');
        const edge = charge(planId, next(), { amount: MAX, maxAttempts: 31, attempts: 31 });
        assert.equal(await t.store.billingCharges.insertIfAbsent(edge), true);
      });

      test('payment links and sessions: money, currency, state, timeout and attempts', async () => {
        const link = (overrides: Partial<PaymentLink>): PaymentLink => ({
          id: newId(),
          accountId,
          sessionId: spareSessionId,
          clientKey: 'k',
          pointOfSaleId: pos.id,
          state: 'ACTIVE',
          amount: 1000,
          currency: 'DKK',
          reference: null,
          customerId: null,
          transactionId: null,
          expiresAt: iso(T0),
          stateChangedAt: iso(T0),
          createdAt: iso(T0),
          updatedAt: iso(T0),
          ...overrides,
        });
        const linkCases: Array<[string, (v: any) => Partial<PaymentLink>, unknown[], boolean]> = [
          ['payment_links_amount_check', (v) => ({ amount: v }), badIntegers({ min: 0, max: MAX }, kind), true],
          ['payment_links_currency_check', (v) => ({ currency: v }), BAD_CURRENCIES, false],
          ['payment_links_state_check', (v) => ({ state: v }), ['OPEN', 'paid'], false],
        ];
        for (const [constraint, patch, values, integer] of linkCases) {
          for (const value of values) {
            const l = link(patch(value));
            await refused(kind, constraint, () => t.store.paymentLinks.insert(l), constraint, value, integer);
            assert.equal(await t.store.paymentLinks.findById(accountId, l.id), null);
          }
        }
        assert.equal(await t.store.paymentLinks.findBySessionId(accountId, spareSessionId), null, 'the spare session still has no link');
        const sessionCases: Array<[string, (v: any) => Partial<Session>, unknown[], boolean]> = [
          ['sessions_amount_check', (v) => ({ amount: v }), badIntegers({ min: 0, max: MAX }, kind), true],
          ['sessions_timeout_minutes_check', (v) => ({ timeoutMinutes: v }), badIntegers({ min: 1, max: 86_400 }, kind), true],
          ['sessions_max_attempts_check', (v) => ({ maxAttempts: v }), badIntegers({ min: 1, max: 10 }, kind), true],
          ['sessions_attempts_check', (v) => ({ attempts: v }), badIntegers({ min: 0, max: MAX }, kind), true],
          ['sessions_currency_check', (v) => ({ currency: v }), BAD_CURRENCIES, false],
          ['sessions_state_check', (v) => ({ state: v }), ['ACTIVE', 'pending'], false],
          ['sessions_sca_mode_check', (v) => ({ scaMode: v }), ['ALWAYS'], false],
          ['sessions_instant_capture_check', (v) => ({ instantCapture: v }), ['ON'], false],
        ];
        for (const [constraint, patch, values, integer] of sessionCases) {
          for (const value of values) {
            const s = session(accountId, pos.id, patch(value));
            await refused(kind, constraint, () => t.store.sessions.insert(s), constraint, value, integer);
            assert.equal(await t.store.sessions.findByIdAnyAccount(s.id), null);
          }
        }
        const edge = session(accountId, pos.id, { amount: MAX, timeoutMinutes: 86_400, maxAttempts: 10 });
        await t.store.sessions.insert(edge);
        await t.store.paymentLinks.insert({
          id: newId(),
          accountId,
          sessionId: edge.id,
          clientKey: edge.clientKey,
          pointOfSaleId: pos.id,
          state: 'ACTIVE',
          amount: MAX,
          currency: 'JPY',
          reference: null,
          customerId: null,
          transactionId: null,
          expiresAt: edge.expiresAt,
          stateChangedAt: iso(T0),
          createdAt: iso(T0),
          updatedAt: iso(T0),
        });
        assert.equal((await t.store.paymentLinks.findBySessionId(accountId, edge.id))?.amount, MAX);
        await refused(
          kind,
          'sessions.updateIfState attempts',
          () => t.store.sessions.updateIfState(edge.id, 'PENDING', { attempts: -1, updatedAt: iso(T0) }),
          'sessions_attempts_check',
          -1,
          true,
        );
        assert.equal((await t.store.sessions.findByIdAnyAccount(edge.id))?.attempts, 0);
      });

      test('subscriptions: the agreed amount ≥ 1 (or none), frequency 1..31, known state, type, period', async () => {
        const id = seeded.get('subscriptions')!.id as string;
        for (const value of badIntegers({ min: 1, max: MAX, nullable: true }, kind)) {
          await refused(
            kind,
            'subscriptions.amount',
            () => t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { amount: value as number }),
            'subscriptions_amount_check',
            value,
            true,
          );
          assert.equal((await t.store.subscriptions.findById(accountId, id))?.amount, 100, 'unchanged');
        }
        for (const value of badIntegers({ min: 1, max: 31, nullable: true }, kind)) {
          await refused(
            kind,
            'subscriptions.interval',
            () => t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { interval: { period: 'DAY', frequency: value as number } }),
            'subscriptions_interval_frequency_check',
            value,
            true,
          );
        }
        await refused(
          kind,
          'subscriptions.state',
          () => t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { state: 'PAUSED' as never }),
          'subscriptions_state_check',
          'PAUSED',
          false,
        );
        await refused(
          kind,
          'subscriptions.interval',
          () => t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { interval: { period: 'HOUR' as never, frequency: 1 } }),
          'subscriptions_interval_period_check',
          'HOUR',
          false,
        );
        assert.deepEqual((await t.store.subscriptions.findById(accountId, id))?.interval, { period: 'MONTH', frequency: 1 }, 'unchanged');
        assert.equal(await t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { amount: MAX, interval: { period: 'WEEK', frequency: 31 } }), true);
        assert.equal(await t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { amount: null, interval: null }), true);
        assert.equal(await t.store.subscriptions.updateIfState(accountId, id, 'ACTIVE', { amount: 100, interval: { period: 'MONTH', frequency: 1 } }), true);
      });

      test('notifications: HTTP status and duration of an attempt (its number comes from the row); a refused attempt moves no counter', async () => {
        for (const [field, constraint, range] of [
          ['durationMs', 'notification_attempts_duration_ms_check', { min: 0, max: MAX }],
          ['statusCode', 'notification_attempts_status_code_check', { min: 100, max: 999, nullable: true }],
        ] as const) {
          for (const value of badIntegers(range, kind)) {
            const attemptId = newId();
            const write = () =>
              t.store.transaction((repos) =>
                repos.notifications.recordAttempt(
                  { id: attemptId, notificationId, statusCode: 200, error: null, durationMs: 5, createdAt: iso(T0), [field]: value },
                  { state: 'DELIVERED', lastStatus: 200, lastError: null, nextAttemptAt: null, deliveredAt: iso(T0), updatedAt: iso(T0) },
                ),
              );
            await refused(kind, `notification_attempts.${field}`, write, constraint, value, true);
            assert.equal(await countWhere(db, 'notification_attempts', { id: attemptId }), 0);
            const n = await t.store.notifications.findById(accountId, notificationId);
            assert.deepEqual([n?.attempts, n?.state], [1, 'PENDING'], 'the notification did not move');
          }
        }
        for (const value of [99, 1000, 1.5]) {
          const n: Notification = {
            id: newId(),
            accountId,
            transactionId: seeded.get('transactions')!.id as string,
            event: `E${newId()}`,
            url: 'https://example.com',
            state: 'PENDING',
            body: '{}',
            attempts: 0,
            lastStatus: value,
            lastError: null,
            nextAttemptAt: null,
            createdAt: iso(T0),
            updatedAt: iso(T0),
            deliveredAt: null,
            authorizationSealed: null,
          };
          await refused(kind, 'notifications.last_status', () => t.store.notifications.insertOnce(n), 'notifications_last_status_check', value, true);
          assert.equal(await countWhere(db, 'notifications', { id: n.id }), 0);
        }
      });

      test('settlement rows: gross ±999999999 signed by type, fees ≤ 0, net = gross + fees; a refund may net below -999999999', async () => {
        const ops: string[] = [];
        const freshOp = async (type: 'CAPTURE' | 'REFUND') => {
          const op = newOperation(settledTx, { type });
          await t.store.transactions.insertOperations([op]);
          ops.push(op.id);
          return op.id;
        };
        const opId = await freshOp('CAPTURE');
        const bad: Array<[string, Partial<SettlementTransaction>, unknown]> = [
          ['settlement_transactions_gross_amount_check', { grossAmount: MAX + 1, netAmount: MAX + 1 }, MAX + 1],
          ['settlement_transactions_gross_sign_check', { grossAmount: -100, netAmount: -100 }, -100],
          ['settlement_transactions_acquirer_fee_check', { acquirerFee: 1, netAmount: 101 }, 1],
          ['settlement_transactions_interchange_fee_check', { interchangeFee: -MAX - 1, netAmount: 100 - MAX - 1 }, -MAX - 1],
          ['settlement_transactions_scheme_fee_check', { schemeFee: 5, netAmount: 105 }, 5],
          ['settlement_transactions_net_amount_check', { netAmount: 99 }, 99],
          ['settlement_transactions_currency_check', { currency: 'dkk' }, 'dkk'],
          ['(settlement_transactions_operation_type_check|settlement_transactions_gross_sign_check)', { operationType: 'VOID' as never }, 'VOID'],
        ];
        for (const [constraint, patch, value] of bad) {
          const row = settlementRow(opId, patch);
          await refused(kind, constraint, () => t.store.settlements.insertTransactions([row]), constraint, value, false);
          assert.equal(await countWhere(db, 'settlement_transactions', { id: row.id }), 0);
        }
        for (const value of NON_INTEGERS.filter((v) => !Number.isNaN(v))) {
          const row = settlementRow(opId, { grossAmount: value as number });
          await refused(
            kind,
            'settlement gross',
            () => t.store.settlements.insertTransactions([row]),
            'settlement_transactions_gross_amount_check',
            value,
            true,
          );
        }
        // The largest legitimate rows: a capture of 999999999 and a refund of 999999999 with the largest fees.
        const capture = settlementRow(opId, { grossAmount: MAX, netAmount: MAX });
        const refund = settlementRow(await freshOp('REFUND'), {
          operationType: 'REFUND',
          grossAmount: -MAX,
          acquirerFee: -MAX,
          interchangeFee: -MAX,
          schemeFee: -MAX,
          netAmount: -4 * MAX,
        });
        assert.equal((await t.store.settlements.insertTransactions([capture, refund])).length, 2);
        assert.equal((await readColumn(db, kind, 'settlement_transactions', { id: refund.id }, 'net_amount')).value, -3_999_999_996);
      });

      test('settlement transfers: a count or fee total out of range, or totals that do not add up, change nothing', async () => {
        const before = await t.store.settlements.lockTransfer(transferId, iso(T0));
        const deltas: Array<[string, TransferDelta, unknown, boolean]> = [
          ['settlement_transfers_transactions_count_check', { count: -5, gross: 0n, acquirerFee: 0n, interchangeFee: 0n, schemeFee: 0n, net: 0n }, -4, true],
          ['settlement_transfers_transactions_count_check', { count: 1.5, gross: 0n, acquirerFee: 0n, interchangeFee: 0n, schemeFee: 0n, net: 0n }, 2.5, true],
          [
            'settlement_transfers_transactions_count_check',
            { count: Infinity, gross: 0n, acquirerFee: 0n, interchangeFee: 0n, schemeFee: 0n, net: 0n },
            Infinity,
            true,
          ],
          [
            'settlement_transfers_acquirer_fee_amount_check',
            { count: 1, gross: 0n, acquirerFee: 100n, interchangeFee: 0n, schemeFee: 0n, net: 100n },
            85,
            false,
          ],
          [
            'settlement_transfers_transactions_net_amount_check',
            { count: 1, gross: 10n, acquirerFee: 0n, interchangeFee: 0n, schemeFee: 0n, net: 9n },
            493,
            false,
          ],
        ];
        for (const [constraint, delta, value, integer] of deltas) {
          await refused(kind, constraint, () => t.store.settlements.addToTransfer(transferId, delta, iso(T0)), constraint, value, integer);
        }
        const afterRefusals = await t.store.settlements.lockTransfer(transferId, iso(T0));
        assert.deepEqual({ ...afterRefusals, updatedAt: null }, { ...before, updatedAt: null }, 'the totals did not move');
        for (const netAmount of [Infinity, 1.5, SAFE + 1]) {
          await refused(
            kind,
            'completeTransfer net',
            () => t.store.settlements.completeTransfer(transferId, { adjustments: [], netAmount, createdAt: iso(T0) }),
            'settlement_transfers_net_amount_check',
            netAmount,
            true,
          );
        }
        assert.equal((await t.store.settlements.lockTransfer(transferId, iso(T0)))?.state, 'OPEN', 'still OPEN');
      });

      test('jobs: maxAttempts ≥ 1 and an integer; nothing enqueued when refused', async () => {
        for (const value of badIntegers({ min: 1, max: MAX }, kind)) {
          const dedupeKey = `bad-job:${newId()}`;
          await refused(
            kind,
            'jobs.max_attempts',
            () => t.store.jobs.enqueue({ kind: 'constraints-test', payload: null, dedupeKey, maxAttempts: value as number }),
            'jobs_max_attempts_check',
            value,
            true,
          );
          assert.equal(Number((await sql<{ n: number }>`select count(*) as n from jobs where dedupe_key = ${dedupeKey}`.execute(db)).rows[0]!.n), 0);
        }
      });

      test('webhooks: delivery attempts and states, attempt log, fan-out counts', async () => {
        const webhookId = seeded.get('webhooks')!.id as string;
        const deliveryId = seeded.get('webhook_deliveries')!.id as string;
        for (const value of badIntegers({ min: 0, max: MAX }, kind)) {
          const d: WebhookDelivery = {
            id: newId(),
            webhookId,
            accountId,
            eventId: newId(),
            event: 'transaction.captured.v1',
            body: '{}',
            state: 'PENDING',
            attempts: value as number,
            nextAttemptAt: null,
            lastAttemptAt: null,
            createdAt: iso(T0),
            finishedAt: null,
          };
          await refused(kind, 'webhook_deliveries.attempts', () => t.store.webhooks.insertDeliveries([d]), 'webhook_deliveries_attempts_check', value, true);
          assert.equal(await countWhere(db, 'webhook_deliveries', { id: d.id }), 0);
        }
        for (const [field, constraint, range] of [
          ['durationMs', 'webhook_delivery_attempts_duration_ms_check', { min: 0, max: MAX }],
          ['httpStatus', 'webhook_delivery_attempts_http_status_check', { min: 100, max: 999, nullable: true }],
        ] as const) {
          for (const value of badIntegers(range, kind)) {
            const id = newId();
            const write = () =>
              t.store.transaction((repos) =>
                repos.webhooks.recordAttempt(
                  { id, deliveryId, webhookId, attempt: 2, success: true, httpStatus: 200, error: null, durationMs: 3, attemptedAt: iso(T0), [field]: value },
                  { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(T0) },
                ),
              );
            await refused(kind, `webhook_delivery_attempts.${field}`, write, constraint, value, true);
            assert.equal(await countWhere(db, 'webhook_delivery_attempts', { id }), 0);
            const d = (await t.store.webhooks.findDeliveryWithWebhook(deliveryId))?.delivery;
            assert.deepEqual([d?.attempts, d?.state], [1, 'PENDING'], 'the delivery did not move');
          }
        }
        for (const value of [-1, 1.5, Infinity]) {
          const eventId = newId();
          await refused(
            kind,
            'webhook_event_fanouts.deliveries',
            () => t.store.webhooks.claimFanouts([{ event: { id: eventId, createdAt: iso(T0) }, deliveries: value }], iso(T0)),
            'webhook_event_fanouts_deliveries_check',
            value,
            true,
          );
          assert.equal(await countWhere(db, 'webhook_event_fanouts', { event_id: eventId }), 0);
        }
      });

      test('idempotency: a response status outside 100..599 is refused and the key stays in flight', async () => {
        const ref = { accountId, method: 'POST', path: '/y', key: `k-${newId()}` };
        await t.store.idempotency.claim(ref, 'hash', { now: iso(T0), lockedUntil: iso(T0 + 60_000), expiresAt: iso(T0 + 86_400_000) });
        for (const value of [99, 600, 1.5, Infinity]) {
          await refused(
            kind,
            'idempotency_keys.response_status',
            () => t.store.idempotency.complete(ref, value, '{}', 'application/json'),
            'idempotency_keys_response_status_check',
            value,
            true,
          );
        }
        const row = await readColumn(db, kind, 'idempotency_keys', { account_id: ref.accountId, method: ref.method, path: ref.path, key: ref.key }, 'state');
        assert.equal(row.value, 'in_flight');
      });

      test('accounts, credentials, points of sale, payment methods, agreements, terminal sales: unknown values are refused', async () => {
        const acct = { id: newId(), name: 'n', email: 'n@example.com', timezone: 'UTC', language: null, domain: 'example.com', createdAt: iso(T0) };
        for (const value of BAD_CURRENCIES) {
          const id = newId();
          await refused(
            kind,
            'accounts.currency_code',
            () => t.store.accounts.insert({ ...acct, id, currencyCode: value as string }),
            'accounts_currency_code_check',
            value,
            false,
          );
          assert.equal(await t.store.accounts.findById(id), null);
        }
        await refused(
          kind,
          'accounts.status',
          () => t.store.accounts.setStatus(accountId, 'SUSPENDED' as never, iso(T0)),
          'accounts_status_check',
          'SUSPENDED',
          false,
        );
        assert.equal((await t.store.accounts.findById(accountId))?.status, 'ACTIVE');
        const credential = { accountId, name: null, secretHash: `h-${newId()}`, expiresAt: null, createdAt: iso(T0) };
        await refused(
          kind,
          'credentials.kind',
          () => t.store.accounts.insertCredential({ ...credential, id: newId(), kind: 'password' as never, environment: 'test' }),
          'credentials_kind_check',
          'password',
          false,
        );
        await refused(
          kind,
          'credentials.environment',
          () => t.store.accounts.insertCredential({ ...credential, id: newId(), kind: 'api_key', environment: 'prod' }),
          'credentials_environment_check',
          'prod',
          false,
        );
        const p = { ...pointOfSale(accountId), type: 'MOBILE' as never };
        await refused(kind, 'points_of_sale.type', () => t.store.pointsOfSale.insert(p, 's'), 'points_of_sale_type_check', 'MOBILE', false);
        assert.equal(await t.store.pointsOfSale.findById(accountId, p.id), null);
        const pm = {
          id: newId(),
          accountId,
          type: 'CHEQUE' as never,
          subType: null,
          expiry: null,
          displayText: null,
          holderName: null,
          customerId: null,
          accountUpdatesEnabled: false,
          createdAt: iso(T0),
          deletedAt: null,
          card: null,
        };
        await refused(kind, 'payment_methods.type', () => t.store.paymentMethods.insert(pm, null), 'payment_methods_type_check', 'CHEQUE', false);
        await refused(
          kind,
          'billing_agreements.state',
          () => t.store.billingAgreements.updateIf(accountId, agreementId, { state: 'ACTIVE' } as never, { state: 'PAUSED' as never }),
          'billing_agreements_state_check',
          'PAUSED',
          false,
        );
        assert.equal((await t.store.billingAgreements.findById(accountId, agreementId))?.state, 'ACTIVE');
        const saleTx = newTransaction(accountId, pos.id, { flow: 'SALE', state: 'PENDING', terminalId: null, paymentMethodType: null });
        const write = () =>
          t.store.transaction((repos) =>
            repos.sales.insertIfTerminalFree(saleTx, {
              transactionId: saleTx.id,
              accountId,
              terminalId: seeded.get('terminals')!.id as string,
              stage: 'LOST' as never,
              request: DEFAULT_TERMINAL_REQUEST,
              dispatchedAt: null,
              expiresAt: null,
              cardPresentedAt: null,
              endedAt: null,
              createdAt: iso(T0),
              updatedAt: iso(T0),
            }),
          );
        await refused(kind, 'terminal_sales.stage', write, 'terminal_sales_stage_check', 'LOST', false);
        assert.equal(await t.store.transactions.findById(accountId, saleTx.id), null, 'the sale transaction was rolled back with it');
      });
    });

    describe('every constraint of 012, on a stored row (raw SQL)', () => {
      for (const spec of SPEC) {
        if (spec.kind === 'relation') continue;
        const constraint = 'refusal' in spec && spec.refusal ? spec.refusal : nameOf(spec);
        test(`${spec.table}.${spec.column}`, async () => {
          const key = seeded.get(spec.table)!;
          const original = await readColumn(db, kind, spec.table, key, spec.column);
          const bad = spec.kind === 'int' ? badIntegers(spec, kind) : spec.kind === 'enum' ? BAD_STATES(spec.values) : BAD_CURRENCIES;
          for (const value of bad) {
            await refused(
              kind,
              `${spec.table}.${spec.column}`,
              () => setColumn(db, spec.table, key, spec.column, value),
              constraint,
              value,
              spec.kind === 'int' || typeof (spec as any).values?.[0] === 'number',
            );
            assert.deepEqual(await readColumn(db, kind, spec.table, key, spec.column), original, `${spec.table}.${spec.column} = ${show(value)}: unchanged`);
          }
          if ((spec.kind === 'int' || spec.kind === 'enum') && spec.related) return; // boundaries: through the repositories (other columns must agree)
          const good: unknown[] =
            spec.kind === 'int' ? [spec.min, spec.max, String(spec.min)] : spec.kind === 'enum' ? [...spec.values] : ['EUR', 'JPY', 'XTS'];
          if ((spec.kind === 'int' || spec.kind === 'enum') && spec.nullable) good.push(null);
          for (const value of good) {
            await setColumn(db, spec.table, key, spec.column, value);
            const stored = await readColumn(db, kind, spec.table, key, spec.column);
            const expected: unknown = typeof value === 'string' && spec.kind === 'int' ? Number(value) : value;
            assert.equal(stored.value, expected, `${spec.table}.${spec.column} = ${show(value)} is stored as is`);
            if (kind === 'sqlite' && typeof expected === 'number') assert.equal(stored.type, 'integer');
          }
          await setColumn(db, spec.table, key, spec.column, original.value);
        });
      }
    });

    describe(`migration ${MIGRATION}`, () => {
      test('rows that would violate a new constraint stop the migration, each named; nothing is changed', async () => {
        const database = await createTestDatabase(kind);
        const connection = connect(database.config, database.schema ? { schema: database.schema } : {});
        const cdb = connection.db as unknown as Kysely<any>;
        try {
          assert.equal((await migrate(connection, { until: BEFORE })).applied.at(-1), BEFORE);
          const account = newId();
          await sql`insert into accounts (id, name, email, currency_code, timezone, domain, status, created_at, updated_at)
            values (${account}, 'a', 'a@example.com', 'DKK', 'UTC', 'example.com', 'ACTIVE', ${iso(T0)}, ${iso(T0)})`.execute(cdb);
          const insertTx = (id: string, amount: unknown, currencyCode: string) =>
            sql`insert into transactions (id, account_id, point_of_sale_id, type, flow, state, amount, currency, created_at, updated_at)
              values (${id}, ${account}, 'pos', 'PAYMENT', 'MIT', 'SUCCESS', ${amount}, ${currencyCode}, ${iso(T0)}, ${iso(T0)})`.execute(cdb);
          // SQLite kept 'Infinity' as text in an INTEGER column before 012; PostgreSQL kept a negative amount.
          const badAmount = kind === 'sqlite' ? 'Infinity' : -5;
          const [tx1, tx2, tx3] = [newTransactionId(), newTransactionId(), newTransactionId()];
          await insertTx(tx1, badAmount, 'DKK');
          await insertTx(tx2, 100, 'dkk');
          await insertTx(tx3, 250, 'EUR');
          const jobs = Array.from({ length: 22 }, () => newId());
          for (const id of jobs) {
            await sql`insert into jobs (id, kind, payload, state, run_at, attempts, max_attempts, created_at, updated_at)
              values (${id}, 'k', 'null', 'queued', ${iso(T0)}, -1, 5, ${iso(T0)}, ${iso(T0)})`.execute(cdb);
          }
          const rowOf = async (id: string) => (await sql<Record<string, unknown>>`select * from transactions where id = ${id}`.execute(cdb)).rows[0];
          const good = await rowOf(tx3);

          await assert.rejects(migrate(connection), (err: Error) => {
            const m = err.message;
            assert.match(m, new RegExp(`^migration ${MIGRATION} failed: 24 existing row\\(s\\) would violate the new constraints`));
            assert.ok(m.includes(`transactions id='${tx1}': amount=${kind === 'sqlite' ? "'Infinity' (text)" : '-5'} violates transactions_amount_check`), m);
            assert.ok(m.includes(`transactions id='${tx2}': currency='dkk'${kind === 'sqlite' ? ' (text)' : ''} violates transactions_currency_check`), m);
            assert.ok(
              jobs.some((id) => m.includes(`jobs id='${id}': attempts=-1${kind === 'sqlite' ? ' (integer)' : ''} violates jobs_attempts_check`)),
              m,
            );
            assert.ok(m.includes('jobs.jobs_attempts_check: 22'), m);
            assert.equal(m.split('\n').filter((line) => line.startsWith('  ') && line.includes(' violates ')).length, 20, 'at most 20 rows listed');
            assert.ok(m.endsWith('... and 4 more'), m);
            assert.ok(!m.includes(tx3), 'a good row is not listed');
            return true;
          });
          // Nothing was dropped, altered or recorded.
          assert.equal((await rowOf(tx1))?.amount, badAmount);
          assert.equal((await rowOf(tx2))?.currency, 'dkk');
          assert.equal(Number((await sql<{ n: number }>`select count(*) as n from jobs where attempts = -1`.execute(cdb)).rows[0]!.n), 22);
          assert.equal((await sql`select name from kysely_migration where name = ${MIGRATION}`.execute(cdb)).rows.length, 0);

          // Fixed by the operator: the migration runs and keeps every row as it was.
          await sql`update transactions set amount = 100 where id = ${tx1}`.execute(cdb);
          await sql`update transactions set currency = 'DKK' where id = ${tx2}`.execute(cdb);
          await sql`update jobs set attempts = 0`.execute(cdb);
          const fixed = await rowOf(tx1);
          assert.deepEqual((await migrate(connection, { until: MIGRATION })).applied, [MIGRATION]);
          assert.deepEqual(await rowOf(tx1), fixed);
          assert.deepEqual(await rowOf(tx3), good);
          await assert.rejects(insertTx(newTransactionId(), badAmount, 'DKK'), /transactions_amount_check|invalid input syntax/);
        } finally {
          await connection.close();
          await database.drop();
        }
      });

      test('keeps every index, foreign key and column of the tables it rebuilds; references are enforced afterwards', async () => {
        const database = await createTestDatabase(kind);
        const connection = connect(database.config, database.schema ? { schema: database.schema } : {});
        const cdb = connection.db as unknown as Kysely<any>;
        const shape = async () => {
          if (kind === 'postgres') {
            return (await sql`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`.execute(cdb)).rows;
          }
          const indexes = (
            await sql<{
              name: string;
              tbl: string;
              def: string | null;
            }>`select name, tbl_name as tbl, sql as def from sqlite_master where type = 'index' order by name`.execute(cdb)
          ).rows.map((r) => ({ ...r, def: r.def?.replace(/\s+/g, ' ') ?? null }));
          const tables = (await sql<{ name: string }>`select name from sqlite_master where type = 'table' order by name`.execute(cdb)).rows.map((r) => r.name);
          const detail = [];
          for (const table of tables) {
            detail.push({
              table,
              columns: (await sql`select name, type, "notnull" as nn, dflt_value as dflt, pk from pragma_table_info(${table})`.execute(cdb)).rows,
              references: (
                await sql`select "table" as parent, "from" as col, "to" as target, on_delete as ondelete from pragma_foreign_key_list(${table})`.execute(cdb)
              ).rows,
            });
          }
          return { indexes, detail };
        };
        try {
          await migrate(connection, { until: BEFORE });
          const before = await shape();
          assert.deepEqual((await migrate(connection, { until: MIGRATION })).applied, [MIGRATION]);
          assert.deepEqual(await shape(), before);
          if (kind === 'sqlite') {
            assert.equal(Number(Object.values((await sql`pragma foreign_keys`.execute(cdb)).rows[0] as object)[0]), 1, 'foreign keys are on again');
            const tx = newTransactionId();
            await assert.rejects(
              sql`insert into operations (id, account_id, transaction_id, point_of_sale_id, type, state, amount, created_at)
                values (${newId()}, 'no-account', ${tx}, 'pos', 'CAPTURE', 'SUCCESS', 1, ${iso(T0)})`.execute(cdb),
              /FOREIGN KEY constraint failed/,
            );
          }
          const declared = checksOf(splitStatements(fs.readFileSync(path.join(MIGRATIONS, kind, `${MIGRATION}.sql`), 'utf8'))).map((c) => c.name);
          const present =
            kind === 'postgres'
              ? (
                  await sql<{
                    name: string;
                  }>`select conname as name from pg_constraint where contype = 'c' and connamespace = current_schema()::regnamespace and convalidated`.execute(
                    cdb,
                  )
                ).rows.map((r) => r.name)
              : (await sql<{ def: string }>`select sql as def from sqlite_master where type = 'table'`.execute(cdb)).rows.flatMap((r) =>
                  [...r.def.matchAll(/CONSTRAINT (\w+) CHECK/g)].map((m) => m[1]!),
                );
          assert.deepEqual([...present].sort(), [...declared].sort());
        } finally {
          await connection.close();
          await database.drop();
        }
      });
    });
  });
}

describe(`${MIGRATION}: the same constraints on both dialects, and the ones this test expects`, () => {
  const declared = (dialect: string) =>
    checksOf(splitStatements(fs.readFileSync(path.join(MIGRATIONS, dialect, `${MIGRATION}.sql`), 'utf8')))
      .map((c) => `${c.table}.${c.name}`)
      .sort();

  test('PostgreSQL and SQLite declare the same constraint names on the same tables', () => {
    assert.deepEqual(declared('postgres'), declared('sqlite'));
  });

  test('every constraint is one of the spec above, and every spec entry is a constraint', () => {
    assert.deepEqual(declared('sqlite'), SPEC.map((s) => `${s.table}.${nameOf(s)}`).sort());
  });
});
