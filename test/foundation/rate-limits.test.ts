/**
 * Rate limits (INTERFACE §5): token buckets per merchant and category, the X-RateLimit-* headers,
 * the 429 body with Retry-After, and `off`. The buckets live in memory, so one store is enough.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_RULES, MemoryRateLimiter } from '../../src/http/rate-limit.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';

describe('token buckets (unit)', () => {
  test('burst, refill at the documented rate, retry-after and reset', async () => {
    let ms = 0;
    const wall = 1_900_000_000;
    const limiter = new MemoryRateLimiter(
      DEFAULT_RULES,
      () => ms,
      () => wall + Math.floor(ms / 1000),
    );
    try {
      for (let i = 0; i < 30; i++) assert.equal((await limiter.take('list', 'acct')).allowed, true, `request ${i + 1} of the burst`);
      const refused = await limiter.take('list', 'acct');
      assert.deepEqual(refused, { allowed: false, ratePerSecond: 0.2, limit: 30, remaining: 0, resetAt: wall + 150, retryAfter: 5 });
      assert.equal((await limiter.take('list', 'other-acct')).allowed, true, 'per merchant');
      assert.equal((await limiter.take('mit', 'acct')).allowed, true, 'per category');
      ms = 4_900;
      assert.equal((await limiter.take('list', 'acct')).allowed, false, 'one token takes 5 s');
      ms = 5_000;
      const one = await limiter.take('list', 'acct');
      assert.equal(one.allowed, true);
      assert.equal(one.remaining, 0);
      ms = 5_000 + 1000 * 1000;
      assert.equal((await limiter.take('list', 'acct')).remaining, 29, 'refills up to the burst, not beyond');
      for (let i = 0; i < 5; i++) assert.equal((await limiter.take('operation', 'acct:TX1')).allowed, true);
      const op = await limiter.take('operation', 'acct:TX1');
      assert.equal(op.allowed, false);
      assert.equal(op.retryAfter, 12, '5 per minute');
      assert.equal((await limiter.take('operation', 'acct:TX2')).allowed, true, 'per transaction');
      for (let i = 0; i < 10; i++) await limiter.take('mitBatch', 'acct');
      assert.equal((await limiter.take('mitBatch', 'acct')).retryAfter, 1);
    } finally {
      await limiter.close();
    }
  });
});

describe('rate limits over HTTP (PAYMENTS_RATE_LIMITS=default)', () => {
  let t: TestRuntime;
  let a: TestMerchant;
  let b: TestMerchant;
  before(async () => {
    t = await startTestRuntime('sqlite', { rateLimits: 'default' });
    a = await t.createMerchant({ physical: false });
    b = await t.createMerchant({ physical: false });
  });
  after(() => t.close());

  test('list endpoints: headers on every response, 429 with Retry-After after the burst of 30, per merchant', async () => {
    let last = await a.api.get(`${API}/transactions`);
    assert.equal(last.status, 200);
    assert.equal(last.headers['x-ratelimit-limit'], '30');
    assert.equal(last.headers['x-ratelimit-remaining'], '29');
    const reset = Number(last.headers['x-ratelimit-reset']);
    const nowSeconds = Math.floor(Date.now() / 1000);
    assert.ok(reset >= nowSeconds && reset <= nowSeconds + 10, `reset is a unix time in seconds (${reset})`);
    assert.equal(last.headers['retry-after'], undefined);
    for (let i = 1; i < 30; i++) {
      last = await a.api.get(i % 2 ? `${API}/transactions` : `${API}/transactions/operations`);
      assert.equal(last.status, 200, `request ${i + 1}: lists share one bucket`);
    }
    assert.equal(last.headers['x-ratelimit-remaining'], '0');
    const limited = await a.api.get(`${API}/transactions`);
    assert.equal(limited.status, 429);
    assert.deepEqual(Object.keys(limited.body).sort(), ['errorCode', 'message', 'success']);
    assert.equal(limited.body.errorCode, 'RATE_LIMIT_REACHED');
    // One token takes 5 s; the requests above took a moment, so a little may have refilled already.
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 5, `Retry-After ${retryAfter}`);
    assert.equal(limited.headers['x-ratelimit-limit'], '30');
    assert.equal(limited.headers['x-ratelimit-remaining'], '0');
    assert.ok(limited.headers['x-ratelimit-reset']);
    assert.equal((await b.api.get(`${API}/transactions`)).status, 200, 'another merchant has its own bucket');
    const pointsOfSale = await a.api.get(`${API}/management/point-of-sales`);
    assert.equal(pointsOfSale.status, 429, 'the points of sale list is a list too');
    const unlimited = await a.api.get(`${API}/management/point-of-sales/${a.onlinePointOfSaleId}`);
    assert.equal(unlimited.status, 200, 'routes outside a category are not limited');
    assert.equal(unlimited.headers['x-ratelimit-limit'], undefined);
  });

  test('a request refused by validation counts and carries the headers', async () => {
    const c = await t.createMerchant({ physical: false });
    const invalid = await c.api.get(`${API}/transactions?amountMode=GREATER_THAN`);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.headers['x-ratelimit-limit'], '30');
    assert.equal(invalid.headers['x-ratelimit-remaining'], '29');
    assert.equal((await c.api.get(`${API}/terminals`)).headers['x-ratelimit-remaining'], '28', 'terminals share the list bucket');
  });

  test('authentication is checked before the bucket: a 401 spends nothing', async () => {
    const c = await t.createMerchant({ physical: false });
    for (let i = 0; i < 40; i++) assert.equal((await t.client('nope').get(`${API}/transactions`)).status, 401);
    assert.equal((await c.api.get(`${API}/transactions`)).headers['x-ratelimit-remaining'], '29');
  });
});

describe('rate limits off (PAYMENTS_RATE_LIMITS=off)', () => {
  let t: TestRuntime;
  before(async () => {
    t = await startTestRuntime('sqlite', { rateLimits: 'off' });
  });
  after(() => t.close());

  test('no bucket, no headers', async () => {
    const m = await t.createMerchant({ physical: false });
    for (let i = 0; i < 40; i++) {
      const res = await m.api.get(`${API}/transactions`);
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
  });
});
