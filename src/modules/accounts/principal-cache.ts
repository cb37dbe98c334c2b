/**
 * Credentials authenticated in the last second, by secret hash: a request with a key seen
 * recently costs no database read (every API request authenticates; issue 10 counts it).
 *
 * What would change the answer — closing an account (which revokes its credentials), changing
 * its capabilities — clears the cache of the process that makes the change at once; other
 * processes see it within `ttlMs`. Unknown, revoked and expired secrets are never cached, so a
 * new key works at once, and an entry is dropped when its credential expires.
 */
import type { CredentialOwner } from './accounts.repository.js';

export const PRINCIPAL_CACHE_MS = 1_000;
const MAX_ENTRIES = 10_000;

export class PrincipalCache {
  /** `expiresMs`: the credential's expiry as a number (Infinity: none), compared without formatting the time. */
  private readonly entries = new Map<string, { owner: CredentialOwner; until: number; expiresMs: number }>();
  /** Bumped by clear(): a read that started before a change does not put its answer back after it. */
  private generation = 0;

  constructor(
    private readonly wallNow: () => number = Date.now,
    private readonly ttlMs = PRINCIPAL_CACHE_MS,
  ) {}

  /** The owner of `hash` if it was authenticated less than ttlMs ago and its credential has not expired by `nowMs` (service time). */
  get(hash: string, nowMs: number): CredentialOwner | null {
    const entry = this.entries.get(hash);
    if (!entry) return null;
    if (entry.until <= this.wallNow() || entry.expiresMs <= nowMs) {
      this.entries.delete(hash);
      return null;
    }
    return entry.owner;
  }

  /** Where a lookup starts: pass it to `set` with what the lookup found. */
  mark(): number {
    return this.generation;
  }

  set(hash: string, owner: CredentialOwner, mark: number): void {
    if (mark !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { owner, until: this.wallNow() + this.ttlMs, expiresMs: owner.expiresAt === null ? Infinity : Date.parse(owner.expiresAt) });
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
