/**
 * A service whose merchants pay through Clearhaus — the real connector pointed at the local fake
 * (test/support/clearhaus-fake.ts) and signing with the docs' example key — and a merchant with a
 * Clearhaus agreement.
 */
import type { ThreeDSServer } from '../../src/connectors/threeds/three-d-secure.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../src/config.js';
import { ClearhausAcquirer } from '../../src/connectors/clearhaus/connector.js';
import { SigningKey } from '../../src/connectors/clearhaus/signing.js';
import { createLogger } from '../../src/logger.js';
import { basicAuthHeader, type ClearhausFake, CLEARHAUS_DOCS_KEY, type RecordedRequest, startClearhausFake } from '../support/clearhaus-fake.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import type { StoreKind } from '../support/stores.js';
import { postForm } from '../online/cit-flows.js';
import { ok, putAgreement } from './support.js';

export interface ClearhausSetup {
  t: TestRuntime;
  fake: ClearhausFake;
  connector: ClearhausAcquirer;
  /** A merchant whose agreement names Clearhaus with `apiKey`. */
  merchant(options?: { capabilities?: { moto?: boolean; syncPayout?: boolean } }): Promise<TestMerchant & { apiKey: string }>;
  close(): Promise<void>;
}

/** The connector's logger as src/runtime.ts makes it. */
const connectorLogger = (logger: ReturnType<typeof createLogger>) => ({
  warn: (obj: Record<string, unknown>, msg: string) => logger.warn({ ...obj, acquirer: 'clearhaus' }, msg),
});

export async function startClearhaus(
  kind: StoreKind,
  options: {
    timeoutMs?: number;
    maxInFlight?: number;
    config?: Partial<Config>;
    logDestination?: { write(line: string): void };
    threeDSServer?: ThreeDSServer;
  } = {},
): Promise<ClearhausSetup> {
  const apiKeys = Array.from({ length: 8 }, () => randomUUID());
  const fake = await startClearhausFake({ merchants: apiKeys.map((apiKey) => ({ apiKey, mcc: '5734' })) });
  const connector = new ClearhausAcquirer({
    baseUrl: fake.url,
    signingKeyId: CLEARHAUS_DOCS_KEY.id,
    signingKey: SigningKey.fromPem(CLEARHAUS_DOCS_KEY.privateKeyPem),
    timeoutMs: options.timeoutMs ?? 2_000,
    maxInFlight: options.maxInFlight ?? 32,
    // As the deployment's connector (src/runtime.ts): its warnings go to the service log, which a test may capture.
    ...(options.logDestination ? { logger: connectorLogger(createLogger(options.config?.logLevel ?? 'silent', options.logDestination as never)) } : {}),
  });
  const t = await startTestRuntime(kind, options.config ?? {}, {
    clearhaus: connector,
    ...(options.threeDSServer ? { threeDSServer: options.threeDSServer } : {}),
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
  });
  let next = 0;
  return {
    t,
    fake,
    connector,
    async merchant(o = {}) {
      const apiKey = apiKeys[next++];
      if (!apiKey) throw new Error('out of fake Clearhaus merchants');
      const m = await t.createMerchant(o);
      ok(await putAgreement(t.operator, m.accountId, { acquirer: 'clearhaus', apiKey, mcc: '5734', textOnStatement: 'Shop Example' }), 'PUT clearhaus');
      return { ...m, apiKey };
    },
    async close() {
      await t.close();
      await fake.close();
    },
  };
}

// ---- Helpers of the clearhaus-*.test.ts suites ------------------------------------------------

/** A fresh Luhn-valid 16-digit PAN starting with `prefix` (no other test's card outcome applies to it). */
export function freshPan(prefix = '4'): string {
  const digits = prefix.split('').map(Number);
  while (digits.length < 15) digits.push(Math.floor(Math.random() * 10));
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    // From the right, the check digit excluded: every second digit (starting with the last) doubled.
    let d = digits[14 - i]!;
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return [...digits, (10 - (sum % 10)) % 10].join('');
}

/** An expiry year Clearhaus (and the fake, on the wall clock) takes as valid. */
export const expiryYear = (): number => new Date().getUTCFullYear() + 3;

/** A card body for MOTO and the sandbox `complete` endpoint. */
export const cardOf = (number: string, cvc = '123') => ({ number, expiryMonth: 12, expiryYear: expiryYear(), cvc, holderName: 'Test Holder' });

/**
 * What Clearhaus demands of every request (clearhaus.md §1.3, §1.4, §4.4), as the fake saw it:
 * HTTP Basic with the merchant's key and an empty password, a valid RS256-hex signature over the
 * exact body, a form-encoded body.
 */
export function assertWellFormed(request: RecordedRequest, apiKey: string): void {
  const where = `${request.method} ${request.path}`;
  assert.equal(request.headers.authorization, basicAuthHeader(apiKey), `${where}: HTTP Basic with the merchant's API key and an empty password`);
  assert.equal(request.merchantApiKey, apiKey, where);
  assert.equal(request.signature, 'valid', `${where}: signed`);
  if (request.rawBody.length > 0) {
    assert.match(String(request.headers['content-type']), /^application\/x-www-form-urlencoded/, `${where}: form-encoded`);
    assert.doesNotMatch(request.body, /^\s*[[{]/, `${where}: not JSON`);
    assert.equal(new URLSearchParams(request.body).toString().length > 0, true, where);
  }
  assert.equal(request.processed, true, `${where}: the fake carried it out (${JSON.stringify(request.reply?.body)})`);
}

/** The authorization requests whose `reference` is `transactionId`. */
export const authorizationsOf = (fake: ClearhausFake, transactionId: string): RecordedRequest[] =>
  fake.requestsTo('/authorizations').filter((r) => r.form.reference === transactionId);

/** The Clearhaus id the fake gave the (last) authorization of `transactionId`. */
export function clearhausIdOf(fake: ClearhausFake, transactionId: string): string {
  const request = authorizationsOf(fake, transactionId).at(-1);
  const id = request?.reply?.body?.id;
  assert.equal(typeof id, 'string', `an authorization of ${transactionId} with an id`);
  return id as string;
}

/** A client of `m` on a non-expiring API key (for suites that move the service clock by days). */
export async function withApiKey<M extends TestMerchant>(t: TestRuntime, m: M): Promise<M> {
  const res = await m.api.post('/public/api/v1/management/api-keys', { name: `clearhaus-${randomUUID().slice(0, 8)}` });
  assert.equal(res.status, 200, res.text);
  return { ...m, api: t.client(res.body.key as string) };
}

/**
 * A card stored for a subscription by a customer paying through the payment window (its first
 * authorization through Clearhaus, starting the card's series): the completed session.
 */
export async function subscribeThroughWindow(
  t: TestRuntime,
  m: TestMerchant,
  pan: string,
  customerId: string,
  subscription: Record<string, unknown> = { type: 'UNSCHEDULED' },
): Promise<{ id: string; state: string; subscriptionId: string | null; paymentMethodId: string | null }> {
  const init = ok(
    await m.api.post('/public/api/v1/cit', { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency: 'DKK', customerId, subscription }),
    'POST /cit',
  );
  const form = { number: pan, expiryMonth: '12', expiryYear: String(expiryYear()), cvc: '123', holderName: 'Test Holder' };
  assert.ok([200, 303].includes((await postForm(t, init.paymentWindowUrl, form)).status));
  const session = ok(await m.api.get(`/public/api/v1/sessions/${init.session.id}`), 'session').session;
  assert.equal(session.state, 'COMPLETED');
  return session;
}
