/** Helpers of the billing suites: a merchant on a non-expiring API key, stored cards, plans, agreements, clock moves. */
import assert from 'node:assert/strict';
import { API, startTestRuntime, type TestClient, type TestMerchant, type TestRuntime } from '../support/harness.js';
import type { StoreKind } from '../support/stores.js';
import { storedCard } from '../online/cit-flows.js';
import { CARDS, waitFor } from '../online/helpers.js';
import { storedEvents } from '../support/events.js';

export { CARDS, waitFor };
export const LATER_MIT_DECLINED = '4000000000000341';
export const DAILY = { period: 'DAY', frequency: 1 } as const;
export const MONTHLY = { period: 'MONTH', frequency: 1 } as const;
export const DAY_MS = 86_400_000;

export function ok(res: { status: number; text: string; body: any }, what: string) {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

/**
 * A merchant whose client uses an API key: access tokens expire on the service clock (8 h), and
 * these suites move it by days and years.
 */
export async function billingMerchant(t: TestRuntime): Promise<TestMerchant> {
  const m = await t.createMerchant({ physical: false });
  const { key } = ok(await m.api.post(`${API}/management/api-keys`, { name: 'billing-tests' }), 'api key');
  return { ...m, api: t.client(key) };
}

/** A billing suite's own runtime (on `kind`) and its billing merchant; the caller closes `t`. */
export async function startBillingSuite(kind: StoreKind): Promise<{ t: TestRuntime; m: TestMerchant }> {
  const t = await startTestRuntime(kind);
  return { t, m: await billingMerchant(t) };
}

/** An ACTIVE SCHEDULED subscription on a stored card (CIT session paid in the sandbox). */
export async function subscribe(t: TestRuntime, m: TestMerchant, number: string = CARDS.VISA) {
  const customerId = `cust-${Math.random().toString(36).slice(2, 10)}`;
  return storedCard(t, m, customerId, number, { type: 'SCHEDULED', interval: DAILY });
}

export async function createPlan(api: TestClient, overrides: Record<string, unknown> = {}) {
  const body = { name: 'Daily plan', amount: 4900, currency: 'DKK', maxAttempts: 3, interval: DAILY, ...overrides };
  return ok(await api.post(`${API}/subscriptions/billing/plans`, body), 'create plan').billingPlan;
}

export async function createAgreement(api: TestClient, subscriptionId: string, billingPlanId: string, extra: Record<string, unknown> = {}) {
  return ok(await api.post(`${API}/subscriptions/billing/agreements`, { subscriptionId, billingPlanId, ...extra }), 'create agreement').billingAgreement;
}

export async function getAgreement(api: TestClient, id: string) {
  return ok(await api.get(`${API}/subscriptions/billing/agreements/${id}`), 'get agreement').billingAgreement;
}

/** The agreement's charges, newest first. */
export async function chargesOf(api: TestClient, agreementId: string): Promise<any[]> {
  const body = ok(await api.get(`${API}/subscriptions/billing/charges?billingAgreementId=${agreementId}&perPage=500`), 'list charges');
  return body.items.map((i: any) => i.billingAgreementCharge);
}

export async function now(t: TestRuntime): Promise<number> {
  return Date.parse(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
}

/** Moves the service clock to `ms` (never backwards). */
export async function moveClockTo(t: TestRuntime, ms: number): Promise<void> {
  ok(await t.operator.post('/sandbox/v1/clock', { now: new Date(ms).toISOString() }), 'move clock');
}

/** Waits until the charge matches `done` (polling the charge list of its agreement). */
export function waitForCharge(api: TestClient, agreementId: string, done: (charges: any[]) => boolean, what: string, timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const charges = await chargesOf(api, agreementId);
      return done(charges) ? charges : null;
    },
    what,
    timeoutMs,
  );
}

/** Events of one account in the outbox, oldest first. */
export async function eventsOf(t: TestRuntime, accountId: string): Promise<Array<{ event: string; data: any }>> {
  const all = await storedEvents(t.runtime.store);
  return all.filter((e) => e.accountId === accountId).map((e) => ({ event: e.event, data: e.data as any }));
}

export const utcDate = (ms: number | string): string => new Date(ms).toISOString().slice(0, 10);
export const startOfDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
