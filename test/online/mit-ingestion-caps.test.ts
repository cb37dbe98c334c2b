/**
 * Ingestion caps (INTERFACE §11.8): per merchant, MIT transactions a minute through POST /mit and
 * through POST /mit/batch (entries counted), counted in the database. Small caps from config here;
 * the defaults are 300 and 30 000. Past a cap: 429 RATE_LIMIT_REACHED with the §5 headers, and the
 * refused request creates (and counts) nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { API, startTestRuntime, testConfig, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { mitBody, ok, storedCard } from './cit-flows.js';

const MIT_CAP = 3;
const BATCH_CAP = 5;
const CB = 'http://localhost:9/cb';
const MINUTE = 60_000;

function expect429(res: TestResponse, limit: number, remaining: number, nowMs: number) {
  assert.equal(res.status, 429, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
  assert.equal(res.body.success, false);
  assert.equal(res.body.errorCode, 'RATE_LIMIT_REACHED');
  assert.equal(res.headers['x-ratelimit-limit'], String(limit));
  assert.equal(res.headers['x-ratelimit-remaining'], String(remaining));
  // The window is the minute of the service clock: it resets at the next full minute.
  const resetS = Math.ceil((Math.floor(nowMs / MINUTE) * MINUTE + MINUTE) / 1000);
  assert.equal(res.headers['x-ratelimit-reset'], String(resetS));
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers['retry-after']}`);
}

for (const kind of await availableStores()) {
  describe(`MIT ingestion caps (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let subscriptionId: string;

    before(async () => {
      t = await startTestRuntime(kind, { mitCapPerMinute: MIT_CAP, mitBatchCapPerMinute: BATCH_CAP });
      m = await t.createMerchant({ physical: false });
      subscriptionId = (await storedCard(t, m, 'cust-caps')).subscriptionId;
    });
    after(() => t.close());

    /** Service time moves to 1 s into the next minute: each test has a fresh window and 59 s of it. */
    async function freshMinute(): Promise<number> {
      const now = Date.parse(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
      const start = Math.floor(now / MINUTE) * MINUTE + MINUTE + 1000;
      ok(await t.operator.post('/sandbox/v1/clock', { now: new Date(start).toISOString() }), 'move clock');
      return start;
    }

    const mit = (reference: string, api = m.api, options: { idempotencyKey?: string } = {}) =>
      api.post(`${API}/mit`, mitBody(subscriptionId, CB, { reference }), options);

    async function transactionsWith(prefix: string, api = m.api): Promise<any[]> {
      const list = ok(await api.get(`${API}/transactions?reference=${prefix}&referenceMode=PREFIX&perPage=500`), 'list');
      return list.items.map((i: any) => i.transaction ?? i);
    }

    test(`POST /mit: ${MIT_CAP} a minute are accepted; the next one is 429 with the rate-limit headers and creates nothing`, async () => {
      const start = await freshMinute();
      for (let i = 0; i < MIT_CAP; i++) ok(await mit(`cap-a-${i}`), `MIT ${i}`);
      const refused = await mit('cap-a-over');
      expect429(refused, MIT_CAP, 0, start);
      assert.match(refused.body.message, /at most 3 MIT transactions a minute through POST \/mit/);
      assert.equal((await transactionsWith('cap-a-')).length, MIT_CAP);
      assert.deepEqual(await transactionsWith('cap-a-over'), [], 'the refused MIT created nothing');

      // The next minute has room again.
      ok(await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 60 }), 'next minute');
      ok(await mit('cap-a-next'), 'MIT in the next minute');
    });

    test('a refused MIT with an Idempotency-Key is not stored: the same key succeeds in the next minute', async () => {
      await freshMinute();
      for (let i = 0; i < MIT_CAP; i++) ok(await mit(`cap-b-${i}`), `MIT ${i}`);
      const body = mitBody(subscriptionId, CB, { reference: 'cap-b-key' });
      assert.equal((await m.api.post(`${API}/mit`, body, { idempotencyKey: 'cap-key-1' })).status, 429);
      ok(await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 60 }), 'next minute');
      const accepted = await m.api.post(`${API}/mit`, body, { idempotencyKey: 'cap-key-1' });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.headers['idempotent-replayed'], undefined, 'executed, not a replay of the 429');
      const replay = await m.api.post(`${API}/mit`, body, { idempotencyKey: 'cap-key-1' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.transaction.id, accepted.body.transaction.id);
      assert.equal((await transactionsWith('cap-b-key')).length, 1);
    });

    test('concurrent MITs: exactly the cap is accepted, every other one is 429', async () => {
      await freshMinute();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => mit(`cap-c-${i}`)));
      assert.deepEqual(results.map((r) => r.status).sort(), [...Array(MIT_CAP).fill(200), ...Array(10 - MIT_CAP).fill(429)]);
      assert.equal((await transactionsWith('cap-c-')).length, MIT_CAP);
    });

    test(`POST /mit/batch: accepted entries count (${BATCH_CAP} a minute); a batch past the cap is 429 as a whole and creates nothing`, async () => {
      const start = await freshMinute();
      const entries = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => mitBody(subscriptionId, CB, { reference: `${prefix}-${i}` }));
      const first = ok(await m.api.post(`${API}/mit/batch`, { transactions: entries('cap-d1', 3) }), 'batch of 3');
      assert.ok(first.transactions.every((r: any) => r.transaction && !r.error));
      // 2 valid + 1 invalid entries: 3 + 2 > 5.
      const over = await m.api.post(`${API}/mit/batch`, { transactions: [...entries('cap-d2', 3), { subscriptionId, amount: -1 }] });
      expect429(over, BATCH_CAP, 2, start);
      assert.match(over.body.message, /POST \/mit\/batch/);
      assert.deepEqual(await transactionsWith('cap-d2'), [], 'the refused batch created nothing');
      // An invalid entry is not counted: 2 valid entries fill the minute exactly.
      const fill = ok(await m.api.post(`${API}/mit/batch`, { transactions: [...entries('cap-d3', 2), { subscriptionId, amount: -1 }] }), 'batch of 2 + 1');
      assert.deepEqual(
        fill.transactions.map((r: any) => (r.transaction ? 'ok' : r.error.errorCode)),
        ['ok', 'ok', 'VALIDATION_ERROR'],
      );
      expect429(await m.api.post(`${API}/mit/batch`, { transactions: entries('cap-d4', 1) }), BATCH_CAP, 0, start);
      // The batch cap and the single-MIT cap are counted apart.
      ok(await mit('cap-d-single'), 'POST /mit while the batch cap is reached');

      // A batch larger than the cap is refused whatever the minute holds.
      ok(await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 60 }), 'next minute');
      const now = Date.parse(ok(await t.operator.get('/sandbox/v1/clock'), 'clock').now);
      expect429(await m.api.post(`${API}/mit/batch`, { transactions: entries('cap-d5', BATCH_CAP + 1) }), BATCH_CAP, BATCH_CAP, now);
      assert.deepEqual(await transactionsWith('cap-d5'), []);
      ok(await m.api.post(`${API}/mit/batch`, { transactions: entries('cap-d6', BATCH_CAP) }), 'a batch of exactly the cap');
      assert.equal((await transactionsWith('cap-d')).length, 3 + 2 + 1 + BATCH_CAP);
    });

    test("the caps are per merchant: one merchant's full minute does not limit another", async () => {
      await freshMinute();
      for (let i = 0; i < MIT_CAP; i++) ok(await mit(`cap-e-${i}`), `MIT ${i}`);
      assert.equal((await mit('cap-e-over')).status, 429);
      const other = await t.createMerchant({ physical: false });
      const otherSub = (await storedCard(t, other, 'cust-other')).subscriptionId;
      ok(await other.api.post(`${API}/mit`, mitBody(otherSub, CB, { reference: 'cap-e-other' })), 'another merchant');
    });

    test('the caps hold across processes: two runtimes on one database accept the cap between them', async () => {
      await freshMinute();
      const second: Runtime = await createRuntime(testConfig(t.database, { mitCapPerMinute: MIT_CAP, mitBatchCapPerMinute: BATCH_CAP }), {
        logger: createLogger('silent'),
        connectOptions: t.database.schema ? { schema: t.database.schema } : {},
        startWorkers: false,
      });
      try {
        await second.app.ready();
        const viaSecond = async (reference: string) => {
          const res = await second.app.inject({
            method: 'POST',
            url: `${API}/mit`,
            headers: { authorization: `Bearer ${m.token}`, 'content-type': 'application/json' },
            payload: JSON.stringify(mitBody(subscriptionId, CB, { reference })),
          });
          return res.statusCode;
        };
        const statuses = await Promise.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? mit(`cap-f-${i}`).then((r) => r.status) : viaSecond(`cap-f-${i}`))),
        );
        assert.equal(statuses.filter((s) => s === 200).length, MIT_CAP, `statuses ${statuses.join(',')}`);
        assert.equal(statuses.filter((s) => s === 429).length, 8 - MIT_CAP);
        assert.equal((await transactionsWith('cap-f-')).length, MIT_CAP);
      } finally {
        await second.close();
      }
    });
  });

  describe(`MIT ingestion caps off (${kind})`, () => {
    test('0 turns a cap off', async () => {
      const t = await startTestRuntime(kind, { mitCapPerMinute: 0, mitBatchCapPerMinute: 0 });
      try {
        const m = await t.createMerchant({ physical: false });
        const { subscriptionId } = await storedCard(t, m, 'cust-off');
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => m.api.post(`${API}/mit`, mitBody(subscriptionId, CB, { reference: `off-${i}` }))),
        );
        assert.deepEqual(
          results.map((r) => r.status),
          Array(6).fill(200),
        );
      } finally {
        await t.close();
      }
    });
  });
}
