import { randomBytes, randomUUID } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes drawn ahead for transaction ids: one draw serves a batch of 500 (each draw is a call into the CSPRNG). */
const POOL_IDS = 512;
/** Characters of a transaction id taken from the second it is made in; the rest are random. */
const TIME_CHARS = 5;
let pool = Buffer.alloc(0);
let taken = 0;

/** `count` random Crockford characters, each from a byte of the pool used once (no two ids share randomness). */
function randomChars(count: number): string {
  if (taken + count > pool.length) {
    pool = randomBytes(11 * POOL_IDS);
    taken = 0;
  }
  let chars = '';
  for (let i = taken; i < taken + count; i++) chars += CROCKFORD[pool[i]! & 31];
  taken += count;
  return chars;
}

/**
 * Transaction id: 11 upper-case Crockford base32 characters (the interface fixes the form, not how
 * they are drawn). The first 5 are the second it is made in, modulo 2^25 (388 days: the prefix
 * wraps, which costs nothing but the order across a wrap); the last 6 are random (30 bits).
 *
 * Ids made in one second share their prefix, so the rows a commit inserts sit together at the end
 * of the primary key and of operations_transaction instead of one page per row at random places
 * (batches of 500 MITs on SQLite, two alternating pairs: 7 853 / 7 413 → 8 897 / 11 045
 * transactions/s). Within a second, two ids collide with odds of about n / 2^30 for n ids made
 * that second: a taken id is refused by the primary key and the commit made again with new ids
 * (NEW_ID_TRIES).
 */
export function newTransactionId(nowMs = Date.now()): string {
  let second = Math.floor(nowMs / 1000);
  let prefix = '';
  for (let i = 0; i < TIME_CHARS; i++) {
    prefix = CROCKFORD[second & 31] + prefix;
    second = Math.floor(second / 32);
  }
  return prefix + randomChars(11 - TIME_CHARS);
}

/**
 * An id in the transaction-id form whose 11 characters are all random (55 bits): for what is found
 * by its id alone, without a credential (the public pages of payment links and multi-links), where
 * an id must not be guessable from the time it was made.
 */
export function newUnguessableId(): string {
  return randomChars(11);
}

export const TRANSACTION_ID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{11}$';

/**
 * Every other id: a UUID version 7 (RFC 9562) — the creation millisecond first, then 74 random
 * bits. Ids made close together sort close together, so a commit that inserts many rows dirties
 * a few index pages at the end of each id index instead of one page per row at random places
 * (a batch of 500 MITs on SQLite: COMMIT 30 → 16 ms, ingestion +28 %).
 *
 * Within a process the ids strictly increase (RFC 9562 §6.2, method 1): in the same millisecond
 * the 12 bits after the version count up from a random start, so rows written in one commit with
 * one timestamp (a capture's event, then its void's) list in the order they were made.
 */
let lastMs = 0;
let sequence = 0;
const SEQUENCE_MAX = 0xfff;

export function newId(): string {
  const random = randomUUID();
  let ms = Date.now();
  if (ms > lastMs) {
    // A fresh millisecond starts the counter in its lower half: room to count up.
    sequence = Number.parseInt(random.slice(15, 18), 16) & 0x7ff;
  } else if (sequence < SEQUENCE_MAX) {
    ms = lastMs;
    sequence += 1;
  } else {
    // 4,096 ids in one millisecond: borrow the next one (the clock catches up within a millisecond).
    ms = lastMs + 1;
    sequence = 0;
  }
  lastMs = ms;
  const hex = ms.toString(16).padStart(12, '0');
  const counter = sequence.toString(16).padStart(3, '0');
  // The version nibble is 7; randomUUID's variant bits and 62 random bits stay.
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7${counter}${random.slice(18)}`;
}

/** A random secret with a readable prefix, e.g. `sk_test_…`. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
