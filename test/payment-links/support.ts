/** Helpers of the payment-link tests: create links through the public API, read them, pay them. */
import assert from 'node:assert/strict';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
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

/** POST /payment-links answers `{id, sessionId, url, qrCode}` (INTERFACE §11.5); this returns the record read back. */
export async function createLink(m: TestMerchant, overrides: Record<string, unknown> = {}) {
  const created = ok(await m.api.post(`${API}/payment-links`, linkBody(m, overrides)), 'POST /payment-links');
  return getLink(m, created.id);
}

export async function getLink(m: TestMerchant, id: string) {
  return ok(await m.api.get(`${API}/payment-links/${id}`), 'GET /payment-links/{id}').paymentLink;
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The text a PNG QR code encodes (decoded with pngjs + jsQR, independently of the encoder). */
export function decodeQr(png: Buffer): string | null {
  assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), 'a PNG starts with the PNG signature');
  const image = PNG.sync.read(png);
  // jsqr is CommonJS: its default export is the module, whose `default` is the decoder.
  return jsQRModule.default(new Uint8ClampedArray(image.data), image.width, image.height)?.data ?? null;
}
