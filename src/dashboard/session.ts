/**
 * Dashboard sessions (issue 12): the key typed into the sign-in form is exchanged for a random
 * session id kept in an HttpOnly cookie; the key itself stays on the server, in this process's
 * memory, and is never sent back to the browser. A session ends on sign-out, after IDLE_MS
 * without use, or MAX_AGE_MS after sign-in, whichever comes first.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'payments_dashboard';
export const MAX_AGE_MS = 8 * 3600_000;
export const IDLE_MS = 30 * 60_000;
/** Sessions kept at most (the oldest is dropped beyond it), so that sign-ins cannot grow memory without bound. */
export const MAX_SESSIONS = 10_000;

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

export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();

  constructor(private readonly now: () => number) {}

  create(secret: string, who: { tier: DashboardTier; accountId: string | null }): DashboardSession {
    const at = this.now();
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
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id (its idle timer restarted), or null. */
  get(id: string | undefined): DashboardSession | null {
    if (!id) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    const at = this.now();
    if (at >= session.expiresAt || at - session.lastSeenAt >= IDLE_MS) {
      this.sessions.delete(id);
      return null;
    }
    session.lastSeenAt = at;
    return session;
  }

  destroy(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
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
