/**
 * The request rate limits of INTERFACE §5 hold for the deployment, not per process: two real
 * service processes (A and B) on one PostgreSQL database, with PAYMENTS_RATE_LIMITS=default, and a
 * merchant whose requests alternate between them gets the documented limit once, not twice —
 *   - capture/void/refund/renew: burst 5 per transaction: 5 pass across A and B (the remaining
 *     count going down from one process to the other), the 6th is 429 on either; at once too;
 *   - lists: burst 30 across both, the 31st is 429.
 * Once with the buckets in PostgreSQL (no REDIS_URL), once in Redis (REDIS_URL, a key prefix of
 * this run's own); each checks that the buckets are where they should be.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { newTransactionId } from '../../src/shared/ids.js';
import { POSTGRES_SKIP_MESSAGE, postgresReachable } from '../support/stores.js';
import {
  API,
  bootstrapMerchant,
  client,
  type Client,
  type E2eDatabase,
  freshDatabase,
  type Merchant,
  newKeys,
  type ServiceProcess,
  startService,
} from '../e2e/service.js';
import { REDIS_SKIP_MESSAGE, redisReachable, TEST_REDIS_URL } from './redis-reachable.js';

const postgres = await postgresReachable();
if (!postgres) console.log(`# ${POSTGRES_SKIP_MESSAGE}`);
const redis = postgres && (await redisReachable());
if (postgres && !redis) console.log(`# ${REDIS_SKIP_MESSAGE}`);

interface Deployment {
  database: E2eDatabase;
  a: ServiceProcess;
  b: ServiceProcess;
  merchant: Merchant;
  /** The merchant's client on each process. */
  viaA: Client;
  viaB: Client;
}

async function startDeployment(label: string, env: Record<string, string>): Promise<Deployment> {
  const database = await freshDatabase('postgres', label);
  const keys = newKeys();
  const options = { databaseUrl: database.url, dir: database.dir, ...keys, env: { PAYMENTS_RATE_LIMITS: 'default', ...env } };
  // One after the other: both would migrate the fresh database (safe, but slower at once).
  const a = await startService({ ...options, label: `${label}-a` });
  const b = await startService({ ...options, label: `${label}-b` });
  const merchant = await bootstrapMerchant(a, `Limits ${label}`);
  return { database, a, b, merchant, viaA: merchant.api, viaB: client(b.baseUrl, merchant.token) };
}

async function stopDeployment(d: Deployment | undefined): Promise<void> {
  if (!d) return;
  await Promise.all([d.a.stop(), d.b.stop()]);
  await d.database.drop();
}

async function bucketRows(d: Deployment): Promise<string[]> {
  const db = new pg.Client({ connectionString: d.database.url });
  await db.connect();
  try {
    return (await db.query<{ bucket: string }>('SELECT bucket FROM rate_limit_buckets ORDER BY bucket')).rows.map((r) => r.bucket);
  } finally {
    await db.end();
  }
}

/** The §5 limits across both processes; `where` checks where the buckets were kept. */
function deploymentLimits(get: () => Deployment, where: (d: Deployment) => Promise<void>) {
  test('an operation: burst 5 per transaction for the deployment — 5 pass across A and B, the 6th is 429 on either', async () => {
    const d = get();
    const transactionId = newTransactionId();
    const voidIt = (via: Client) => via.post(`${API}/transactions/${transactionId}/void`, { amount: -1 });
    for (let i = 0; i < 5; i++) {
      const res = await voidIt(i % 2 ? d.viaB : d.viaA);
      assert.notEqual(res.status, 429, `operation ${i + 1} of 5 (through ${i % 2 ? 'B' : 'A'})`);
      assert.equal(res.headers.get('x-ratelimit-limit'), '5');
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(4 - i), 'one bucket: the count goes on from the other process');
    }
    for (const [name, via] of [
      ['A', d.viaA],
      ['B', d.viaB],
    ] as const) {
      const limited = await voidIt(via);
      assert.equal(limited.status, 429, `the 6th and 7th are refused (through ${name})`);
      assert.equal(limited.body.errorCode, 'RATE_LIMIT_REACHED');
      assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
      const retryAfter = Number(limited.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 12, `Retry-After ${retryAfter}: one token every 12 s`);
      const reset = Number(limited.headers.get('x-ratelimit-reset'));
      const now = Math.floor(Date.now() / 1000);
      assert.ok(reset > now && reset <= now + 62, `X-RateLimit-Reset ${reset}: full again within a minute`);
    }
  });

  test('an operation, 12 requests at once split over A and B: exactly 5 pass', async () => {
    const d = get();
    const transactionId = newTransactionId();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? d.viaB : d.viaA).post(`${API}/transactions/${transactionId}/void`, { amount: -1 })),
    );
    assert.deepEqual(answers.map((r) => r.status).filter((s) => s !== 429).length, 5, `statuses ${answers.map((r) => r.status).join(' ')}`);
    assert.ok(
      answers.every((r) => r.status !== 500),
      'never a 500',
    );
  });

  test('lists: burst 30 for the deployment — 30 pass across A and B, the 31st is 429', async () => {
    const d = get();
    for (let i = 0; i < 30; i++) {
      const res = await (i % 2 ? d.viaB : d.viaA).get(`${API}/transactions`);
      assert.equal(res.status, 200, `list ${i + 1} of 30`);
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(29 - i));
    }
    assert.equal((await d.viaB.get(`${API}/transactions`)).status, 429);
    assert.equal((await d.viaA.get(`${API}/transactions`)).status, 429);
  });

  test('the buckets are kept where the deployment says', async () => {
    await where(get());
  });
}

describe('rate limits across two processes, buckets in PostgreSQL', { skip: !postgres }, () => {
  let d: Deployment;
  before(async () => {
    d = await startDeployment('limits-pg', {});
  });
  after(() => stopDeployment(d));

  deploymentLimits(
    () => d,
    async (deployment) => {
      const rows = await bucketRows(deployment);
      assert.ok(rows.includes(`list:${deployment.merchant.accountId}`), `the list bucket is a row (${rows.join(', ')})`);
      assert.equal(rows.filter((r) => r.startsWith(`operation:${deployment.merchant.accountId}:`)).length, 2, 'one row per transaction');
    },
  );
});

describe('rate limits across two processes, buckets in Redis', { skip: !redis }, () => {
  let d: Deployment;
  const keyPrefix = `test-deployment-${randomBytes(6).toString('hex')}:`;
  const inspector = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  before(async () => {
    d = await startDeployment('limits-redis', { REDIS_URL: TEST_REDIS_URL, PAYMENTS_REDIS_KEY_PREFIX: keyPrefix });
  });
  after(async () => {
    await stopDeployment(d);
    const keys = await inspector.keys(`${keyPrefix}*`);
    if (keys.length) await inspector.del(...keys);
    inspector.disconnect();
  });

  deploymentLimits(
    () => d,
    async (deployment) => {
      const keys = await inspector.keys(`${keyPrefix}*`);
      assert.ok(keys.includes(`${keyPrefix}ratelimit:list:${deployment.merchant.accountId}`), `the list bucket is a key (${keys.join(', ')})`);
      assert.equal(keys.filter((k) => k.startsWith(`${keyPrefix}ratelimit:operation:${deployment.merchant.accountId}:`)).length, 2, 'one key per transaction');
      assert.deepEqual(await bucketRows(deployment), [], 'no bucket in the database while Redis answers');
    },
  );
});
