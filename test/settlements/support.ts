/** Shared bits of the settlement suites: money moved through the public API, runs, walks, decimals. */
import assert from 'node:assert/strict';
import { fromDecimalString } from '../../src/shared/money.js';
import { API, type TestClient, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { CARDS, sale, tap, waitForState } from '../terminal/support.js';

export const DECIMAL_2 = /^-?\d+\.\d{2}$/;
export const FEE_TYPES = ['ACQUIRER_FEE', 'INTERCHANGE_FEE', 'SCHEME_FEE'];

/** A MOTO authorization (no capture) over HTTP. */
export async function authorize(m: TestMerchant, amount: number, currency = 'DKK', reference?: string): Promise<string> {
  const res = await m.api.post(`${API}/moto`, {
    transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount, currency, instantCapture: 'OFF', ...(reference ? { reference } : {}) },
    card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
  });
  assert.equal(res.status, 200, `MOTO: ${res.text}`);
  assert.equal(res.body.transaction.state, 'SUCCESS', `MOTO: ${res.text}`);
  return res.body.transaction.id as string;
}

export async function capture(m: TestMerchant, id: string, amount: number): Promise<void> {
  const res = await m.api.post(`${API}/transactions/${id}/capture`, { amount });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.success, true, `capture: ${res.text}`);
}

export async function refund(m: TestMerchant, id: string, amount: number): Promise<void> {
  const res = await m.api.post(`${API}/transactions/${id}/refund`, { amount });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.success, true, `refund: ${res.text}`);
}

/** An in-person SALE (or a PAYOUT on the terminal) paid by a tap. */
export async function terminalPayment(t: TestRuntime, m: TestMerchant, amount: number, type: 'PAYMENT' | 'PAYOUT' = 'PAYMENT'): Promise<string> {
  const terminalId = m.terminalIds[0]!;
  const res = await sale(m, { amount, type, terminalId });
  assert.equal(res.status, 200, res.text);
  const id = res.body.transaction.id as string;
  await waitForState(m, id, ['PROCESSING']);
  const tapped = await tap(t, terminalId, CARDS.VISA);
  assert.equal(tapped.status, 200, tapped.text);
  await waitForState(m, id, ['SUCCESS']);
  return id;
}

export async function runSettlements(t: TestRuntime, postingDate?: string): Promise<any[]> {
  const res = await t.operator.post('/sandbox/v1/settlements/run', postingDate ? { postingDate } : {});
  assert.equal(res.status, 200, res.text);
  assert.ok(Array.isArray(res.body.settlementTransfers), res.text);
  return res.body.settlementTransfers.map((i: any) => i.settlementTransfer);
}

/** Every item of a cursor list, checking each envelope and that every row comes once. */
export async function walk(api: TestClient, path: string, perPage: number): Promise<any[]> {
  const items: any[] = [];
  let offset = '';
  for (let page = 0; page < 10_000; page++) {
    const res = await api.get(`${API}${path}?perPage=${perPage}${offset ? `&offset=${encodeURIComponent(offset)}` : ''}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['currentOffset', 'hasMore', 'items', 'nextOffset', 'perPage']);
    assert.equal(res.body.currentOffset, offset);
    assert.ok(res.body.items.length <= perPage);
    items.push(...res.body.items);
    if (!res.body.hasMore) {
      assert.equal(res.body.nextOffset, null);
      return items;
    }
    assert.equal(typeof res.body.nextOffset, 'string');
    offset = res.body.nextOffset;
  }
  throw new Error(`walk of ${path} did not end`);
}

/** Decimal string → minor units (exponent of the currency), failing on anything but an exact decimal. */
export function minor(value: unknown, currency = 'DKK'): bigint {
  assert.equal(typeof value, 'string', `decimal amounts are strings, got ${JSON.stringify(value)}`);
  return fromDecimalString(value as string, currency);
}
