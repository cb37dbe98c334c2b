/**
 * Retry-After holds (issue 46): a 429 names a wait after which the same request passes every limit
 * that applies — the request bucket of INTERFACE §5 and the ingestion cap of §11.8 — and its
 * X-RateLimit-* headers describe the limit that answered. Driven by a client that does nothing but
 * wait as told, in real time.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, ok, storedCard } from './cit-flows.js';

const BATCH_CAP = 10;
const BATCH_BURST = 10;
const CB = 'http://localhost:9/cb';
const MINUTE = 60_000;

/** Sends until it is not refused, waiting exactly Retry-After each time; the statuses it met. */
async function followingRetryAfter(send: () => Promise<TestResponse>, tries = 4): Promise<{ statuses: number[]; refusals: TestResponse[] }> {
  const statuses: number[] = [];
  const refusals: TestResponse[] = [];
  for (let i = 0; i < tries; i++) {
    const res = await send();
    statuses.push(res.status);
    if (res.status !== 429) break;
    refusals.push(res);
    await sleep(Number(res.headers['retry-after']) * 1000);
  }
  return { statuses, refusals };
}

for (const kind of await availableStores()) {
  describe(`Retry-After across limits (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let subscriptionId: string;

    before(async () => {
      t = await startTestRuntime(kind, { rateLimits: 'default', mitBatchCapPerMinute: BATCH_CAP });
      m = await t.createMerchant({ physical: false });
      subscriptionId = (await storedCard(t, m, 'cust-retry-after')).subscriptionId;
    });
    after(() => t.close());

    const batch = (reference: string) => m.api.post(`${API}/mit/batch`, { transactions: [mitBody(subscriptionId, CB, { reference })] });

    test('bucket and ingestion cap both used up: the 429 names the longer wait, and waiting it lets the same request pass', async () => {
      // Service time 3 s before the end of a minute: the cap's wait (≥ 3 s) is longer than the bucket's (1 s).
      const now = Date.parse(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
      const minuteEnd = Math.floor(now / MINUTE) * MINUTE + 2 * MINUTE;
      ok(await t.operator.post('/sandbox/v1/clock', { now: new Date(minuteEnd - 3_000).toISOString() }), 'move clock');
      for (let i = 0; i < BATCH_BURST; i++) ok(await batch(`ra-fill-${i}`), `batch ${i}`);

      const { statuses, refusals } = await followingRetryAfter(() => batch('ra-next'));
      assert.deepEqual(statuses, [429, 200], 'one wait as told, then accepted');
      const [refused] = refusals;
      const retryAfter = Number(refused!.headers['retry-after']);
      assert.ok(retryAfter >= 2 && retryAfter <= 4, `Retry-After ${retryAfter} reaches the next minute`);
      // The headers describe the limit that answered: the cap, which resets with the minute.
      assert.equal(refused!.headers['x-ratelimit-limit'], String(BATCH_CAP));
      assert.equal(refused!.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused!.headers['x-ratelimit-reset'], String(minuteEnd / 1000));
      assert.match(refused!.body.message, /at most 10 MIT transactions a minute through POST \/mit\/batch.*retry in \d+ s/);
    });

    test('the bucket alone used up: its own wait, its own headers, and the rule in the message', async () => {
      // A fresh minute: the cap has room; the bucket is what refuses.
      ok(await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 60 }), 'next minute');
      const drained: TestResponse[] = [];
      for (let i = 0; i < BATCH_BURST + 1; i++) drained.push(await m.api.post(`${API}/mit/batch`, { transactions: [] }));
      const refused = drained.find((r) => r.status === 429);
      assert.ok(refused, `a 429 within ${BATCH_BURST + 1} requests: ${drained.map((r) => r.status).join(',')}`);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers['x-ratelimit-limit'], String(BATCH_BURST));
      assert.match(refused.body.message, /^Rate limit reached for POST \/mit\/batch \(requests, not entries\): 1\/s, in bursts of up to 10; retry in 1 s\.$/);
      const { statuses } = await followingRetryAfter(() => batch('ra-bucket'));
      assert.equal(statuses.at(-1), 200, `statuses ${statuses.join(',')}`);
      assert.ok(statuses.length <= 2, `at most one wait: ${statuses.join(',')}`);
    });
  });
}
