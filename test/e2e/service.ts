/**
 * End-to-end plumbing: the real service as a child process (src/main, the environment of
 * INTERFACE §10) on a fresh database, a small JSON client over real HTTP, and a
 * merchant bootstrapped through the partner and management API like an integrator would.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { TEST_DATABASE_URL, type StoreKind } from '../support/stores.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const API = '/public/api/v1';

/**
 * Node's arguments that run the service's src/main: the compiled src/main.js beside it when the
 * tests run compiled (scripts/test-build.mjs), else src/main.ts through tsx, whose module hooks
 * cost every start of the service about a second more CPU, as they did each test file.
 */
export const SERVICE_MAIN = fs.existsSync(path.join(ROOT, 'src', 'main.js')) ? ['src/main.js'] : ['--import', 'tsx', 'src/main.ts'];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface E2eDatabase {
  /** DATABASE_URL for the service. */
  url: string;
  /** Scratch directory (logs, ledgers, the SQLite file). */
  dir: string;
  drop(): Promise<void>;
}

/** A fresh database: a SQLite file, or `create database` on TEST_DATABASE_URL's server. */
export async function freshDatabase(kind: StoreKind, label: string): Promise<E2eDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `payments-${label}-`));
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  if (kind === 'sqlite') return { url: path.join(dir, 'payments.db'), dir, drop: async () => removeDir() };
  const name = `e2e_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dir,
    async drop() {
      await admin(`drop database if exists ${name} with (force)`).catch(() => undefined);
      removeDir();
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface Client {
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
  get(url: string): Promise<JsonResponse>;
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
  /** Like post, but insists on 200 and returns the body. */
  must(method: string, url: string, body?: unknown): Promise<any>;
}

export function client(baseUrl: string, token: string | null): Client {
  const request: Client['request'] = async (method, url, body, headers = {}) => {
    const h: Record<string, string> = { ...headers };
    if (token) h.authorization = `Bearer ${token}`;
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: h,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  };
  return {
    request,
    get: (url) => request('GET', url),
    post: (url, body, headers) => request('POST', url, body, headers),
    async must(method, url, body) {
      const res = await request(method, url, body);
      if (res.status !== 200) throw new Error(`${method} ${url}: HTTP ${res.status} ${res.text}`);
      return res.body;
    },
  };
}

export interface ServiceProcess {
  baseUrl: string;
  pid: number;
  logPath: string;
  /** The operator key as Bearer (partner tier, sandbox routes). */
  operator: Client;
  /** SIGKILL: no shutdown hook runs, in-flight work is lost mid-way. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit (graceful shutdown). */
  stop(): Promise<void>;
  logTail(lines?: number): string;
}

export interface ServiceOptions {
  databaseUrl: string;
  dir: string;
  operatorKey: string;
  /** Stable across restarts: stored card numbers stay readable. */
  vaultKey: string;
  latencyMs?: number;
  env?: Record<string, string>;
  label?: string;
}

/** How often a start is tried again when another process took the free port first. */
const PORT_ATTEMPTS = 5;

/**
 * Starts the service (SERVICE_MAIN) and waits until it answers as itself (or throws with the
 * log's tail). A port found free can be taken by another test's service before this one binds it;
 * that start is then made again on a new port.
 */
export async function startService(o: ServiceOptions): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(o);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOnFreePort(o: ServiceOptions): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logPath = path.join(o.dir, `${o.label ?? 'service'}-${port}.log`);
  const logFd = fs.openSync(logPath, 'a');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: o.databaseUrl,
    PAYMENTS_OPERATOR_KEY: o.operatorKey,
    PAYMENTS_VAULT_KEY: o.vaultKey,
    PAYMENTS_DATA_DIR: o.dir,
    PAYMENTS_SANDBOX: '1',
    PAYMENTS_ALLOW_PRIVATE_URLS: '1',
    PAYMENTS_RATE_LIMITS: 'off',
    PAYMENTS_SANDBOX_LATENCY_MS: String(o.latencyMs ?? 20),
    PAYMENTS_PUBLIC_URL: baseUrl,
    LOG_LEVEL: 'warn',
    ...o.env,
  };
  delete env.NODE_TEST_CONTEXT; // set by node --test for its children; the service is not a test
  const child: ChildProcess = spawn(process.execPath, SERVICE_MAIN, { cwd: ROOT, env, stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const logTail = (lines = 30) => {
    try {
      return fs.readFileSync(logPath, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const handle: ServiceProcess = {
    baseUrl,
    pid: child.pid!,
    logPath,
    operator: client(baseUrl, o.operatorKey),
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
    async stop() {
      if (!exited) child.kill('SIGTERM');
      // An unref'd grace timer: it must not keep the test process alive once the service is gone.
      await Promise.race([exit, new Promise((r) => setTimeout(r, 15_000).unref())]);
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
    logTail,
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) {
      const log = logTail();
      if (log.includes('cannot listen')) throw new PortTaken(log);
      throw new Error(`the service exited before answering; log ${logPath}:\n${log}`);
    }
    // Answering with this start's operator key proves the port is this child's, not another test's
    // (a start without one, whose key the service generates, can only wait for /healthz).
    if ((await readyStatus(baseUrl, o.operatorKey || null)) === 200) return handle;
    if (Date.now() > deadline) {
      await handle.kill();
      throw new Error(`the service did not answer as itself within 60 s; log ${logPath}:\n${logTail()}`);
    }
    await sleep(100);
  }
}

async function readyStatus(baseUrl: string, operatorKey: string | null): Promise<number | null> {
  try {
    const res = await fetch(operatorKey ? `${baseUrl}${API}/partner/accounts?perPage=1` : `${baseUrl}/healthz`, {
      headers: operatorKey ? { authorization: `Bearer ${operatorKey}` } : {},
      signal: AbortSignal.timeout(1000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return null; // not listening yet
  }
}

export interface Merchant {
  accountId: string;
  /** The merchant's access token (valid across restarts: it lives in the database). */
  token: string;
  api: Client;
  pointOfSaleId: string;
  /** The point of sale's webhookAuthentication: the Authorization header of its callbacks. */
  callbackAuthorization: string;
}

/** Partner account → active → access token → ONLINE point of sale on `localhost`, all over HTTP. */
export async function bootstrapMerchant(service: ServiceProcess, name = 'E2E Shop'): Promise<Merchant> {
  const tag = randomBytes(4).toString('hex');
  const op = service.operator;
  const { account } = await op.must('POST', `${API}/partner/accounts`, {
    name,
    email: `e2e-${tag}@example.com`,
    currencyCode: 'DKK',
    timezone: 'UTC',
    domain: 'localhost',
  });
  await op.must('PATCH', `${API}/partner/accounts/${account.id}/activate`);
  const { accessToken } = await op.must('POST', `${API}/partner/accounts/${account.id}/access-token`, { environment: 'test' });
  const api = client(service.baseUrl, accessToken);
  const callbackAuthorization = `Bearer cb-${tag}`;
  const { pointOfSale } = await api.must('POST', `${API}/management/point-of-sales`, {
    name,
    domain: 'localhost',
    webhookAuthentication: callbackAuthorization,
    type: 'ONLINE',
  });
  return { accountId: account.id, token: accessToken, api, pointOfSaleId: pointOfSale.id, callbackAuthorization };
}

/** Re-points a merchant's client at a restarted service. */
export function reattach(merchant: Merchant, service: ServiceProcess): Merchant {
  return { ...merchant, api: client(service.baseUrl, merchant.token) };
}

export const newKeys = () => ({ operatorKey: `op_${randomBytes(24).toString('hex')}`, vaultKey: randomBytes(32).toString('hex') });

/**
 * Exactly once: every answered id is listed once, one transaction per request reference (no
 * re-execution made a twin), and none that no answer accounts for.
 */
export function assertExactlyOnce(transactions: Array<{ id: string; reference: string; state: string }>, expected: Set<string>): void {
  const countById = new Map<string, number>();
  const countByReference = new Map<string, number>();
  for (const tx of transactions) {
    countById.set(tx.id, (countById.get(tx.id) ?? 0) + 1);
    countByReference.set(tx.reference, (countByReference.get(tx.reference) ?? 0) + 1);
  }
  for (const id of expected) assert.equal(countById.get(id), 1, `transaction ${id} exists exactly once`);
  assert.deepEqual(
    [...countByReference].filter(([, n]) => n > 1),
    [],
    'one transaction per request (reference), retries included',
  );
  const orphans = transactions.filter((tx) => !expected.has(tx.id));
  assert.deepEqual(
    orphans.map((tx) => `${tx.id} ${tx.reference} ${tx.state}`),
    [],
    'no transaction that no answer (or retry) accounts for',
  );
}

/** An UNSCHEDULED subscription of `customerId`, made the way a shop makes one: a CIT session of amount 0 paid with `card` in the sandbox. */
export async function subscribeByCit(svc: ServiceProcess, merchant: Merchant, customerId: string, card: Record<string, unknown>): Promise<string> {
  const cit = await merchant.api.must('POST', `${API}/cit`, {
    pointOfSaleId: merchant.pointOfSaleId,
    amount: 0,
    currency: 'DKK',
    customerId,
    subscription: { type: 'UNSCHEDULED' },
  });
  await svc.operator.must('POST', `/sandbox/v1/sessions/${cit.session.id}/complete`, { card });
  for (let i = 0; i < 100; i++) {
    const { session } = await merchant.api.must('GET', `${API}/sessions/${cit.session.id}`);
    if (session.state === 'COMPLETED') return session.subscriptionId as string;
    await sleep(50);
  }
  throw new Error('the CIT session did not complete with a subscription');
}
