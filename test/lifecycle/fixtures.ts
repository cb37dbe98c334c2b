/**
 * Fixtures of the lifecycle suites: authorized transactions seeded through the repositories (the
 * state an authorization flow leaves behind: SUCCESS, authorized amount, a SUCCESS AUTHORIZATION
 * or SALE operation), cards stored in the vault for the acquirer instrument, and small readers.
 */
import assert from 'node:assert/strict';
import { newId, newTransactionId } from '../../src/shared/ids.js';
import type { Operation, Transaction, TransactionFlow, TransactionState, TransactionType } from '../../src/modules/transactions/transaction.js';
import type { NewTransaction } from '../../src/modules/transactions/transactions.repository.js';
import { type EngineDeps, PaymentEngine } from '../../src/modules/transactions/payment-engine.js';
import type { Repositories } from '../../src/storage/store.js';
import { API, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { singleAcquirer } from '../../src/modules/transactions/acquirer-routing.js';

/**
 * A payment engine of its own over the test runtime's store: a scripted acquirer (approves), no
 * callbacks, wallet instruments; `deps` replaces any of these.
 */
export function engineOver(t: TestRuntime, deps: Partial<EngineDeps<Repositories>> = {}): PaymentEngine<Repositories> {
  const store = t.runtime.store;
  return new PaymentEngine<Repositories>({
    transactions: store.transactions,
    transaction: (fn) => store.transaction(fn),
    routing: singleAcquirer(new ScriptedAcquirer()),
    acquirerRequests: store.acquirerRequests,
    callbacks: { scheduleInCommit: async () => undefined, writeInCommit: async () => null },
    openInstrument: () => ({ kind: 'wallet', paymentMethodType: 'CARD' }),
    clock: t.runtime.clock,
    ...deps,
  });
}

export interface SeedOptions {
  amount?: number;
  state?: TransactionState;
  flow?: TransactionFlow;
  type?: TransactionType;
  paymentMethodType?: string;
  /** The card of the MOTO authorization (default 4111111111111111). */
  card?: string;
}

/**
 * A MOTO authorization over HTTP (the real flow) when MOTO can produce the wanted transaction: a
 * CARD payment, SUCCESS (or FAILED with the declined test card). Other states, wallets, physical
 * sales and payouts are seeded through the repositories.
 */
export async function seedAuthorized(t: TestRuntime, m: TestMerchant, o: SeedOptions = {}): Promise<Transaction> {
  const viaMoto =
    (o.flow ?? 'MOTO') === 'MOTO' && (o.paymentMethodType ?? 'CARD') === 'CARD' && (o.state ?? 'SUCCESS') !== 'PENDING' && o.state !== 'PROCESSING';
  if (viaMoto) return motoAuthorized(t, m, o);
  return insertAuthorized(t, m, o);
}

export const DECLINED_CARD = '4000000000000002';

async function motoAuthorized(t: TestRuntime, m: TestMerchant, o: SeedOptions): Promise<Transaction> {
  const number = o.state === 'FAILED' ? DECLINED_CARD : (o.card ?? '4111111111111111');
  const res = await m.api.post(`${API}/moto`, {
    transaction: {
      pointOfSaleId: m.onlinePointOfSaleId,
      amount: o.amount ?? 1000,
      currency: 'DKK',
      reference: `moto-${newId().slice(-12)}`,
      instantCapture: 'OFF',
    },
    card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
  });
  assert.equal(res.status, 200, `MOTO (precondition): ${res.text}`);
  assert.equal(res.body.transaction.state, o.state ?? 'SUCCESS', `MOTO (precondition): ${res.text}`);
  return (await t.runtime.store.transactions.findById(m.accountId, res.body.transaction.id))!;
}

async function insertAuthorized(t: TestRuntime, m: TestMerchant, o: SeedOptions): Promise<Transaction> {
  const amount = o.amount ?? 1000;
  const state = o.state ?? 'SUCCESS';
  const flow = o.flow ?? 'MOTO';
  const type = o.type ?? (flow === 'MOTO' ? 'MOTO' : 'PAYMENT');
  const now = t.runtime.clock.nowIso();
  const sale = flow === 'SALE';
  const authorized = state === 'SUCCESS' ? amount : 0;
  const tx: NewTransaction = {
    id: newTransactionId(),
    accountId: m.accountId,
    pointOfSaleId: sale ? m.physicalPointOfSaleId! : m.onlinePointOfSaleId,
    terminalId: sale ? m.terminalIds[0]! : null,
    sessionId: null,
    subscriptionId: null,
    billingAgreementChargeId: null,
    paymentMethodId: null,
    paymentMethodType: o.paymentMethodType ?? 'CARD',
    paymentMethodSubType: (o.paymentMethodType ?? 'CARD') === 'CARD' ? 'Visa' : null,
    paymentMethodExpiry: null,
    paymentMethodDisplayText: null,
    paymentMethodHolderName: null,
    customerId: null,
    type,
    flow,
    state,
    errorCode: state === 'FAILED' ? 'DECLINED_BY_ISSUER_OR_SCHEME' : null,
    externalStatusCodes: null,
    scaMode: null,
    amount,
    fee: 0,
    currency: 'DKK',
    instantCapture: 'OFF',
    notificationUrl: null,
    reference: `seed-${newId().slice(-12)}`,
    textOnStatement: null,
    descriptor: null,
    exemptions: null,
    attributes: null,
    clientIp: null,
    clientCountry: null,
    acquirer: 'sandbox',
    acquirerReference: null,
    authorizedAmount: type === 'PAYOUT' ? 0 : authorized,
    capturedAmount: sale && state === 'SUCCESS' && type !== 'PAYOUT' ? amount : 0,
    paidOutAmount: type === 'PAYOUT' && state === 'SUCCESS' ? amount : 0,
    createdAt: now,
    updatedAt: now,
    finalizedAt: state === 'SUCCESS' || state === 'FAILED' ? now : null,
  };
  await t.runtime.store.transactions.insert([tx]);
  if (state === 'SUCCESS' || state === 'FAILED') {
    const op: Operation = {
      id: newId(),
      accountId: m.accountId,
      transactionId: tx.id,
      pointOfSaleId: tx.pointOfSaleId,
      type: type === 'PAYOUT' ? 'PAYOUT' : sale ? 'SALE' : 'AUTHORIZATION',
      state: state === 'SUCCESS' ? 'SUCCESS' : 'FAILED',
      amount,
      referenceOperationId: null,
      errorCode: tx.errorCode,
      externalStatusCodes: null,
      acquirerReference: null,
      createdAt: now,
      finalizedAt: now,
    };
    await t.runtime.store.transactions.insertOperations([op]);
  }
  return (await t.runtime.store.transactions.findById(m.accountId, tx.id))!;
}

export const capture = (m: TestMerchant, id: string, amount: number, extra: Record<string, unknown> = {}, idempotencyKey?: string) =>
  m.api.post(`${API}/transactions/${id}/capture`, { amount, ...extra }, idempotencyKey ? { idempotencyKey } : {});
export const refund = (m: TestMerchant, id: string, amount: number) => m.api.post(`${API}/transactions/${id}/refund`, { amount });
export const voidTx = (m: TestMerchant, id: string, amount: number) => m.api.post(`${API}/transactions/${id}/void`, { amount });
export const renew = (m: TestMerchant, id: string) => m.api.post(`${API}/transactions/${id}/renew`);

export async function detail(m: TestMerchant, id: string) {
  const res = await m.api.get(`${API}/transactions/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body as {
    transaction: Record<string, unknown>;
    aggregates: { authorized: number; captured: number; refunded: number; voided: number; remaining: number; paidOut: number };
    operations: Array<{
      id: string;
      type: string;
      state: string;
      amount: number;
      referenceTransactionOperationId: string | null;
      errorCode: string | null;
      finalizedAt: string | null;
    }>;
  };
}

/** HTTP 200 with success:true; returns the body. */
export function ok(res: TestResponse, what = 'operation') {
  assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.body.success, true, `${what} must succeed: ${res.text}`);
  return res.body;
}

/** HTTP 200 with success:false and errorCode {code, message}; returns the body. */
export function refusedWith(res: TestResponse, code: string, what = 'operation') {
  assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.body.success, false, `${what} must fail: ${res.text}`);
  const errorCode = res.body.errorCode ?? res.body.operations?.[0]?.errorCode;
  assert.equal(errorCode?.code, code, `${what}: ${res.text}`);
  assert.equal(typeof errorCode?.message, 'string');
  // A refusal or a decline is FAILED (INTERFACE §11.1); an acquirer timeout leaves the operation PROCESSING (not a decline).
  const expected = code === 'ACQUIRER_TIMEOUT' ? 'PROCESSING' : 'FAILED';
  assert.equal(res.body.state ?? res.body.operations?.[0]?.state, expected, `${what}: state of a ${code} answer`);
  return res.body;
}

/** Reserved amounts and settled aggregates as stored. */
export async function stored(t: TestRuntime, id: string) {
  const a = await t.runtime.store.transactions.reservationAmounts(id);
  assert.ok(a);
  return a;
}

export const sumOf = (ops: Array<{ type: string; state: string; amount: number }>, type: string) =>
  ops.filter((o) => o.type === type && o.state === 'SUCCESS').reduce((s, o) => s + o.amount, 0);

/** Polls `probe` until it returns a value other than null/undefined (the job runner works in the background). */
export async function eventually<T>(probe: () => Promise<T | null | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
