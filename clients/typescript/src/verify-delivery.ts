/**
 * Verifies a signed callback or webhook delivery of the Payments Service (Standard Webhooks,
 * https://www.standardwebhooks.com): headers `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated when
 * several secrets sign during a rotation). The secret is the point of sale's `signingSecret` for
 * callbacks, the webhook's `signingSecret` for its deliveries (`whsec_<base64>`).
 *
 * ```ts
 * import { verifyDelivery } from '@payments-service/client';
 * // body: the raw request body as text, exactly as received (not re-serialized JSON)
 * verifyDelivery(body, request.headers, process.env.PAYMENTS_SIGNING_SECRET!);
 * ```
 *
 * Node only (node:crypto); no Web Crypto.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyDeliveryOptions {
  /** How far the timestamp may be from `now`, either way (default 300 s, as the spec). */
  toleranceSeconds?: number;
  /** The receiver's time in milliseconds since the epoch (default Date.now()). */
  now?: number;
}

/** The delivery is not authentic or not fresh: answer it with a 4xx and do not act on it. */
export class DeliveryVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryVerificationError';
  }
}

type HeaderSource = Record<string, string | string[] | undefined> | Headers;

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** All values of a header, case-insensitively, from a plain record (Node's IncomingHttpHeaders) or a Fetch `Headers`. */
function headerValues(headers: HeaderSource, name: string): string[] {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    const value = (headers as Headers).get(name);
    return value === null ? [] : [value];
  }
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values;
}

function single(headers: HeaderSource, name: string): string {
  const values = headerValues(headers, name);
  if (values.length === 0 || values[0]!.trim() === '') throw new DeliveryVerificationError(`missing header ${name}`);
  if (values.length > 1) throw new DeliveryVerificationError(`header ${name} sent more than once`);
  return values[0]!.trim();
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new TypeError('verifyDelivery: the secret is empty or not base64 (expected whsec_<base64>)');
  return key;
}

/**
 * Throws DeliveryVerificationError unless `body` with these headers was signed with `secret` and
 * its timestamp is within the tolerance of now. Returns nothing when it is authentic.
 * The comparison is constant-time.
 */
export function verifyDelivery(body: string, headers: HeaderSource, secret: string, options: VerifyDeliveryOptions = {}): void {
  const key = keyOf(secret);
  const id = single(headers, 'webhook-id');
  const timestampText = single(headers, 'webhook-timestamp');
  // webhook-signature may come as several header lines: they are one list.
  const signatures = headerValues(headers, 'webhook-signature')
    .join(' ')
    .split(' ')
    .filter((s) => s.length > 0);
  if (signatures.length === 0) throw new DeliveryVerificationError('missing header webhook-signature');

  if (!/^[0-9]{1,15}$/.test(timestampText)) throw new DeliveryVerificationError(`webhook-timestamp is not unix seconds: ${timestampText.slice(0, 40)}`);
  const timestamp = Number(timestampText);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (nowSeconds - timestamp > tolerance) {
    throw new DeliveryVerificationError(`webhook-timestamp too old: ${nowSeconds - timestamp} s ago, more than the tolerance of ${tolerance} s`);
  }
  if (timestamp - nowSeconds > tolerance) {
    throw new DeliveryVerificationError(`webhook-timestamp too new: ${timestamp - nowSeconds} s ahead, more than the tolerance of ${tolerance} s`);
  }

  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  let matched = false;
  for (const versioned of signatures) {
    const comma = versioned.indexOf(',');
    if (comma < 0 || versioned.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(versioned.slice(comma + 1), 'base64');
    // Every v1 signature is compared (no early exit), each in constant time.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw new DeliveryVerificationError('no webhook-signature matches this secret: wrong secret, or the body or headers were changed');
}
