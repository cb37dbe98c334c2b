/**
 * A merchant ready for merchant-initiated payments, made the way an integrator makes one: an
 * account with an API key and an online point of sale whose approved domain is the loopback
 * address (the callback receiver's), then per subscription a CIT session with
 * `subscription: UNSCHEDULED` paid with a test Visa through the sandbox complete endpoint — so
 * the runtime given must run in sandbox mode. Everything through the real HTTP app (inject).
 */
import type { Runtime } from '../../src/runtime.js';

export const API = '/public/api/v1';
/** Entries of one POST /mit/batch in the benches. */
export const MIT_BATCH_SIZE = 500;

/** A MIT body on one of the subscriptions (`{item}`), its callback to `notificationUrl` (with `{seq}`). */
export function mitBody(notificationUrl: string, reference = 'bench-{seq}'): string {
  return JSON.stringify({ subscriptionId: '{item}', amount: 1000, currency: 'DKK', reference, notificationUrl });
}

/** A batch of MIT_BATCH_SIZE entries over the merchant's subscriptions (`{seq}`: the request's number). */
export function mitBatchBody(merchant: Pick<BenchMerchant, 'subscriptionIds'>, notificationUrl: string): string {
  const entries = Array.from({ length: MIT_BATCH_SIZE }, (_, i) => ({
    subscriptionId: merchant.subscriptionIds[i % merchant.subscriptionIds.length]!,
    amount: 1000 + i,
    currency: 'DKK',
    reference: `bench-{seq}-${i}`,
    notificationUrl: notificationUrl.replace('{seq}', `{seq}-${i}`),
  }));
  return JSON.stringify({ transactions: entries });
}
/** Callbacks go to the receiver on 127.0.0.1: the point of sale's approved domain. */
export const CALLBACK_DOMAIN = '127.0.0.1';
const VISA = { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Bench Holder' };

export interface BenchMerchant {
  accountId: string;
  apiKey: string;
  pointOfSaleId: string;
  /** ACTIVE subscriptions, each with its stored card. */
  subscriptionIds: string[];
}

/** A request through the app; the parsed body of a 200, else an error naming what failed. */
export async function call<T = unknown>(runtime: Runtime, method: 'GET' | 'POST', url: string, token: string, body?: unknown): Promise<T> {
  const res = await runtime.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: HTTP ${res.statusCode} ${res.body.slice(0, 500)}`);
  return JSON.parse(res.body) as T;
}

/** An account's acquirer agreement, as `PUT /partner/accounts/{id}/acquirer-agreement` takes it. */
export interface BenchAgreement {
  acquirer: 'sandbox' | 'clearhaus';
  apiKey?: string;
  mcc?: string;
}

export interface MitMerchantOptions {
  /**
   * Put through the partner API (operator key) before the first CIT, so that the subscriptions'
   * cards are stored where the account's payments go (a Clearhaus card with its series).
   */
  agreement?: BenchAgreement;
  /** CIT sessions made at once (default 1, one after the other). */
  concurrency?: number;
}

/** PUT the account's acquirer agreement through the app (operator key). */
export async function putAgreement(runtime: Runtime, accountId: string, agreement: BenchAgreement): Promise<void> {
  const url = `${API}/partner/accounts/${accountId}/acquirer-agreement`;
  const res = await runtime.app.inject({
    method: 'PUT',
    url,
    headers: { authorization: `Bearer ${runtime.operatorKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify(agreement),
  });
  if (res.statusCode !== 200) throw new Error(`PUT ${url}: HTTP ${res.statusCode} ${res.body.slice(0, 500)}`);
}

export async function createMitMerchant(runtime: Runtime, subscriptions: number, options: MitMerchantOptions = {}): Promise<BenchMerchant> {
  const { accounts, pointsOfSale } = runtime.services;
  const account = await accounts.create({
    name: 'Bench MIT merchant',
    email: 'mit@shop.example.com',
    currencyCode: 'DKK',
    timezone: 'UTC',
    domain: CALLBACK_DOMAIN,
  });
  await accounts.activate(account.id);
  const pos = await pointsOfSale.create(account.id, {
    name: 'Web shop',
    domain: CALLBACK_DOMAIN,
    webhookAuthentication: 'Bearer bench-callbacks',
    type: 'ONLINE',
  });
  const { key } = await accounts.createApiKey(account.id, 'bench');
  // The measured service runs with PAYMENTS_SANDBOX=0 (benchConfig): without an agreement its
  // payments would fail MISSING_ACQUIRER_AGREEMENT (INTERFACE §12.1). Default: the simulator's.
  await putAgreement(runtime, account.id, options.agreement ?? { acquirer: 'sandbox' });
  const subscriptionIds: string[] = [];
  const subscribe = async (i: number) => {
    const init = await call<{ session: { id: string } }>(runtime, 'POST', `${API}/cit`, key, {
      pointOfSaleId: pos.id,
      amount: 100,
      currency: 'DKK',
      reference: `bench-cit-${i}`,
      customerId: `bench-customer-${i}`,
      subscription: { type: 'UNSCHEDULED' },
    });
    await call(runtime, 'POST', `/sandbox/v1/sessions/${init.session.id}/complete`, runtime.operatorKey, { card: VISA });
    let session: { state: string; subscriptionId: string | null } | null = null;
    for (let tries = 0; tries < 100; tries++) {
      session = (await call<{ session: { state: string; subscriptionId: string | null } }>(runtime, 'GET', `${API}/sessions/${init.session.id}`, key)).session;
      if (session.state === 'COMPLETED') break;
      // Anything the payment left to its jobs.
      await runtime.runner.drain();
    }
    if (session?.state !== 'COMPLETED' || !session.subscriptionId)
      throw new Error(`CIT session ${init.session.id}: ${session?.state ?? 'missing'}, no subscription`);
    const { subscription } = await call<{ subscription: { state: string } }>(runtime, 'GET', `${API}/subscriptions/${session.subscriptionId}`, key);
    if (subscription.state !== 'ACTIVE') throw new Error(`subscription ${session.subscriptionId} is ${subscription.state}, not ACTIVE`);
    subscriptionIds.push(session.subscriptionId);
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, subscriptions)) }, async () => {
      while (next < subscriptions) await subscribe(next++);
    }),
  );
  return { accountId: account.id, apiKey: key, pointOfSaleId: pos.id, subscriptionIds };
}
