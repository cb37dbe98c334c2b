/**
 * Signed deliveries (INTERFACE §11.10, Standard Webhooks, https://www.standardwebhooks.com):
 * callbacks and webhook deliveries carry `webhook-id`, `webhook-timestamp` (unix seconds of service
 * time, taken at each attempt) and `webhook-signature` = `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`, one signature per secret in force, space-separated.
 *
 * A secret is `whsec_<base64 of 32 random bytes>`; the HMAC key is the decoded part after the prefix.
 * After a rotation the replaced secret keeps signing for ROTATION_OVERLAP_MS of service time, so a
 * receiver can switch to the new one whenever it likes within that day.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DAY_MS } from './time.js';

export const SIGNING_SECRET_PREFIX = 'whsec_';
/** How long a replaced secret keeps signing after a rotation (service time). */
export const ROTATION_OVERLAP_MS = DAY_MS;

/** The secrets of one owner (a point of sale or a webhook), in clear: only in memory. */
export interface SigningSecrets {
  current: string;
  /** The secret replaced by the last rotation while it still signs; null otherwise. */
  previous: string | null;
  /** Service time (RFC 3339) until which `previous` signs. */
  previousExpiresAt: string | null;
}

export const newSigningSecret = (): string => SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');

/** The secrets that sign at `nowMs`: the current one, and the previous one until its expiry. */
export function secretsInForce(secrets: SigningSecrets, nowMs: number): string[] {
  const previousSigns = secrets.previous !== null && secrets.previousExpiresAt !== null && Date.parse(secrets.previousExpiresAt) > nowMs;
  return previousSigns ? [secrets.current, secrets.previous!] : [secrets.current];
}

/** The secrets after a rotation at `nowMs` to `next`: the current one keeps signing for a day. */
export function rotated(secrets: SigningSecrets, next: string, nowMs: number): SigningSecrets {
  return { current: next, previous: secrets.current, previousExpiresAt: new Date(nowMs + ROTATION_OVERLAP_MS).toISOString() };
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret, 'base64');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for one secret. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt at `nowMs` (service time). */
export function signatureHeaders(id: string, body: string, secrets: readonly string[], nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  };
}

/** Sealed at rest (the vault): what the stores keep of an owner's secrets. */
export interface SealedSigningSecrets {
  signingSecretSealed: string;
  previousSigningSecretSealed: string | null;
  previousSigningSecretExpiresAt: string | null;
}

export function sealSigningSecrets(secrets: SigningSecrets, sealer: { seal(plaintext: string): string }): SealedSigningSecrets {
  return {
    signingSecretSealed: sealer.seal(secrets.current),
    previousSigningSecretSealed: secrets.previous === null ? null : sealer.seal(secrets.previous),
    previousSigningSecretExpiresAt: secrets.previousExpiresAt,
  };
}

export function openSigningSecrets(sealed: SealedSigningSecrets, sealer: { open(sealed: string): string }): SigningSecrets {
  return {
    current: sealer.open(sealed.signingSecretSealed),
    previous: sealed.previousSigningSecretSealed === null ? null : sealer.open(sealed.previousSigningSecretSealed),
    previousExpiresAt: sealed.previousSigningSecretExpiresAt,
  };
}

/** What a store keeps of an owner's secrets: the current one is null only in rows older than migration 028. */
export interface StoredSigningSecrets {
  signingSecretSealed: string | null;
  previousSigningSecretSealed: string | null;
  previousSigningSecretExpiresAt: string | null;
}

/** The store's side of one owner's secrets (a point of sale or a webhook of one merchant). */
export interface SigningSecretsPort<T extends StoredSigningSecrets = StoredSigningSecrets> {
  /** Null: no such owner (of this merchant). */
  read(): Promise<T | null>;
  /** Sets the current secret only where none is stored yet. */
  fill(signingSecretSealed: string): Promise<void>;
  /** Replaces the secrets only while the current one is still `expected` (compare and set); false when it is not. */
  replace(expected: string, next: SealedSigningSecrets): Promise<boolean>;
}

type Vault = { seal(plaintext: string): string; open(sealed: string): string };

/**
 * The owner's secrets, opened; an owner stored before signing existed gets its secret now (filled
 * only where none is, then read back: every process agrees on the one that won). Null: no such owner.
 */
export async function loadSigningSecrets<T extends StoredSigningSecrets>(
  port: SigningSecretsPort<T>,
  vault: Vault,
): Promise<{ secrets: SigningSecrets; sealed: string; stored: T } | null> {
  let stored = await port.read();
  if (stored && stored.signingSecretSealed === null) {
    await port.fill(vault.seal(newSigningSecret()));
    stored = await port.read();
  }
  if (!stored || stored.signingSecretSealed === null) return null;
  return { secrets: openSigningSecrets(stored as SealedSigningSecrets, vault), sealed: stored.signingSecretSealed, stored };
}

/**
 * A rotation at `nowMs`: a new current secret, the replaced one signing for another day. A rotation
 * that races another starts again from what the other left (so neither's new secret is lost
 * unannounced: the other's becomes the previous one). Null: no such owner.
 */
export async function rotateSigningSecrets<T extends StoredSigningSecrets>(
  port: SigningSecretsPort<T>,
  vault: Vault,
  nowMs: () => number,
): Promise<SigningSecrets | null> {
  for (let tries = 0; tries < 20; tries++) {
    const loaded = await loadSigningSecrets(port, vault);
    if (!loaded) return null;
    const next = rotated(loaded.secrets, newSigningSecret(), nowMs());
    if (await port.replace(loaded.sealed, sealSigningSecrets(next, vault))) return next;
  }
  throw new Error('signing secret rotation: lost 20 races in a row');
}
