/**
 * Fixtures for the foundation suites: a migrated store on either database with a settable clock,
 * and factories for rows that no public foundation route creates (transactions, operations, webhooks).
 */
import assert from 'node:assert/strict';
import type { JobHandoff } from '../../src/jobs/job.js';
import { connect } from '../../src/storage/connect.js';
import { migrate } from '../../src/storage/migrate.js';
import type { EnqueueNotice } from '../../src/storage/repositories/jobs.js';
import { createStore, type Store } from '../../src/storage/store.js';
import { newId, newTransactionId } from '../../src/shared/ids.js';
import { DEFAULT_HOSTED_CONFIGURATION, type PointOfSale } from '../../src/modules/points-of-sale/point-of-sale.js';
import type { Operation } from '../../src/modules/transactions/transaction.js';
import type { NewTransaction } from '../../src/modules/transactions/transactions.repository.js';
import type { Webhook, WebhookDelivery } from '../../src/modules/webhooks/webhook.js';
import { createTestDatabase, type StoreKind, type TestDatabase } from '../support/stores.js';

export interface TestStore {
  store: Store;
  database: TestDatabase;
  /** The store's notion of now (ms); tests move it by assigning. */
  clock: { ms: number };
  /** The runner a transaction's new due jobs are offered to (JobHandoff); none until a test sets one. */
  handoff: { to: JobHandoff | null };
  /** Told when jobs were queued (the store's onEnqueue), per kind; nobody until a test sets it. */
  enqueued: { to: EnqueueNotice | null };
  close(): Promise<void>;
}

/** Polls `check` every 10 ms until it holds; fails the test after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');
export const iso = (ms: number): string => new Date(ms).toISOString();

export async function openTestStore(kind: StoreKind): Promise<TestStore> {
  const database = await createTestDatabase(kind, { migrated: true });
  const connection = connect(database.config, database.schema ? { schema: database.schema } : {});
  await migrate(connection);
  const clock = { ms: T0 };
  const handoff: TestStore['handoff'] = { to: null };
  const enqueued: TestStore['enqueued'] = { to: null };
  const store = createStore(connection, {
    now: () => clock.ms,
    onEnqueue: (dueAt, kind) => enqueued.to?.(dueAt, kind),
    handoff: { take: (kind) => handoff.to?.take(kind) ?? null, remember: (id, kind, known) => handoff.to?.remember(id, kind, known) },
  });
  return {
    store,
    database,
    clock,
    handoff,
    enqueued,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

/** An account row, created straight through the repository (ACTIVE unless told otherwise). */
export async function seedAccount(store: Store, createdAt = iso(T0), name = `acct-${newId().slice(-12)}`) {
  const account = await store.accounts.insert({
    id: newId(),
    name,
    email: `${name}@example.com`,
    currencyCode: 'DKK',
    timezone: 'UTC',
    language: null,
    domain: 'example.com',
    createdAt,
  });
  await store.accounts.setStatus(account.id, 'ACTIVE', createdAt);
  return account;
}

/** A point of sale of `accountId` with the hosted page's defaults (not stored: pass it to pointsOfSale.insert). */
export function newPointOfSale(accountId: string, type: PointOfSale['type'] = 'PHYSICAL', createdAt = iso(T0)): PointOfSale {
  return {
    id: newId(),
    accountId,
    name: `pos-${type}`,
    type,
    domain: 'example.com',
    descriptor: null,
    hostedConfiguration: { ...DEFAULT_HOSTED_CONFIGURATION, processor: [], exemptions: [] },
    createdAt,
    updatedAt: createdAt,
  };
}

export function newTransaction(accountId: string, pointOfSaleId: string, overrides: Partial<NewTransaction> = {}): NewTransaction {
  const createdAt = overrides.createdAt ?? iso(T0);
  return {
    id: newTransactionId(),
    accountId,
    pointOfSaleId,
    terminalId: null,
    sessionId: null,
    subscriptionId: null,
    billingAgreementChargeId: null,
    paymentMethodId: null,
    paymentMethodType: 'CARD',
    paymentMethodSubType: 'VISA',
    paymentMethodExpiry: null,
    paymentMethodDisplayText: null,
    paymentMethodHolderName: null,
    customerId: null,
    type: 'PAYMENT',
    flow: 'MIT',
    state: 'SUCCESS',
    errorCode: null,
    externalStatusCodes: null,
    scaMode: null,
    amount: 1000,
    fee: 0,
    currency: 'DKK',
    instantCapture: null,
    notificationUrl: null,
    reference: null,
    textOnStatement: null,
    descriptor: null,
    exemptions: null,
    attributes: null,
    clientIp: null,
    clientCountry: null,
    acquirer: null,
    acquirerReference: null,
    updatedAt: createdAt,
    finalizedAt: null,
    ...overrides,
    createdAt,
  } as NewTransaction;
}

export function newOperation(tx: { id: string; accountId: string; pointOfSaleId: string }, overrides: Partial<Operation> = {}): Operation {
  return {
    id: newId(),
    accountId: tx.accountId,
    transactionId: tx.id,
    pointOfSaleId: tx.pointOfSaleId,
    type: 'CAPTURE',
    state: 'SUCCESS',
    amount: 500,
    referenceOperationId: null,
    errorCode: null,
    externalStatusCodes: null,
    acquirerReference: null,
    createdAt: iso(T0),
    finalizedAt: iso(T0),
    ...overrides,
  };
}

/** An active webhook of `accountId` for captured transactions, made at T0. */
export function newWebhook(accountId: string, id = newId()): Webhook {
  return {
    id,
    accountId,
    url: 'https://example.com/wh',
    events: ['transaction.captured.v1'],
    pausedAt: null,
    pauseReason: null,
    resumedAt: null,
    createdAt: iso(T0),
    updatedAt: iso(T0),
  };
}

/** A PENDING delivery of `webhook`, never attempted, made at T0. */
export function newWebhookDelivery(webhook: { id: string; accountId: string }, id = newId()): WebhookDelivery {
  return {
    id,
    webhookId: webhook.id,
    accountId: webhook.accountId,
    eventId: newId(),
    event: 'transaction.captured.v1',
    body: '{}',
    state: 'PENDING',
    attempts: 0,
    nextAttemptAt: iso(T0),
    lastAttemptAt: null,
    createdAt: iso(T0),
    finishedAt: null,
  };
}
