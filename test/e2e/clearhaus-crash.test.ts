/**
 * At most once across a crash, end to end (INTERFACE §12.4): the real service as a child process
 * pays through Clearhaus — a fake running in this test process, which outlives the service — and is
 * killed with SIGKILL while Clearhaus holds its requests. The fake carries every request out (the
 * authorizations are approved there) but has not answered when the service dies. Started again on
 * the same database with the same settings, the service must not send any of them again and must
 * not guess their outcome:
 *   - each authorization in flight at the kill ends FAILED `ACQUIRER_TIMEOUT` once
 *     sentAt + CLEARHAUS_TIMEOUT_MS + 15 s has passed on the service clock (and not before), although
 *     Clearhaus approved it; it is never voided (no Clearhaus id is known);
 *   - the capture in flight at the kill stays PROCESSING and is listed in the operator's payments in
 *     doubt;
 *   - the fake received exactly one request per authorization and one capture request in all.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ClearhausFake, CLEARHAUS_DOCS_KEY, startClearhausFake } from '../support/clearhaus-fake.js';
import { availableStores } from '../support/stores.js';
import {
  API,
  bootstrapMerchant,
  type Client,
  type E2eDatabase,
  freshDatabase,
  type JsonResponse,
  type Merchant,
  newKeys,
  reattach,
  type ServiceProcess,
  sleep,
  startService,
} from './service.js';

const VISA = '4111111111111111';
/** MOTO payments whose authorization is in flight at the kill. */
const N = 8;
/**
 * CLEARHAUS_TIMEOUT_MS of both lives (the same settings across the restart). Longer than the fake
 * holds its answers, so that the first life is still waiting for every answer when it is killed (it
 * never records a timeout of its own): the outcome is decided only by the process that comes after.
 * Both are generous because on a loaded 2-core host the N requests can take seconds to all arrive,
 * and the kill must come before the first answer; they cost no wall time (the clock is advanced).
 */
const TIMEOUT_MS = 25_000;
/** The fake answers (approved, applied at once) this late: well after the kill. */
const SLOW_MS = 20_000;
/** §12.4 / at-most-once.ts: the grace a sender has beyond its timeout to record the answer. */
const SENDER_GRACE_S = 15;
/** After the restart the service clock moves past sentAt + timeout + grace (40 s). */
const ADVANCE_S = 60;

const AUTHORIZATIONS = /^\/authorizations$/;
const CAPTURES = /^\/authorizations\/[^/]+\/captures$/;
const VOIDS = /^\/authorizations\/[^/]+\/voids$/;
const FINAL = new Set(['SUCCESS', 'FAILED']);

const motoBody = (pointOfSaleId: string, reference: string) => ({
  transaction: { pointOfSaleId, amount: 1000, currency: 'DKK', reference, instantCapture: 'OFF' },
  card: { number: VISA, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123', holderName: 'Test Holder' },
});

/** A request that the kill may cut off: its answer, or null when the connection died with the service. */
async function attempt(request: Promise<JsonResponse>): Promise<JsonResponse | null> {
  try {
    return await request;
  } catch {
    return null;
  }
}

async function detail(api: Client, id: string): Promise<any> {
  return api.must('GET', `${API}/transactions/${id}`);
}

/** Every transaction of the merchant (one page is plenty here). */
async function listed(api: Client): Promise<any[]> {
  const res = await api.must('GET', `${API}/transactions?perPage=500`);
  assert.equal(res.hasMore, false);
  return res.items.map((i: any) => i.transaction);
}

async function until<T>(probe: () => Promise<T | null>, what: string, timeoutMs: number, onTimeout: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}\n${onTimeout()}`);
    await sleep(100);
  }
}

for (const kind of await availableStores()) {
  describe(`clearhaus at most once across a SIGKILL (${kind})`, { timeout: 180_000 }, () => {
    let db: E2eDatabase;
    let fake: ClearhausFake;
    let service: ServiceProcess | null = null;
    const keys = newKeys();
    const apiKey = randomUUID();
    let env: Record<string, string>;

    before(async () => {
      db = await freshDatabase(kind, 'clearhaus-crash');
      fake = await startClearhausFake({ merchants: [{ apiKey, mcc: '5734' }] });
      const keyFile = path.join(db.dir, 'clearhaus-signing-key.pem');
      fs.writeFileSync(keyFile, CLEARHAUS_DOCS_KEY.privateKeyPem, { mode: 0o600 });
      env = {
        CLEARHAUS_URL: fake.url,
        CLEARHAUS_SIGNING_KEY_ID: CLEARHAUS_DOCS_KEY.id,
        CLEARHAUS_SIGNING_KEY_FILE: keyFile,
        CLEARHAUS_TIMEOUT_MS: String(TIMEOUT_MS),
        CLEARHAUS_MAX_IN_FLIGHT: '32',
      };
    });
    after(async () => {
      await service?.stop();
      await fake?.close();
      await db?.drop();
    });

    const start = (label: string) => startService({ databaseUrl: db.url, dir: db.dir, ...keys, label, env });

    test('requests held by Clearhaus at the kill are never sent again: authorizations fail ACQUIRER_TIMEOUT, the capture waits in doubt', async () => {
      const t0 = Date.now();
      // --- life 1: a Clearhaus merchant with MOTO, one authorized payment, then requests held and SIGKILL
      const first = await start('life1');
      service = first;
      let merchant: Merchant = await bootstrapMerchant(first, 'Clearhaus Crash Shop');
      await first.operator.must('PATCH', `${API}/partner/accounts/${merchant.accountId}/capabilities`, { moto: true });
      const agreement = await first.operator.request('PUT', `${API}/partner/accounts/${merchant.accountId}/acquirer-agreement`, {
        acquirer: 'clearhaus',
        apiKey,
        mcc: '5734',
      });
      assert.equal(agreement.status, 200, agreement.text);

      const authorized = await merchant.api.must('POST', `${API}/moto`, motoBody(merchant.pointOfSaleId, 'ch-crash-capture'));
      assert.equal(authorized.transaction.state, 'SUCCESS', JSON.stringify(authorized.transaction));
      const captureTxId: string = authorized.transaction.id;
      assert.equal(fake.requestsTo(AUTHORIZATIONS).length, 1, 'the authorization before the kill went to the fake');
      const clearhausAuthId = fake.requestsTo(AUTHORIZATIONS)[0]!.reply?.body?.id as string;

      // Clearhaus takes the next N authorizations and the capture, carries them out, answers late.
      const heldAuths = fake.script({ method: 'POST', path: AUTHORIZATIONS, action: { slow: SLOW_MS }, applied: true, times: N });
      const heldCapture = fake.script({ method: 'POST', path: CAPTURES, action: { slow: SLOW_MS }, applied: true, times: 1 });

      const firedAt = Date.now(); // every held request's sentAt is at or after this (life 1 runs on the wall clock)
      const references = Array.from({ length: N }, (_, i) => `ch-crash-moto-${i}`);
      const motos = references.map((reference) => attempt(merchant.api.post(`${API}/moto`, motoBody(merchant.pointOfSaleId, reference))));
      const captureCall = attempt(merchant.api.post(`${API}/transactions/${captureTxId}/capture`, { amount: 600 }));

      await until(
        async () => (fake.requestsTo(AUTHORIZATIONS).length === N + 1 && fake.requestsTo(CAPTURES).length === 1 ? true : null),
        `the fake to receive ${N} authorizations and a capture`,
        SLOW_MS - 5_000,
        () => `received ${fake.requestsTo(AUTHORIZATIONS).length - 1} authorizations, ${fake.requestsTo(CAPTURES).length} captures\n${first.logTail()}`,
      );
      const heldAt = Date.now();
      await first.kill();
      const killedAfterMs = Date.now() - heldAt;
      const answers = await Promise.all([...motos, captureCall]);
      assert.deepEqual(
        answers.map((a) => a?.status ?? null),
        Array.from({ length: N + 1 }, () => null),
        'the kill cut off every held request (none answered before it)',
      );
      assert.equal(heldAuths.hits, N);
      assert.equal(heldCapture.hits, 1);

      // What Clearhaus did: each held authorization approved (applied), the capture applied.
      const held = fake.requestsTo(AUTHORIZATIONS).slice(1);
      const idByReference = new Map(held.map((r) => [r.form.reference as string, r.reply?.body?.id as string]));
      const txIds = [...idByReference.keys()];
      assert.equal(new Set(txIds).size, N, 'one authorization request per transaction, our transaction id as reference');
      for (const r of held) {
        assert.equal(r.processed, true);
        assert.equal(r.answered, false, 'Clearhaus never answered it: the service was gone');
        assert.equal((r.reply?.body?.status as { code?: number } | undefined)?.code, 20000, 'Clearhaus approved it');
      }
      assert.equal(fake.amounts(clearhausAuthId).captured, 600, 'Clearhaus carried the capture out');

      // --- life 2: same database, same settings -------------------------------------------------
      const second = await start('life2');
      const restartedAfterMs = Date.now() - heldAt;
      service = second;
      merchant = reattach(merchant, second);

      // Before the sender's time is up the outcome is unknown: nothing is decided, nothing is sent. A
      // read answered before firedAt + timeout + grace must show the payment undecided (no process may
      // decide earlier); one answered later (a very slow restart) proves nothing and is not counted.
      const undecidedUntil = firedAt + TIMEOUT_MS + SENDER_GRACE_S * 1000;
      let checkedUndecided = 0;
      for (const id of txIds) {
        const d = await detail(merchant.api, id);
        if (Date.now() >= undecidedUntil) break;
        assert.ok(!FINAL.has(d.transaction.state), `${id} decided before sentAt + timeout + grace (${d.transaction.state})`);
        checkedUndecided++;
      }
      assert.equal(fake.requestsTo(AUTHORIZATIONS).length, N + 1, 'nothing sent again by the restart');
      const byReference = new Map((await listed(merchant.api)).map((tx) => [tx.reference, tx]));
      for (const [i, reference] of references.entries()) {
        assert.ok(txIds.includes(byReference.get(reference)?.id), `MOTO ${i} (${reference}) is the transaction Clearhaus got`);
      }

      await second.operator.must('POST', '/sandbox/v1/clock', { advanceSeconds: ADVANCE_S });
      const advancedAt = Date.now();
      assert.ok(ADVANCE_S > TIMEOUT_MS / 1000 + SENDER_GRACE_S);

      const finals = await until(
        async () => {
          const all = await Promise.all(txIds.map((id) => detail(merchant.api, id)));
          return all.every((d) => FINAL.has(d.transaction.state)) ? all : null;
        },
        `the ${N} authorizations to be called in doubt after the restart`,
        60_000,
        () => second.logTail(),
      );
      const decidedAfterMs = Date.now() - advancedAt;
      for (const d of finals) {
        const id = d.transaction.id as string;
        assert.equal(d.transaction.state, 'FAILED', `${id}: an authorization in doubt is never guessed approved (${JSON.stringify(d.transaction)})`);
        assert.equal(d.transaction.errorCode, 'ACQUIRER_TIMEOUT', id);
        assert.deepEqual(
          d.operations.map((op: any) => [op.type, op.state]),
          [['AUTHORIZATION', 'FAILED']],
          `${id}: one authorization operation, failed`,
        );
        assert.equal(d.aggregates.authorized, 0, `${id}: nothing authorized`);
      }

      const inDoubt = await until(
        async () => {
          const res = await second.operator.must('GET', `${API}/partner/payments-in-doubt?accountId=${merchant.accountId}`);
          return res.items.length > 0 ? res.items : null;
        },
        'the capture in the payments in doubt',
        60_000,
        () => second.logTail(),
      );
      assert.equal(inDoubt.length, 1, `only the capture is in doubt (authorizations are failed by rule): ${JSON.stringify(inDoubt)}`);
      const item = inDoubt[0];
      assert.deepEqual(
        [item.transactionId, item.acquirer, item.call, item.amount, item.currency, item.accountId],
        [captureTxId, 'clearhaus', 'capture', 600, 'DKK', merchant.accountId],
      );
      const captureDetail = await detail(merchant.api, captureTxId);
      const captureOp = captureDetail.operations.find((op: any) => op.id === item.operationId);
      assert.ok(captureOp, `the in-doubt operation belongs to the transaction: ${JSON.stringify(captureDetail.operations)}`);
      assert.deepEqual([captureOp.type, captureOp.state], ['CAPTURE', 'PROCESSING'], 'the capture stays PROCESSING until an operator resolves it');
      assert.equal(captureDetail.aggregates.captured, 0, 'not reported as captured');

      // More time, more job rounds: still nothing sent again, nothing decided for the capture.
      await second.operator.must('POST', '/sandbox/v1/clock', { advanceSeconds: 600 });
      await sleep(1_500);
      assert.equal(fake.requestsTo(AUTHORIZATIONS).length, N + 1, `exactly ${N} + 1 authorization requests in all: none sent again`);
      for (const id of txIds) assert.equal(fake.requestsTo(AUTHORIZATIONS).filter((r) => r.form.reference === id).length, 1, `${id}: sent once`);
      assert.equal(fake.requestsTo(CAPTURES).length, 1, 'exactly one capture request: not sent again');
      assert.equal(fake.requestsTo(VOIDS).length, 0, 'nothing voided: Clearhaus named no id for the authorizations in doubt');
      assert.equal(fake.requests.filter((r) => r.method === 'POST').length, N + 2, 'no other request went to Clearhaus');
      const still = await second.operator.must('GET', `${API}/partner/payments-in-doubt?accountId=${merchant.accountId}`);
      assert.deepEqual(
        still.items.map((i: any) => i.operationId),
        [item.operationId],
      );
      assert.equal((await detail(merchant.api, captureTxId)).operations.find((op: any) => op.id === item.operationId)?.state, 'PROCESSING');
      const transactions = await listed(merchant.api);
      assert.equal(transactions.length, N + 1, 'one transaction per MOTO request, none made twice');

      console.log(
        `# clearhaus crash (${kind}): ${N} authorizations and 1 capture held by Clearhaus, SIGKILL ${killedAfterMs} ms after the last arrived, restarted ${restartedAfterMs} ms later ` +
          `(${checkedUndecided}/${N} seen undecided before their sender's time was up); ` +
          `failed ${decidedAfterMs} ms after the clock moved ${ADVANCE_S} s; ` +
          `after the restart ${N} FAILED ACQUIRER_TIMEOUT, 1 capture in doubt; Clearhaus got ${N + 1} authorizations, 1 capture, 0 voids; ` +
          `${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    });
  });
}
