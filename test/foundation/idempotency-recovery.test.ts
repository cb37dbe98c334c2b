/**
 * Idempotency across a crash, on both stores: a request whose effect committed but whose process
 * died before the response was stored leaves its claim `in_flight`. Once that claim's lock runs out,
 * a retry with the same key and body resumes the execution: it finds what was committed (tagged
 * with the claim's effect key in the same commit) and returns it, instead of paying twice. A retry
 * with another body is refused. The crash is reproduced by putting the claim back the way a killed
 * process leaves it (in flight, response not stored) and moving the service clock past its lock.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { IN_FLIGHT_LOCK_MS } from '../../src/http/idempotency.js';
import { seedAuthorized } from '../lifecycle/fixtures.js';
import { mitBody, storedCard } from '../online/cit-flows.js';
import { advanceClock, motoBody } from '../online/helpers.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`idempotency across a crash (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let subscriptionId: string;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      subscriptionId = (await storedCard(t, m, 'cust-recovery')).subscriptionId;
    });
    after(() => t.close());

    /** What SIGKILL between the effect's commit and storing the response leaves, then the lock running out. */
    async function crashBeforeResponseStored(key: string): Promise<void> {
      const reset = await t.runtime.store.db
        .updateTable('idempotencyKeys')
        .set({ state: 'in_flight', responseStatus: null, responseBody: null, responseContentType: null })
        .where('accountId', '=', m.accountId)
        .where('key', '=', key)
        .executeTakeFirst();
      assert.equal(Number(reset.numUpdatedRows), 1, 'the claim exists');
      await advanceClock(t, IN_FLIGHT_LOCK_MS / 1000 + 1);
    }

    const countByReference = async (reference: string) =>
      (await t.runtime.store.db.selectFrom('transactions').select('id').where('accountId', '=', m.accountId).where('reference', '=', reference).execute())
        .length;

    test('POST /mit retried after the crash returns the same transaction; one exists', async () => {
      const key = randomUUID();
      const body = mitBody(subscriptionId, 'https://localhost/cb', { reference: `rec-${key}` });
      const first = await m.api.post(`${API}/mit`, body, { idempotencyKey: key });
      assert.equal(first.status, 200, first.text);
      await crashBeforeResponseStored(key);
      const retry = await m.api.post(`${API}/mit`, body, { idempotencyKey: key });
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers['idempotent-replayed'], undefined, 'executed again, not a stored replay');
      assert.equal(retry.body.transaction.id, first.body.transaction.id);
      assert.equal(await countByReference(`rec-${key}`), 1);
      const replay = await m.api.post(`${API}/mit`, body, { idempotencyKey: key });
      assert.equal(replay.headers['idempotent-replayed'], 'true', 'the resumed response is stored and replayed from now on');
      assert.equal(replay.body.transaction.id, first.body.transaction.id);
    });

    test('POST /mit/batch retried after the crash maps every entry to what it created', async () => {
      const key = randomUUID();
      const body = {
        transactions: [
          mitBody(subscriptionId, 'https://localhost/cb', { reference: `b0-${key}` }),
          { amount: 'not a number', reference: `bad-${key}` },
          mitBody(subscriptionId, 'https://localhost/cb', { reference: `b2-${key}` }),
        ],
      };
      const first = await m.api.post(`${API}/mit/batch`, body, { idempotencyKey: key });
      assert.equal(first.status, 200, first.text);
      await crashBeforeResponseStored(key);
      const retry = await m.api.post(`${API}/mit/batch`, body, { idempotencyKey: key });
      assert.equal(retry.status, 200, retry.text);
      assert.deepEqual(
        retry.body.transactions.map((r: any) => r.transaction?.id ?? r.error.errorCode),
        first.body.transactions.map((r: any) => r.transaction?.id ?? r.error.errorCode),
      );
      assert.equal(await countByReference(`b0-${key}`), 1);
      assert.equal(await countByReference(`b2-${key}`), 1);
    });

    test('POST /moto retried after the crash returns the same authorization; the card is stored once', async () => {
      const key = randomUUID();
      const body = motoBody(m, { customerId: `moto-${key}` });
      const first = await m.api.post(`${API}/moto`, body, { idempotencyKey: key });
      assert.equal(first.status, 200, first.text);
      await crashBeforeResponseStored(key);
      const retry = await m.api.post(`${API}/moto`, body, { idempotencyKey: key });
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.body.transaction.id, first.body.transaction.id);
      const methods = await t.runtime.store.db.selectFrom('paymentMethods').select('id').where('customerId', '=', `moto-${key}`).execute();
      assert.equal(methods.length, 1);
    });

    test('capture and refund retried after the crash return the recorded operations; the money moves once', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      const captureKey = randomUUID();
      const capture = await m.api.post(`${API}/transactions/${tx.id}/capture`, { amount: 600 }, { idempotencyKey: captureKey });
      assert.equal(capture.body.success, true, capture.text);
      await crashBeforeResponseStored(captureKey);
      const captureRetry = await m.api.post(`${API}/transactions/${tx.id}/capture`, { amount: 600 }, { idempotencyKey: captureKey });
      assert.equal(captureRetry.status, 200, captureRetry.text);
      assert.deepEqual(captureRetry.body, capture.body);

      const refundKey = randomUUID();
      const refund = await m.api.post(`${API}/transactions/${tx.id}/refund`, { amount: 250 }, { idempotencyKey: refundKey });
      assert.equal(refund.body.success, true, refund.text);
      await crashBeforeResponseStored(refundKey);
      const refundRetry = await m.api.post(`${API}/transactions/${tx.id}/refund`, { amount: 250 }, { idempotencyKey: refundKey });
      assert.deepEqual(refundRetry.body, refund.body);

      const detail = await m.api.get(`${API}/transactions/${tx.id}`);
      assert.equal(detail.body.aggregates.captured, 600);
      assert.equal(detail.body.aggregates.refunded, 250);
      assert.deepEqual(detail.body.operations.map((o: any) => o.type).sort(), ['AUTHORIZATION', 'CAPTURE', 'REFUND']);
    });

    test('a crashed claim retried with another body is refused (422), and nothing new is created', async () => {
      const key = randomUUID();
      const first = await m.api.post(`${API}/mit`, mitBody(subscriptionId, 'https://localhost/cb', { reference: `x-${key}` }), { idempotencyKey: key });
      assert.equal(first.status, 200, first.text);
      await crashBeforeResponseStored(key);
      const other = await m.api.post(`${API}/mit`, mitBody(subscriptionId, 'https://localhost/cb', { reference: `y-${key}` }), { idempotencyKey: key });
      assert.equal(other.status, 422, other.text);
      assert.equal(other.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await countByReference(`y-${key}`), 0);
    });
  });
}
