/** Shared bits of the terminal tests: sale bodies, taps, a local callback receiver, polling. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';

export const CARDS = {
  VISA: '4111111111111111',
  MASTERCARD: '5555555555554444',
  DECLINED: '4000000000000002',
  INSUFFICIENT_FUNDS: '4000000000009995',
  TIMEOUT_THEN_APPROVED: '4000000000000119',
} as const;

export const card = (number: string, overrides: Record<string, unknown> = {}) => ({
  number,
  expiryMonth: 12,
  expiryYear: 2030,
  cvc: '123',
  holderName: 'Test Holder',
  ...overrides,
});

export interface SaleOptions {
  amount?: number;
  type?: 'PAYMENT' | 'PAYOUT';
  terminalId?: string;
  pointOfSaleId?: string;
  notificationUrl?: string;
  customerId?: string;
}

export function saleBody(m: TestMerchant, o: SaleOptions = {}) {
  const transaction: Record<string, unknown> = {
    pointOfSaleId: o.pointOfSaleId ?? m.physicalPointOfSaleId,
    amount: o.amount ?? 2500,
    currency: 'DKK',
    reference: 'till-1',
  };
  if (o.type) transaction.type = o.type;
  if (o.notificationUrl) transaction.notificationUrl = o.notificationUrl;
  if (o.customerId) transaction.customerId = o.customerId;
  return o.terminalId ? { terminal: { id: o.terminalId }, transaction } : { transaction };
}

export const sale = (m: TestMerchant, o: SaleOptions = {}, idempotencyKey?: string): Promise<TestResponse> =>
  m.api.post(`${API}/sale`, saleBody(m, o), idempotencyKey ? { idempotencyKey } : {});

export const abort = (m: TestMerchant, id: string, idempotencyKey?: string): Promise<TestResponse> =>
  m.api.post(`${API}/transactions/${id}/abort`, undefined, idempotencyKey ? { idempotencyKey } : {});

export const tap = (t: TestRuntime, terminalId: string, number: string = CARDS.VISA): Promise<TestResponse> =>
  t.operator.post(`/sandbox/v1/terminals/${terminalId}/tap`, { card: card(number) });

export async function detail(m: TestMerchant, id: string) {
  const res = await m.api.get(`${API}/transactions/${id}`);
  if (res.status !== 200) throw new Error(`GET transaction: ${res.status} ${res.text}`);
  return res.body as { transaction: any; aggregates: any; operations: any[] };
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until the transaction's state satisfies `states`; returns the record. */
export function waitForState(m: TestMerchant, id: string, states: string[], timeoutMs?: number) {
  return waitFor(
    async () => {
      const tx = (await detail(m, id)).transaction;
      return states.includes(tx.state) ? tx : null;
    },
    `transaction ${id} to be ${states.join('|')}`,
    timeoutMs,
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function advanceClock(t: TestRuntime, seconds: number): Promise<void> {
  const res = await t.operator.post('/sandbox/v1/clock', { advanceSeconds: seconds });
  if (res.status !== 200) throw new Error(`clock: ${res.status} ${res.text}`);
}

export interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A local callback receiver on localhost (the merchants' approved domain in the harness). */
export async function startReceiver() {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      hits.push({ path: new URL(req.url ?? '/', 'http://localhost').pathname, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  let counter = 0;
  return {
    hits,
    newUrl: (label = 'sale') => `http://localhost:${port}/${label}/${++counter}`,
    at: (url: string) => hits.filter((h) => h.path === new URL(url).pathname),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
