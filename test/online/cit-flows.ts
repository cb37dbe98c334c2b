/** Helpers of the cit-/mit-/subscriptions- tests: sessions through the public API and the sandbox control. */
import assert from 'node:assert/strict';
import { API, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { card, CARDS, waitFor } from './helpers.js';

export const LATER_MIT_DECLINED = '4000000000000341';

export function citBody(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  return { pointOfSaleId: m.onlinePointOfSaleId, amount: 2500, currency: 'DKK', reference: 'order-cit', ...overrides };
}

export function complete(t: TestRuntime, sessionId: string, body: Record<string, unknown>): Promise<TestResponse> {
  return t.operator.post(`/sandbox/v1/sessions/${sessionId}/complete`, body);
}

export function ok(res: TestResponse, what: string) {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

/** POST /cit with a subscription, paid with `number` in the sandbox; waits for COMPLETED. */
export async function storedCard(
  t: TestRuntime,
  m: TestMerchant,
  customerId: string,
  number: string = CARDS.VISA,
  subscription: Record<string, unknown> = { type: 'UNSCHEDULED' },
) {
  const init = ok(await m.api.post(`${API}/cit`, citBody(m, { amount: 100, customerId, subscription })), 'POST /cit');
  ok(await complete(t, init.session.id, { card: card(number) }), 'complete');
  const session = await waitFor(async () => {
    const s = (await m.api.get(`${API}/sessions/${init.session.id}`)).body?.session;
    return s?.state === 'COMPLETED' ? s : null;
  }, 'session COMPLETED');
  return {
    sessionId: session.id as string,
    subscriptionId: session.subscriptionId as string,
    paymentMethodId: session.paymentMethodId as string,
    transactionId: session.transactionId as string,
  };
}

/** Polls GET /transactions/{id} until a final state. */
export function finalTransaction(m: TestMerchant, id: string) {
  return waitFor(async () => {
    const tx = (await m.api.get(`${API}/transactions/${id}`)).body?.transaction;
    return tx && (tx.state === 'SUCCESS' || tx.state === 'FAILED') ? tx : null;
  }, `transaction ${id} final`);
}

export function mitBody(subscriptionId: string, notificationUrl: string, overrides: Record<string, unknown> = {}) {
  return { subscriptionId, amount: 1000, currency: 'DKK', reference: `mit-${Math.random().toString(36).slice(2, 8)}`, notificationUrl, ...overrides };
}

/** The form the payment window posts (application/x-www-form-urlencoded). */
export function postForm(t: TestRuntime, url: string, fields: Record<string, string>) {
  const path = new URL(url).pathname;
  return t.client(null).request('POST', path, { raw: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });
}

export const formCard = (number: string) => ({ number, expiryMonth: '12', expiryYear: '2030', cvc: '123', holderName: 'Test Holder' });
