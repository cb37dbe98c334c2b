/** Helpers of the payment-link tests: create links through the public API, read them, pay them. */
import assert from 'node:assert/strict';
import { API, type TestMerchant, type TestResponse } from '../support/harness.js';

export const LINK_KEYS = [
  'amount',
  'createdAt',
  'currency',
  'customerId',
  'expiresAt',
  'id',
  'pointOfSaleId',
  'reference',
  'sessionId',
  'state',
  'stateChangedAt',
  'transactionId',
  'url',
];

export function linkBody(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  return { pointOfSaleId: m.onlinePointOfSaleId, amount: 4200, currency: 'DKK', reference: 'invoice-1', ...overrides };
}

export function ok(res: TestResponse, what: string) {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

export async function createLink(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  return ok(await m.api.post(`${API}/payment-links`, linkBody(m, overrides)), 'POST /payment-links').paymentLink;
}

export async function getLink(m: TestMerchant, id: string) {
  return ok(await m.api.get(`${API}/payment-links/${id}`), 'GET /payment-links/{id}').paymentLink;
}
