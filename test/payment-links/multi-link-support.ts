/** Helpers of the multi-link tests: create links through the public API, visit them as a customer would. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { API, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { ok } from './support.js';

/** The record fields of INTERFACE §11.3, sorted. */
export const MULTI_LINK_KEYS = [
  'ageVerification',
  'allowedPaymentMethods',
  'amount',
  'attributes',
  'createdAt',
  'currency',
  'dynamicAmount',
  'failureUrl',
  'id',
  'instantCapture',
  'notificationUrl',
  'orderLines',
  'pointOfSaleId',
  'reportExpired',
  'reportFailure',
  'retryUrl',
  'returnUrl',
  'scaMode',
  'state',
  'subscription',
  'successUrl',
  'textOnStatement',
  'timeout',
];

export const TRANSACTION_ID = /^[0-9A-HJKMNP-TV-Z]{11}$/;

export const ORDER_LINE = { description: 'Coffee beans 1 kg', imageUrl: null, quantity: 2, unitPrice: 750, totalAmount: 1500, type: 'PHYSICAL' };

export function multiLinkBody(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  return { pointOfSaleId: m.onlinePointOfSaleId, amount: 1500, currency: 'DKK', ...overrides };
}

export const newKey = () => `ml-${randomBytes(8).toString('hex')}`;

/** POST /multi-links that must succeed: `{multiLink, url, qrUrl}`. */
export async function createMultiLink(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  return ok(await m.api.post(`${API}/multi-links`, multiLinkBody(m, overrides), { idempotencyKey: newKey() }), 'POST /multi-links');
}

export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** One customer visit of a link's url (no credential, redirects not followed). */
export function visit(t: TestRuntime, url: string): Promise<TestResponse> {
  return t.client(null).get(pathOf(url));
}

/** A visit that must start a session: 303 to its payment window; returns the window URL and the session (read back). */
export async function visitStarts(t: TestRuntime, m: TestMerchant, url: string) {
  const res = await visit(t, url);
  assert.equal(res.status, 303, `visit ${url}: HTTP ${res.status} ${res.text}`);
  const location = String(res.headers.location);
  const key = /\/pay\/(pk_[A-Za-z0-9_-]+)$/.exec(location)?.[1];
  assert.ok(key, `Location ${location} is a payment window`);
  const stored = await t.runtime.store.sessions.findByClientKey(key);
  assert.ok(stored, 'the session of the window exists');
  const session = ok(await m.api.get(`${API}/sessions/${stored.id}`), 'GET /sessions/{id}').session;
  return { res, location, session };
}

/** A second ONLINE point of sale of the merchant, with the given hostedConfiguration. */
export async function onlinePointOfSale(m: TestMerchant, hostedConfiguration: Record<string, unknown> = {}) {
  const body = ok(
    await m.api.post(`${API}/management/point-of-sales`, {
      name: 'Second shop',
      domain: 'localhost',
      webhookAuthentication: 'Bearer second',
      type: 'ONLINE',
      hostedConfiguration,
    }),
    'create point of sale',
  );
  return body.pointOfSale.id as string;
}
