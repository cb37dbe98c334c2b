/**
 * The page's only way to the service: same-origin fetch with the session cookie (HttpOnly, set by
 * /dashboard/api/session; the key never reaches script), the session's CSRF token on every
 * state-changing call, and an Idempotency-Key where the caller gives one.
 */
export const API = '/public/api/v1';

export interface Session {
  tier: 'merchant' | 'operator';
  accountId: string | null;
  /** The merchant's account name (the header); null for the operator. */
  accountName: string | null;
  /** The service runs in sandbox mode (PAYMENTS_SANDBOX): the page shows a banner. */
  sandbox: boolean;
  csrfToken: string;
  expiresAt: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Record<string, string[]> | null = null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

async function call<T>(method: string, url: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  let res: Response;
  try {
    res = await fetch(url, { method, headers, credentials: 'same-origin', body: body === undefined ? null : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service could not be reached.');
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    throw new ApiError(res.status, json?.errorCode ?? 'HTTP_' + res.status, json?.message ?? `HTTP ${res.status}`, json?.errors ?? null);
  }
  return json as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', API + path),
  post: <T>(path: string, body?: unknown, idempotencyKey?: string) => call<T>('POST', API + path, body ?? {}, idempotencyKey),
  /** DELETE carries no body (the API's DELETE routes take none). */
  del: <T>(path: string, idempotencyKey?: string) => call<T>('DELETE', API + path, undefined, idempotencyKey),
  patch: <T>(path: string, body?: unknown) => call<T>('PATCH', API + path, body ?? {}),
  put: <T>(path: string, body: unknown, idempotencyKey?: string) => call<T>('PUT', API + path, body, idempotencyKey),
  /** The dashboard's own operator endpoints (src/dashboard/operator-jobs.routes.ts). */
  getRoot: <T>(path: string) => call<T>('GET', path),
  postRoot: <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
};

export async function currentSession(): Promise<Session | null> {
  try {
    const { session } = await call<{ session: Session }>('GET', '/dashboard/api/session');
    csrfToken = session.csrfToken;
    return session;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}

export async function signIn(key: string): Promise<Session> {
  const { session } = await call<{ session: Session }>('POST', '/dashboard/api/session', { key });
  csrfToken = session.csrfToken;
  return session;
}

export async function signOut(): Promise<void> {
  await call('DELETE', '/dashboard/api/session');
  csrfToken = null;
}

/** A fresh key for one confirmed action: a retry of the same confirmation reuses it. */
export const newIdempotencyKey = (): string => crypto.randomUUID();
