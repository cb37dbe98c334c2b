/**
 * Helpers for the webhook suites: a local HTTP receiver (on 127.0.0.1 and ::1, so that
 * `localhost` — the approved domain of the harness's points of sale — works either way), event
 * production through the outbox port, and a poll helper.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, type TestMerchant, type TestRuntime } from '../support/harness.js';

export interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  status: number;
}

export interface Receiver {
  url(path: string): string;
  at(path: string): Hit[];
  /** Answer `status` to every request on `path` from now on (default 200). */
  answer(path: string, status: number): void;
  /** Answer `status` to the next `times` requests on `path`, then 200. */
  answerTimes(path: string, status: number, times: number): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hits: Hit[] = [];
  const fixed = new Map<string, number>();
  const scripted = new Map<string, { status: number; remaining: number }>();
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      let status = fixed.get(path) ?? 200;
      const script = scripted.get(path);
      if (script && script.remaining > 0) {
        script.remaining -= 1;
        status = script.status;
      }
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      hits.push({ path, headers: req.headers, body, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  };
  const v4 = http.createServer(handler);
  await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
  const { port } = v4.address() as AddressInfo;
  const v6 = http.createServer(handler);
  const v6ok = await new Promise<boolean>((resolve) => {
    v6.once('error', () => resolve(false));
    v6.listen(port, '::1', () => resolve(true));
  });
  const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: (path) => `http://localhost:${port}${path}`,
    at: (path) => hits.filter((h) => h.path === path),
    answer: (path, status) => void fixed.set(path, status),
    answerTimes: (path, status, times) => void scripted.set(path, { status, remaining: times }),
    async close() {
      await close(v4);
      if (v6ok) await close(v6);
    },
  };
}

/** Polls `fn` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let counter = 0;
export const newPath = (prefix = 'wh') => `/${prefix}/${++counter}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * Writes a domain event to the outbox the way the payment flows do (EventOutbox.append inside a
 * store transaction): the webhook module's input. The flows' own events are covered end to end
 * in the happy suite.
 */
export async function emit(t: TestRuntime, m: TestMerchant, event: string, data: unknown = { transaction: { id: 'TESTTX00001' } }): Promise<string> {
  return t.runtime.store.transaction((repos) => repos.events.append(m.accountId, event, data));
}

export async function register(m: TestMerchant, rx: Receiver, events: string[], options: { path?: string; secret?: string } = {}) {
  const path = options.path ?? newPath();
  const secret = options.secret ?? `whsec-${Math.random().toString(36).slice(2, 10)}`;
  const res = await m.api.post(`${API}/webhooks`, { url: rx.url(path), events, secret });
  if (res.status !== 200) throw new Error(`register webhook: HTTP ${res.status} ${res.text}`);
  return {
    webhook: res.body.webhook as { id: string; url: string; events: string[]; pausedAt: string | null; pauseReason: string | null; createdAt: string },
    path,
    secret,
  };
}

/** Moves the service clock forward through the sandbox API (what fell due then runs). */
export async function advance(t: TestRuntime, seconds: number): Promise<void> {
  const res = await t.operator.post('/sandbox/v1/clock', { advanceSeconds: seconds });
  if (res.status !== 200) throw new Error(`advance clock: HTTP ${res.status} ${res.text}`);
}
