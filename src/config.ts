/**
 * Environment → typed Config, validated once at start (INTERFACE §10). The only module that reads
 * process.env. A bad value raises ConfigError naming the variable; main.ts prints it as one line.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import path from 'node:path';

export type DatabaseConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** Directory for generated secrets (operator key, vault key) and the embedded database. */
  dataDir: string;
  operatorKey: string | null;
  sandbox: boolean;
  sandboxLatencyMs: number;
  /** Sandbox only: a file where the simulator appends one JSON line per authorization it answers (crash tests). */
  sandboxAcquirerLog?: string | null;
  rateLimits: 'default' | 'off';
  allowPrivateUrls: boolean;
  vaultKey: Buffer | null;
  publicUrl: string;
  logLevel: string;
  workers: boolean;
  shutdownTimeoutMs: number;
  /**
   * Backlog bound (PAYMENTS_MAX_BACKLOG): once this many jobs are due and not done, asynchronous
   * work (MIT, MIT batch, asynchronous payout) is refused with 503 and Retry-After. 0: no bound.
   */
  maxBacklog: number;
  /**
   * Lag bound (PAYMENTS_MAX_LAG_MS): in a process that runs workers, the backlog bound is also
   * reached once the due jobs are more than this much work at the workers' measured pace. 0: off.
   */
  maxLagMs: number;
  /**
   * PostgreSQL connections of this process (PAYMENTS_DB_POOL_SIZE). Each statement sent wakes its
   * backend; more connections than the database has cores to run them make the backends and the
   * service compete for the CPU instead of working (issue 10: on 2 cores, 20 → 8 connections took
   * MIT → callback from about 410 to 560/s with the callbacks keeping pace). Half of them carry the
   * statements outside transactions, shared (storage/postgres/shared-clients.ts).
   */
  dbPoolSize: number;
  /**
   * Ingestion caps (INTERFACE §11.8), per merchant per minute of the service clock, counted in the
   * database so that they hold for every process of the deployment: MIT transactions accepted
   * through POST /mit (PAYMENTS_MIT_CAP_PER_MINUTE, default 300) and through POST /mit/batch,
   * entries counted (PAYMENTS_MIT_BATCH_CAP_PER_MINUTE, default 30 000). 0: no cap. Independent of
   * PAYMENTS_RATE_LIMITS (the request buckets of §5).
   */
  mitCapPerMinute: number;
  mitBatchCapPerMinute: number;
  /**
   * REDIS_URL: where the request rate limits of §5 keep their buckets, shared by every process of
   * the deployment. Unset (null): a PostgreSQL table, or memory on SQLite (src/rate-limiter.ts).
   */
  redisUrl?: string | null;
  /** PAYMENTS_REDIS_KEY_PREFIX: put before every Redis key, so that deployments can share a Redis (default `payments:`). */
  redisKeyPrefix?: string;
  /** The Clearhaus connector (INTERFACE §12.2); null without a signing key: `clearhaus` agreements are refused then. */
  clearhaus?: ClearhausConfig | null;
  /** The 3-D Secure server of agreements that name one (INTERFACE §13). */
  threeDSecure?: ThreeDSecureConfig;
}

/** INTERFACE §13: where 3dsecure.io is, and how long one of its calls may take. */
export interface ThreeDSecureConfig {
  /** THREEDS_URL: the sandbox while PAYMENTS_SANDBOX=1, else the live service. */
  url: string;
  /** THREEDS_TIMEOUT_MS (default 10 000). */
  timeoutMs: number;
}

export const THREEDS_SANDBOX_URL = 'https://service.sandbox.3dsecure.io';
export const THREEDS_LIVE_URL = 'https://service.3dsecure.io';
export const DEFAULT_THREEDS_TIMEOUT_MS = 10_000;

/** INTERFACE §12.2. The key file is read once at start (runtime.ts), never here and never echoed. */
export interface ClearhausConfig {
  /** CLEARHAUS_URL: the test host while PAYMENTS_SANDBOX=1, else the live one. */
  url: string;
  /** CLEARHAUS_SIGNING_KEY_ID: the partner's signing API key (a uuid). */
  signingKeyId: string;
  /** CLEARHAUS_SIGNING_KEY_FILE: its RSA private key (PEM). */
  signingKeyFile: string;
  /** CLEARHAUS_TIMEOUT_MS (default 40 000). */
  timeoutMs: number;
  /** CLEARHAUS_MAX_IN_FLIGHT (default 32): requests to Clearhaus at once per process. */
  maxInFlight: number;
}

export const CLEARHAUS_TEST_URL = 'https://gateway.test.clearhaus.com';
export const CLEARHAUS_LIVE_URL = 'https://gateway.clearhaus.com';
export const DEFAULT_CLEARHAUS_TIMEOUT_MS = 40_000;
export const DEFAULT_CLEARHAUS_MAX_IN_FLIGHT = 32;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function clearhaus(env: Env, sandbox: boolean): ClearhausConfig | null {
  const keyId = env.CLEARHAUS_SIGNING_KEY_ID || null;
  const keyFile = env.CLEARHAUS_SIGNING_KEY_FILE || null;
  if (keyId === null && keyFile === null) return null;
  if (keyId === null) throw new ConfigError('CLEARHAUS_SIGNING_KEY_ID', 'is required with CLEARHAUS_SIGNING_KEY_FILE (the partner signing API key, a uuid)');
  if (keyFile === null)
    throw new ConfigError('CLEARHAUS_SIGNING_KEY_FILE', 'is required with CLEARHAUS_SIGNING_KEY_ID (a file holding its RSA private key, PEM)');
  if (!UUID.test(keyId)) throw new ConfigError('CLEARHAUS_SIGNING_KEY_ID', 'must be the signing API key, a uuid');
  const url = (env.CLEARHAUS_URL || (sandbox ? CLEARHAUS_TEST_URL : CLEARHAUS_LIVE_URL)).replace(/\/+$/, '');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error();
  } catch {
    throw new ConfigError('CLEARHAUS_URL', `must be an http(s) URL, got "${url}"`);
  }
  return {
    url,
    signingKeyId: keyId,
    signingKeyFile: path.resolve(keyFile),
    timeoutMs: integer(env, 'CLEARHAUS_TIMEOUT_MS', DEFAULT_CLEARHAUS_TIMEOUT_MS, 100, 600_000),
    maxInFlight: integer(env, 'CLEARHAUS_MAX_IN_FLIGHT', DEFAULT_CLEARHAUS_MAX_IN_FLIGHT, 1, 10_000),
  };
}

function threeDSecure(env: Env, sandbox: boolean): ThreeDSecureConfig {
  const url = (env.THREEDS_URL || (sandbox ? THREEDS_SANDBOX_URL : THREEDS_LIVE_URL)).replace(/\/+$/, '');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error();
  } catch {
    throw new ConfigError('THREEDS_URL', `must be an http(s) URL, got "${url}"`);
  }
  return { url, timeoutMs: integer(env, 'THREEDS_TIMEOUT_MS', DEFAULT_THREEDS_TIMEOUT_MS, 100, 120_000) };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Due jobs not yet done before asynchronous work is refused: about 25 s of work for one worker
 * process at the 2 000 payments/s the benchmarks hold, and ten merchants' full MIT-batch bursts
 * (10 × 500 entries each); beyond it every new payment only waits longer for its acquirer call.
 */
export const DEFAULT_MAX_BACKLOG = 50_000;

/**
 * Half a second of work at the workers' pace. The pace counts every job settled, a MIT's drive and
 * its callback alike, while the backlog under overload is mostly drives, each with a callback to
 * come: the callbacks run late by a few times this. Measured at twice the sustainable MIT rate on
 * SQLite (2 cores): 2 s let the API take CPU from the workers (callbacks at 70–85 % of the
 * sustained rate, answer → callback p99 4–5 s); 500 ms kept them at 97 %, p99 1.9 s.
 */
export const DEFAULT_MAX_LAG_MS = 500;

/** PostgreSQL connections per process: a few per core of a small database server (measured on 2 cores: 6–10 best, 20 worse). */
export const DEFAULT_DB_POOL_SIZE = 8;

/** INTERFACE §11.8: MIT transactions per merchant per minute through POST /mit and through POST /mit/batch. */
export const DEFAULT_MIT_CAP_PER_MINUTE = 300;
export const DEFAULT_MIT_BATCH_CAP_PER_MINUTE = 30_000;
/** Highest configurable cap: far beyond any deployment, still exact in the counter's 32-bit column. */
export const MAX_INGESTION_CAP = 1_000_000_000;

export const DEFAULT_REDIS_KEY_PREFIX = 'payments:';

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1 or 0, got "${raw}"`);
}

function database(env: Env): DatabaseConfig {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return { kind: 'sqlite', path: path.resolve('data/payments.db') };
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL', `is not a valid postgres:// URL`);
    }
    return { kind: 'postgres', url: raw };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) && !raw.startsWith('sqlite:')) {
    throw new ConfigError('DATABASE_URL', `must be postgres://..., sqlite:PATH or a file path, got scheme "${raw.split(':')[0]}"`);
  }
  const file = raw.startsWith('sqlite:') ? raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : raw;
  if (file === '') throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path');
  return { kind: 'sqlite', path: path.resolve(file) };
}

function redisUrl(env: Env): string | null {
  const raw = env.REDIS_URL;
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a valid redis:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new ConfigError('REDIS_URL', `must be redis://... or rediss://..., got scheme "${url.protocol.slice(0, -1)}"`);
  return raw;
}

function redisKeyPrefix(env: Env): string {
  const raw = env.PAYMENTS_REDIS_KEY_PREFIX;
  if (raw === undefined || raw === '') return DEFAULT_REDIS_KEY_PREFIX;
  if (!/^[\x21-\x7e]{1,100}$/.test(raw)) throw new ConfigError('PAYMENTS_REDIS_KEY_PREFIX', 'must be 1 to 100 printable ASCII characters without spaces');
  return raw;
}

function vaultKey(env: Env): Buffer | null {
  const raw = env.PAYMENTS_VAULT_KEY;
  if (raw === undefined || raw === '') return null;
  const hex = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : null;
  const b64 = hex ? null : Buffer.from(raw, 'base64');
  const key = hex ?? b64;
  if (!key || key.length !== 32) throw new ConfigError('PAYMENTS_VAULT_KEY', 'must be 32 bytes as 64 hex characters or base64');
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  // A host name or an IP address to bind to; a URL or a host:port here is a common slip.
  if (!(isIP(host) || /^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/.test(host))) {
    throw new ConfigError('HOST', `must be a host name or an IP address (no scheme, no port), got "${host}"`);
  }
  const db = database(env);
  const rateLimits = env.PAYMENTS_RATE_LIMITS || 'default';
  if (rateLimits !== 'default' && rateLimits !== 'off') {
    throw new ConfigError('PAYMENTS_RATE_LIMITS', `must be "default" or "off", got "${rateLimits}"`);
  }
  const operatorKey = env.PAYMENTS_OPERATOR_KEY || null;
  if (operatorKey !== null && operatorKey.length < 16) {
    throw new ConfigError('PAYMENTS_OPERATOR_KEY', 'must be at least 16 characters');
  }
  // It is sent as `Authorization: Bearer <key>`: whitespace or control characters could never match.
  if (operatorKey !== null && !/^[\x21-\x7e]+$/.test(operatorKey)) {
    throw new ConfigError('PAYMENTS_OPERATOR_KEY', 'must be printable ASCII without spaces');
  }
  const publicUrl = (env.PAYMENTS_PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    const url = new URL(publicUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError('PAYMENTS_PUBLIC_URL', `must be an http(s) URL, got "${publicUrl}"`);
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }
  const sandbox = flag(env, 'PAYMENTS_SANDBOX', true);
  return {
    port,
    host,
    database: db,
    dataDir: db.kind === 'sqlite' ? path.dirname(db.path) : path.resolve(env.PAYMENTS_DATA_DIR || 'data'),
    operatorKey,
    sandbox,
    sandboxLatencyMs: integer(env, 'PAYMENTS_SANDBOX_LATENCY_MS', 50, 0, 600_000),
    sandboxAcquirerLog: env.PAYMENTS_SANDBOX_ACQUIRER_LOG ? path.resolve(env.PAYMENTS_SANDBOX_ACQUIRER_LOG) : null,
    rateLimits,
    allowPrivateUrls: flag(env, 'PAYMENTS_ALLOW_PRIVATE_URLS', false),
    vaultKey: vaultKey(env),
    publicUrl,
    logLevel,
    workers: flag(env, 'PAYMENTS_WORKERS', true),
    shutdownTimeoutMs: integer(env, 'PAYMENTS_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    // The gauge counts up to the bound every 250 ms: a bound far above the default makes that count expensive.
    maxBacklog: integer(env, 'PAYMENTS_MAX_BACKLOG', DEFAULT_MAX_BACKLOG, 0, 1_000_000),
    maxLagMs: integer(env, 'PAYMENTS_MAX_LAG_MS', DEFAULT_MAX_LAG_MS, 0, 3_600_000),
    dbPoolSize: integer(env, 'PAYMENTS_DB_POOL_SIZE', DEFAULT_DB_POOL_SIZE, 1, 1_000),
    mitCapPerMinute: integer(env, 'PAYMENTS_MIT_CAP_PER_MINUTE', DEFAULT_MIT_CAP_PER_MINUTE, 0, MAX_INGESTION_CAP),
    mitBatchCapPerMinute: integer(env, 'PAYMENTS_MIT_BATCH_CAP_PER_MINUTE', DEFAULT_MIT_BATCH_CAP_PER_MINUTE, 0, MAX_INGESTION_CAP),
    redisUrl: redisUrl(env),
    redisKeyPrefix: redisKeyPrefix(env),
    clearhaus: clearhaus(env, sandbox),
    threeDSecure: threeDSecure(env, sandbox),
  };
}

/** A short fingerprint for logs, never the secret itself. */
export const fingerprint = (secret: string): string => createHash('sha256').update(secret).digest('hex').slice(0, 8);
