/**
 * The storage port of dashboard sessions (src/storage/repositories/dashboard-sessions.ts
 * implements it over table dashboard_sessions). Rows never hold a session id or a key in clear:
 * the id only as a hash, the key and the CSRF token sealed with the vault key.
 */
import type { DashboardTier } from './session.js';

export interface DashboardSessionRecord {
  /** SHA-256 (hex) of the session id the cookie carries. */
  idHash: string;
  /** SHA-256 (hex) of the key, to bound the sessions one key may hold. */
  keyHash: string;
  keySealed: string;
  csrfTokenSealed: string;
  tier: DashboardTier;
  accountId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export interface DashboardSessionsRepository {
  insert(record: DashboardSessionRecord): Promise<void>;
  find(idHash: string): Promise<DashboardSessionRecord | null>;
  touch(idHash: string, lastSeenAt: number): Promise<void>;
  delete(idHash: string): Promise<void>;
  /** Deletes the sessions past their absolute expiry (`expiresAt <= now`) or last used before `idleBefore`; returns how many. */
  deleteExpired(now: number, idleBefore: number): Promise<number>;
  /** Deletes the oldest sessions of one key beyond the newest `keep`. */
  trimKey(keyHash: string, keep: number): Promise<void>;
}
