/** Shared bits of the online tests: card bodies, a local callback receiver, clock moves. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import type { StoreKind } from '../support/stores.js';

export const CARDS = {
  VISA: '4111111111111111',
  MASTERCARD: '5555555555554444',
  DECLINED: '4000000000000002',
  INSUFFICIENT_FUNDS: '4000000000009995',
  TIMEOUT_THEN_APPROVED: '4000000000000119',
  CAPTURE_DECLINED: '4000000000000259',
} as const;
export const TEST_PANS = Object.values(CARDS);

export const card = (number: string, overrides: Record<string, unknown> = {}) => ({
  number,
  expiryMonth: 12,
  expiryYear: 2030,
  cvc: '123',
  holderName: 'Test Holder',
  ...overrides,
});

export function motoBody(
  m: TestMerchant,
  options: { amount?: number; number?: string; instantCapture?: string; notificationUrl?: string; customerId?: string; card?: Record<string, unknown> } = {},
) {
  const transaction: Record<string, unknown> = {
    pointOfSaleId: m.onlinePointOfSaleId,
    amount: options.amount ?? 1000,
    currency: 'DKK',
    reference: 'order-1',
    instantCapture: options.instantCapture ?? 'OFF',
  };
  if (options.notificationUrl) transaction.notificationUrl = options.notificationUrl;
  if (options.customerId) transaction.customerId = options.customerId;
  return { transaction, card: card(options.number ?? CARDS.VISA, options.card) };
}

export interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
  status: number;
}

/** A local HTTP receiver on localhost (both address families); answers scripted statuses. */
export async function startReceiver() {
  const hits: Hit[] = [];
  const scripted = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const status = scripted.get(path)?.shift() ?? 200;
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      hits.push({ path, headers: req.headers, text, body, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  let counter = 0;
  return {
    hits,
    port,
    newPath: (label: string) => `/${label}/${++counter}`,
    url: (path: string) => `http://localhost:${port}${path}`,
    respond: (path: string, statuses: number[]) => scripted.set(path, [...statuses]),
    at: (path: string) => hits.filter((h) => h.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type CallbackReceiver = Awaited<ReturnType<typeof startReceiver>>;

/** What most online suites run against: a test runtime, a merchant on it and a callback receiver. */
export interface OnlineSuite {
  t: TestRuntime;
  m: TestMerchant;
  rx: CallbackReceiver;
}

/** Starts an online suite's runtime (on `kind`), merchant and receiver; `stopOnlineSuite` undoes it. */
export async function startOnlineSuite(kind: StoreKind): Promise<OnlineSuite> {
  const t = await startTestRuntime(kind);
  const m = await t.createMerchant();
  const rx = await startReceiver();
  return { t, m, rx };
}

export async function stopOnlineSuite({ t, rx }: Pick<OnlineSuite, 't' | 'rx'>): Promise<void> {
  await rx.close();
  await t.close();
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined> | T | null | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function advanceClock(t: TestRuntime, seconds: number): Promise<void> {
  const res = await t.operator.post('/sandbox/v1/clock', { advanceSeconds: seconds });
  if (res.status !== 200) throw new Error(`clock: ${res.status} ${res.text}`);
}

/** A stored card for payouts: through MOTO (which stores the card it authorizes). */
export async function storedCardId(m: TestMerchant, number: string = CARDS.VISA, customerId = 'cust-1'): Promise<string> {
  const res = await m.api.post(`${API}/moto`, motoBody(m, { number, customerId }));
  if (res.status !== 200) throw new Error(`moto: ${res.status} ${res.text}`);
  return res.body.transaction.paymentMethodId as string;
}
