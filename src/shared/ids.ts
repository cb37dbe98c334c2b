import { randomBytes, randomUUID } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Transaction id: 11 characters of upper-case Crockford base32 (55 random bits). */
export function newTransactionId(): string {
  const bytes = randomBytes(11);
  let id = '';
  for (const b of bytes) id += CROCKFORD[b & 31];
  return id;
}

export const TRANSACTION_ID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{11}$';

export const newId = (): string => randomUUID();

/** A random secret with a readable prefix, e.g. `sk_test_…`. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
