/**
 * Starts a real runtime (migrated store, services, HTTP app) for a test, on SQLite or PostgreSQL,
 * and offers a small client over app.inject plus a helper that creates a ready merchant through
 * the partner and management API — the same way an integrator would.
 */
import { randomBytes } from 'node:crypto';
import { type Config, DEFAULT_DB_POOL_SIZE, DEFAULT_MAX_BACKLOG, DEFAULT_MIT_BATCH_CAP_PER_MINUTE, DEFAULT_MIT_CAP_PER_MINUTE } from '../../src/config.js';
import type { ThreeDSServer } from '../../src/connectors/threeds/three-d-secure.js';
import type { Acquirer } from '../../src/connectors/acquirer.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type StoreKind, type TestDatabase } from './stores.js';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface TestClient {
  request(
    method: string,
    url: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string>; idempotencyKey?: string; raw?: string; contentType?: string },
  ): Promise<TestResponse>;
  get(url: string, options?: { token?: string | null; headers?: Record<string, string> }): Promise<TestResponse>;
  post(url: string, body?: unknown, options?: { token?: string | null; headers?: Record<string, string>; idempotencyKey?: string }): Promise<TestResponse>;
  patch(url: string, body?: unknown, options?: { token?: string | null; headers?: Record<string, string>; idempotencyKey?: string }): Promise<TestResponse>;
  delete(url: string, options?: { token?: string | null; headers?: Record<string, string>; idempotencyKey?: string }): Promise<TestResponse>;
}

export interface TestMerchant {
  accountId: string;
  token: string;
  api: TestClient;
  onlinePointOfSaleId: string;
  physicalPointOfSaleId: string | null;
  terminalIds: string[];
}

export interface TestRuntime {
  kind: StoreKind;
  runtime: Runtime;
  database: TestDatabase;
  operatorKey: string;
  /** Client with the operator key. Paths are absolute (`/public/api/v1/...`, `/sandbox/v1/...`). */
  operator: TestClient;
  client(token: string | null): TestClient;
  createMerchant(options?: { capabilities?: { moto?: boolean; syncPayout?: boolean }; physical?: boolean }): Promise<TestMerchant>;
  close(): Promise<void>;
}

export const API = '/public/api/v1';

export function testConfig(database: TestDatabase, overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    database: database.config,
    dataDir: database.dataDir,
    operatorKey: `op_${randomBytes(16).toString('hex')}`,
    sandbox: true,
    sandboxLatencyMs: 0,
    rateLimits: 'off',
    allowPrivateUrls: true,
    vaultKey: null,
    publicUrl: 'http://127.0.0.1:8080',
    logLevel: 'silent',
    workers: true,
    shutdownTimeoutMs: 2000,
    maxBacklog: DEFAULT_MAX_BACKLOG,
    // Off: a test's few jobs give no steady pace, and a refusal by it would depend on timing.
    maxLagMs: 0,
    dbPoolSize: DEFAULT_DB_POOL_SIZE,
    mitCapPerMinute: DEFAULT_MIT_CAP_PER_MINUTE,
    mitBatchCapPerMinute: DEFAULT_MIT_BATCH_CAP_PER_MINUTE,
    ...overrides,
  };
}

export async function startTestRuntime(
  kind: StoreKind,
  overrides: Partial<Config> = {},
  options: {
    startWorkers?: boolean;
    acquirer?: Acquirer;
    /** How old the backlog figure may get before a check counts again (default 250 ms; 0: every check counts). */
    backlogRefreshMs?: number;
    /** The deployment has a Clearhaus signing key: `clearhaus` acquirer agreements are accepted (default: refused). */
    clearhausAvailable?: boolean;
    /** The Clearhaus connector (pointed at a fake): `clearhaus` agreements are accepted and routed to it. */
    clearhaus?: Acquirer;
    /** The 3-D Secure server (pointed at a fake) of agreements that name 3dsecure.io. */
    threeDSServer?: ThreeDSServer;
    /** Captures the log (e.g. to grep it for card numbers). */ logDestination?: { write(line: string): void };
  } = {},
): Promise<TestRuntime> {
  const database = await createTestDatabase(kind, { migrated: true });
  const config = testConfig(database, overrides);
  const logger = createLogger(config.logLevel, options.logDestination as Parameters<typeof createLogger>[1]);
  const runtime = await createRuntime(config, {
    logger,
    connectOptions: database.schema ? { schema: database.schema } : {},
    startWorkers: options.startWorkers ?? true,
    ...(options.acquirer ? { acquirer: options.acquirer } : {}),
    ...(options.backlogRefreshMs === undefined ? {} : { backlogRefreshMs: options.backlogRefreshMs }),
    ...(options.clearhausAvailable === undefined ? {} : { clearhausAvailable: options.clearhausAvailable }),
    ...(options.clearhaus ? { clearhaus: options.clearhaus } : {}),
    ...(options.threeDSServer ? { threeDSServer: options.threeDSServer } : {}),
  });
  await runtime.app.ready();

  const client = (token: string | null): TestClient => {
    const request: TestClient['request'] = async (method, url, o = {}) => {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      const bearer = o.token === undefined ? token : o.token;
      if (bearer) headers.authorization = `Bearer ${bearer}`;
      if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey;
      let payload: string | undefined;
      if (o.raw !== undefined) {
        payload = o.raw;
        if (o.contentType) headers['content-type'] = o.contentType;
      } else if (o.body !== undefined) {
        payload = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await runtime.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
      let body: unknown = null;
      try {
        body = res.body ? JSON.parse(res.body) : null;
      } catch {
        body = null;
      }
      return { status: res.statusCode, headers: res.headers as TestResponse['headers'], body, text: res.body };
    };
    return {
      request,
      get: (url, o) => request('GET', url, o),
      post: (url, body, o) => request('POST', url, { ...o, body }),
      patch: (url, body, o) => request('PATCH', url, { ...o, body }),
      delete: (url, o) => request('DELETE', url, o),
    };
  };

  const operator = client(config.operatorKey);
  const must = (res: TestResponse, what: string) => {
    if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${res.text}`);
    return res.body;
  };

  return {
    kind,
    runtime,
    database,
    operatorKey: config.operatorKey!,
    operator,
    client,
    async createMerchant({ capabilities = { moto: true, syncPayout: true }, physical = true } = {}) {
      const tag = randomBytes(4).toString('hex');
      const { account } = must(
        await operator.post(`${API}/partner/accounts`, {
          name: `Merchant ${tag}`,
          email: `m-${tag}@example.com`,
          currencyCode: 'DKK',
          timezone: 'UTC',
          domain: 'localhost',
        }),
        'create account',
      );
      must(await operator.patch(`${API}/partner/accounts/${account.id}/activate`), 'activate');
      const { accessToken } = must(await operator.post(`${API}/partner/accounts/${account.id}/access-token`, { environment: 'test' }), 'token');
      must(await operator.patch(`${API}/partner/accounts/${account.id}/capabilities`, capabilities), 'capabilities');
      const api = client(accessToken);
      const online = must(
        await api.post(`${API}/management/point-of-sales`, {
          name: 'Web shop',
          domain: 'localhost',
          webhookAuthentication: `Bearer cb-${tag}`,
          type: 'ONLINE',
        }),
        'online pos',
      );
      let physicalId: string | null = null;
      const terminalIds: string[] = [];
      if (physical) {
        const pos = must(
          await api.post(`${API}/management/point-of-sales`, {
            name: 'Shop',
            domain: 'localhost',
            webhookAuthentication: `Bearer cb-${tag}`,
            type: 'PHYSICAL',
          }),
          'physical pos',
        );
        physicalId = pos.pointOfSale.id;
        for (const name of ['Till 1', 'Till 2']) {
          terminalIds.push(must(await api.post(`${API}/management/point-of-sales/${physicalId}/terminals`, { name }), 'terminal').terminal.id);
        }
      }
      return { accountId: account.id, token: accessToken, api, onlinePointOfSaleId: online.pointOfSale.id, physicalPointOfSaleId: physicalId, terminalIds };
    },
    async close() {
      await runtime.close();
      await database.drop();
    },
  };
}
