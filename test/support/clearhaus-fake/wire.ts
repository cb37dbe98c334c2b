/**
 * The Clearhaus fake's wire layer: what a request must look like before any transaction rule is
 * looked at (clearhaus.md §1.3 Basic auth, §1.4 form bodies, §4.4 signatures), and how an answer
 * is shaped (§1.5 HAL content type, §3 status codes and messages). Written from the published
 * contract only; nothing here comes from our connector.
 */
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** §1.5: the exact Content-Type of every JSON answer. */
export const HAL_CONTENT_TYPE = 'application/vnd.clearhaus-gateway.hal+json; version=0.10.0; charset=utf-8';

/**
 * §4.4: the docs' published 512-bit example key and its signing key id (test use only). The fake
 * verifies with its public half unless told otherwise; tests sign with the private half.
 */
export const CLEARHAUS_DOCS_KEY = {
  id: '4390aec7-f76a-4c2f-8597-c87c2d06cb4f',
  privateKeyPem: [
    '-----BEGIN RSA PRIVATE KEY-----',
    'MIIBOwIBAAJBALYK0zmwuYkH3YWcFNLLddx5cwDxEY7Gi1xITuQqRrU4yD3uSw+J',
    'WYKknb4Tbndb6iEHY+e6gIGD+49TojnNeIUCAwEAAQJARyuYRRe4kcBHdPL+mSL+',
    'Y0IAGkAlUyKAXYXPghidKD/v/oLrFaZWALGM2clv6UoYYpPnInSgbcud4sTcfeUm',
    'QQIhAN2JZ2qv0WGcbIopBpwpQ5jDxMGVkmkVVUEWWABGF8+pAiEA0lySxTELZm8b',
    'Gx9UEDRghN+Qv/OuIKFldu1Ba4f8W30CIQCaQFIBtunTTVdF28r+cLzgYW9eWwbW',
    'pEP4TdZ4WlW6AQIhAMDCTUdeUpjxlH/87BXROORozAXocBW8bvJUI486U5ctAiAd',
    'InviQqJd1KTGRDmWIGrE5YACVmW2JSszD9t5VKxkAA==',
    '-----END RSA PRIVATE KEY-----',
    '',
  ].join('\n'),
  publicKeyPem: [
    '-----BEGIN PUBLIC KEY-----',
    'MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBALYK0zmwuYkH3YWcFNLLddx5cwDxEY7G',
    'i1xITuQqRrU4yD3uSw+JWYKknb4Tbndb6iEHY+e6gIGD+49TojnNeIUCAwEAAQ==',
    '-----END PUBLIC KEY-----',
    '',
  ].join('\n'),
} as const;

/** A parsed form body: bracket keys as written (`card[pan]`), whether sent raw or percent-encoded. */
export type Form = Record<string, string>;

/** A refusal with a Clearhaus status code and message (always HTTP 400 unless said otherwise). */
export class Rejection extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly http = 400,
  ) {
    super(message);
  }
}

/** What the fake answers: an HTTP status and a JSON body (none for 401, 404 and scripted 5xx). */
export interface Reply {
  status: number;
  body?: Record<string, unknown>;
}

/** §3.1: the meaning of each status code, used as `status.message` on failures. */
export const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  20000: 'Approved',
  40000: 'General input error',
  40110: 'Invalid card number',
  40111: 'Unsupported card scheme',
  40120: 'Invalid CSC',
  40130: 'Invalid expire date',
  40135: 'Card expired',
  40140: 'Invalid currency',
  40150: 'Invalid text on statement',
  40200: 'Clearhaus rule violation',
  40300: '3-D Secure problem',
  40310: '3-D Secure authentication failure',
  40400: 'Backend problem',
  40410: 'Declined by issuer or card scheme',
  40411: 'Card restricted',
  40412: 'Card lost or stolen',
  40413: 'Insufficient funds',
  40414: 'Suspected fraud',
  40415: 'Amount limit exceeded',
  40416: 'Additional authentication required',
  40420: 'Merchant blocked by cardholder',
  50000: 'Clearhaus error',
};

/** §3.2 [INFERENCE]: input and validation errors always come back as HTTP 400, whatever the decline style. */
export function isInputErrorCode(code: number): boolean {
  return code === 40000 || (code >= 40100 && code < 40200);
}

/** A failure body without an id (§3.2: failure bodies may lack one). */
export function failureReply(code: number, message: string, status = 400): Reply {
  return { status, body: { status: { code, message } } };
}

/** `processed_at` as the docs write it: seconds and a `+00:00` offset. */
export function processedAt(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/**
 * §1.4: parses an urlencoded body. Brackets may be raw or percent-encoded; a key given twice is
 * refused (Clearhaus would keep one of them silently, which would hide a bug of ours).
 */
export function parseForm(raw: string): Form {
  const form: Form = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (Object.hasOwn(form, key)) throw new Rejection(40000, `parameter '${key}' is given more than once`);
    form[key] = value;
  }
  return form;
}

/** §1.4: a POST body must be form-encoded. An empty body (a void) may come without a Content-Type. */
export function checkContentType(headers: IncomingHttpHeaders, rawLength: number): void {
  const type = headers['content-type'];
  if (type === undefined && rawLength === 0) return;
  const mediaType = (type ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') {
    throw new Rejection(40000, `request body must be application/x-www-form-urlencoded, not '${type ?? '(none)'}'`);
  }
}

/** §1.3: `Authorization: Basic base64("<api-key>:")`, the password empty. Returns the key or undefined. */
export function basicApiKey(header: string | undefined): string | undefined {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon !== decoded.length - 1) return undefined;
  return decoded.slice(0, colon);
}

/** The verdict on a request's `Signature` header, kept in the request log. */
export type SignatureVerdict = 'valid' | 'absent' | 'malformed' | 'unknown-key-id' | 'invalid';

/**
 * §4.4: `Signature: <signing-api-key> RS256-hex <lowercase hex>`, RSASSA-PKCS1-v1_5 SHA-256 over
 * the exact body bytes.
 */
export function verifySignature(header: string | undefined, raw: Buffer, keyId: string, publicKey: crypto.KeyObject): SignatureVerdict {
  if (header === undefined) return 'absent';
  const match = /^(\S+) RS256-hex ([0-9a-f]+)$/.exec(header);
  if (!match || match[2]!.length % 2 !== 0) return 'malformed';
  if (match[1] !== keyId) return 'unknown-key-id';
  try {
    return crypto.verify('sha256', raw, { key: publicKey, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(match[2]!, 'hex')) ? 'valid' : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** The refusal Clearhaus gives for each failed signature verdict. */
export function signatureRejection(verdict: Exclude<SignatureVerdict, 'valid'>): Rejection {
  switch (verdict) {
    case 'absent':
      return new Rejection(40000, 'POST requests must be signed: Signature header missing');
    case 'malformed':
      return new Rejection(40000, "malformed Signature header: expected '<signing api-key> RS256-hex <lowercase hex>'");
    case 'unknown-key-id':
      return new Rejection(40000, 'invalid signing api-key');
    case 'invalid':
      return new Rejection(40000, 'invalid signature: RS256 verification of the request body failed');
  }
}

/** For tests: the lowercase-hex RS256 signature of `body` (exact bytes) with `privateKeyPem`. */
export function signBody(body: string | Buffer, privateKeyPem: string): string {
  return crypto.sign('sha256', typeof body === 'string' ? Buffer.from(body) : body, privateKeyPem).toString('hex');
}

/** For tests: the whole `Signature` header value. */
export function signatureHeader(keyId: string, privateKeyPem: string, body: string | Buffer): string {
  return `${keyId} RS256-hex ${signBody(body, privateKeyPem)}`;
}

/** For tests: the `Authorization` header value for a merchant API key. */
export function basicAuthHeader(apiKey: string): string {
  return `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
}
