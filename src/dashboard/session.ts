/**
 * Dashboard sessions (issue 12): the key typed into the sign-in form is exchanged for a random
 * session id kept in an HttpOnly cookie; the key itself stays on the server and is never sent back
 * to the browser. Sessions live in the database (sessions.repository.ts), so that a restart keeps
 * them and every process behind a load balancer knows them: the id only as a SHA-256 hash, the key
 * and the CSRF token sealed with the vault key. A session ends on sign-out, after IDLE_MS without
 * use, or MAX_AGE_MS after sign-in, whichever comes first.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashSecret, type Sealer } from '../security/secret-box.js';
import type { DashboardSessionRecord, DashboardSessionsRepository } from './sessions.repository.js';

export const SESSION_COOKIE = 'payments_dashboard';
export const MAX_AGE_MS = 8 * 3600_000;
export const IDLE_MS = 30 * 60_000;
/** Sessions one key may hold (its oldest are ended beyond it), so that sign-ins cannot grow the table without bound. */
export const MAX_SESSIONS_PER_KEY = 50;
/**
 * The last use is written at most this often: a page's burst of calls costs one write, and the
 * idle expiry comes at most this much early.
 */
export const TOUCH_INTERVAL_MS = 60_000;

export type DashboardTier = 'merchant' | 'operator';

export interface DashboardSession {
  id: string;
  /** The credential requests of this session are made with (API key, access token or operator key). */
  secret: string;
  tier: DashboardTier;
  accountId: string | null;
  /** Sent back by the page in X-CSRF-Token on every state-changing request. */
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

const token = () => randomBytes(32).toString('base64url');
/** What token() makes: anything else is no session id, and costs no database read. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface SessionStoreDeps {
  sessions: DashboardSessionsRepository;
  sealer: Sealer;
  now(): number;
}

export class SessionStore {
  constructor(private readonly deps: SessionStoreDeps) {}

  async create(secret: string, who: { tier: DashboardTier; accountId: string | null }): Promise<DashboardSession> {
    const at = this.deps.now();
    const session: DashboardSession = {
      id: token(),
      secret,
      tier: who.tier,
      accountId: who.accountId,
      csrfToken: token(),
      createdAt: at,
      lastSeenAt: at,
      expiresAt: at + MAX_AGE_MS,
    };
    // Sign-ins are rare: pruning here keeps the table to the live sessions without a job of its own.
    await this.deps.sessions.deleteExpired(at, at - IDLE_MS);
    const keyHash = hashSecret(secret);
    await this.deps.sessions.insert({
      idHash: hashSecret(session.id),
      keyHash,
      keySealed: this.deps.sealer.seal(secret),
      csrfTokenSealed: this.deps.sealer.seal(session.csrfToken),
      tier: session.tier,
      accountId: session.accountId,
      createdAt: at,
      lastSeenAt: at,
      expiresAt: session.expiresAt,
    });
    await this.deps.sessions.trimKey(keyHash, MAX_SESSIONS_PER_KEY);
    return session;
  }

  /** The live session with this id (its idle timer restarted), or null; an expired one is deleted. */
  async get(id: string | undefined): Promise<DashboardSession | null> {
    if (!id || !SESSION_ID.test(id)) return null;
    const idHash = hashSecret(id);
    const row = await this.deps.sessions.find(idHash);
    if (!row) return null;
    const at = this.deps.now();
    if (at >= row.expiresAt || at - row.lastSeenAt >= IDLE_MS) {
      await this.deps.sessions.delete(idHash);
      return null;
    }
    const opened = this.open(row);
    if (!opened) {
      // Sealed under another vault key (it was replaced): the session cannot act, so it ends.
      await this.deps.sessions.delete(idHash);
      return null;
    }
    if (at - row.lastSeenAt >= TOUCH_INTERVAL_MS) await this.deps.sessions.touch(idHash, at);
    return { id, ...opened, tier: row.tier, accountId: row.accountId, createdAt: row.createdAt, lastSeenAt: at, expiresAt: row.expiresAt };
  }

  async destroy(id: string | undefined): Promise<void> {
    if (id && SESSION_ID.test(id)) await this.deps.sessions.delete(hashSecret(id));
  }

  private open(row: DashboardSessionRecord): { secret: string; csrfToken: string } | null {
    try {
      return { secret: this.deps.sealer.open(row.keySealed), csrfToken: this.deps.sealer.open(row.csrfTokenSealed) };
    } catch {
      return null;
    }
  }
}

/** Methods that change nothing and need no CSRF token. */
export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True when the request's X-CSRF-Token matches the session's (constant time). */
export function csrfMatches(session: Pick<DashboardSession, 'csrfToken'>, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  const given = Buffer.from(header);
  const expected = Buffer.from(session.csrfToken);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The value of one cookie in a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Set-Cookie for the session (or, with `null`, the header that removes it). */
export function sessionCookie(session: Pick<DashboardSession, 'id' | 'expiresAt'> | null, options: { secure: boolean; now: number }): string {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])];
  if (!session) return [`${SESSION_COOKIE}=`, 'Max-Age=0', ...attributes].join('; ');
  const maxAge = Math.max(0, Math.floor((session.expiresAt - options.now) / 1000));
  return [`${SESSION_COOKIE}=${session.id}`, `Max-Age=${maxAge}`, ...attributes].join('; ');
}
