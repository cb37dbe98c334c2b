/**
 * The dashboard on the service's own port (issue 12): the built single-page app under
 * /dashboard/ (dashboard/dist, built by `npm run build:dashboard` inside `npm ci`), its session
 * endpoints under /dashboard/api/session, and the bridge that lets the page call the public API
 * with its session cookie: the cookie is mapped to the session's credential as a Bearer header
 * before the route's own hooks run, so that the page goes through exactly the same
 * authentication, tenant isolation, rate limits and idempotency as any integrator.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../modules/accounts/account.js';
import type { Sealer } from '../security/secret-box.js';
import { AppError } from '../shared/errors.js';
import { csvStream, type ListPage } from './csv-export.js';
import { csrfMatches, readCookie, SAFE_METHODS, SESSION_COOKIE, sessionCookie, SessionStore, type DashboardSession } from './session.js';
import type { DashboardSessionsRepository } from './sessions.repository.js';

export const DASHBOARD_DIST = fileURLToPath(new URL('../../dashboard/dist/', import.meta.url));

/** No inline script or style, nothing from another origin, never framed. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface DashboardOptions {
  authenticate(secret: string): Promise<Principal | null>;
  /** The service clock (the sandbox may move it): dates shown and exported. */
  now(): number;
  /**
   * Real time, for session lifetimes (default Date.now): moving the sandbox clock a month forward
   * must not sign the operator out, nor a session outlive its real 8 hours.
   */
  sessionNow?(): number;
  publicUrl: string;
  /** Where sessions are kept (the database: they outlive a restart and are shared by every process). */
  sessions: DashboardSessionsRepository;
  /** Seals the session's key and CSRF token in the database (the vault key). */
  sealer: Sealer;
  /** The built app (default dashboard/dist); tests may point elsewhere. */
  distDir?: string;
  /** PAYMENTS_SANDBOX: the page shows a sandbox banner. */
  sandbox?: boolean;
  /** The merchant's account name for the page's header (null: unknown). */
  accountName?(accountId: string): Promise<string | null>;
}

/** Paths the session cookie may stand in for a Bearer credential on. */
const BRIDGED = /^\/(public\/api\/v1\/|sandbox\/v1\/|dashboard\/api\/operator\/|dashboard\/api\/payments(\?|$))/;

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', DASHBOARD_CSP);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
}

/** Registers the dashboard on the root instance; call it before the API routes. */
export async function registerDashboard(app: FastifyInstance, options: DashboardOptions): Promise<SessionStore> {
  const sessionNow = options.sessionNow ?? Date.now;
  const sessions = new SessionStore({ sessions: options.sessions, sealer: options.sealer, now: sessionNow });
  const distDir = options.distDir ?? DASHBOARD_DIST;
  const secure = (request: FastifyRequest) => request.protocol === 'https' || options.publicUrl.startsWith('https:');
  const sessionOf = (request: FastifyRequest) => sessions.get(readCookie(request.headers.cookie, SESSION_COOKIE));
  // What the page shows of the session: who (the merchant's name for its header), whether this is the sandbox, and the CSRF token.
  const sessionView = async (session: DashboardSession) => ({
    tier: session.tier,
    accountId: session.accountId,
    accountName: session.accountId && options.accountName ? await options.accountName(session.accountId).catch(() => null) : null,
    sandbox: options.sandbox ?? false,
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAt).toISOString(),
  });
  const signedIn = async (request: FastifyRequest): Promise<DashboardSession> => {
    const session = await sessionOf(request);
    if (!session) throw new AppError('UNAUTHORIZED', 'Not signed in.');
    return session;
  };

  // The bridge: a request with the session cookie and no Authorization header acts with the session's credential.
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined || !BRIDGED.test(request.url)) return;
    const session = await sessionOf(request);
    if (!session) return;
    if (!SAFE_METHODS.has(request.method) && !csrfMatches(session, request.headers['x-csrf-token'])) {
      throw new AppError('FORBIDDEN', 'A state-changing dashboard request needs the X-CSRF-Token of its session.');
    }
    request.headers.authorization = `Bearer ${session.secret}`;
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => securityHeaders(reply));

    scope.post('/dashboard/api/session', { schema: { hide: true } }, async (request, reply) => {
      if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
        throw new AppError('BAD_REQUEST', 'Sign in with a JSON body {"key": "..."}.');
      }
      const origin = request.headers.origin;
      if (origin !== undefined && origin !== `${secure(request) ? 'https' : 'http'}://${request.headers.host}`) {
        throw new AppError('FORBIDDEN', 'Sign-in from another origin is refused.');
      }
      const key = (request.body as { key?: unknown } | null)?.key;
      if (typeof key !== 'string' || key.length === 0 || key.length > 512) throw new AppError('UNAUTHORIZED', 'Unknown key.');
      const principal = await options.authenticate(key.trim());
      if (!principal) throw new AppError('UNAUTHORIZED', 'Unknown key.');
      const session = await sessions.create(
        key.trim(),
        principal.tier === 'merchant' ? { tier: 'merchant', accountId: principal.accountId } : { tier: 'operator', accountId: null },
      );
      reply.header('set-cookie', sessionCookie(session, { secure: secure(request), now: sessionNow() }));
      reply.header('cache-control', 'no-store');
      return { session: await sessionView(session) };
    });

    scope.get('/dashboard/api/session', { schema: { hide: true } }, async (request, reply) => {
      const session = await signedIn(request);
      reply.header('cache-control', 'no-store');
      return { session: await sessionView(session) };
    });

    scope.delete('/dashboard/api/session', { schema: { hide: true } }, async (request, reply) => {
      const session = await sessionOf(request);
      if (session && !csrfMatches(session, request.headers['x-csrf-token'])) {
        throw new AppError('FORBIDDEN', 'Sign-out needs the X-CSRF-Token of its session.');
      }
      await sessions.destroy(session?.id);
      reply.header('set-cookie', sessionCookie(null, { secure: secure(request), now: sessionNow() }));
      return { success: true };
    });

    // The filtered payment list as CSV, streamed page by page through GET /transactions (csv-export.ts).
    scope.get('/dashboard/api/transactions.csv', { schema: { hide: true } }, async (request, reply) => {
      const session = await signedIn(request);
      const filters = new URLSearchParams(request.url.split('?')[1] ?? '');
      const fetchPage = async (query: URLSearchParams): Promise<ListPage> => {
        const res = await app.inject({ method: 'GET', url: `/public/api/v1/transactions?${query}`, headers: { authorization: `Bearer ${session.secret}` } });
        return { status: res.statusCode, headers: res.headers, body: res.json() };
      };
      let stream;
      try {
        stream = await csvStream(filters, fetchPage);
      } catch (e) {
        const page = (e as { page?: ListPage }).page;
        if (!page) throw e;
        return reply.code(page.status).type('application/json; charset=utf-8').send(page.body);
      }
      const day = new Date(options.now()).toISOString().slice(0, 10);
      reply.header('cache-control', 'no-store');
      reply.header('content-disposition', `attachment; filename="payments-${day}.csv"`);
      return reply.type('text/csv; charset=utf-8').send(stream);
    });

    scope.get('/dashboard', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard/', 302));

    if (fs.existsSync(`${distDir}/index.html`)) {
      await scope.register(fastifyStatic, {
        root: distDir,
        prefix: '/dashboard/',
        index: ['index.html'],
        cacheControl: false,
        setHeaders: (res, path) => {
          res.setHeader('cache-control', path.endsWith('index.html') ? 'no-store' : 'public, max-age=31536000, immutable');
        },
      });
    } else {
      scope.get('/dashboard/', { schema: { hide: true } }, async (_request, reply) =>
        reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build:dashboard` (npm ci does it).\n'),
      );
    }
  });
  return sessions;
}
