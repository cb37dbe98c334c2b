/**
 * Logs that tell the story (docs/runbook.md, "Logs"): a MOTO payment with its callback, its
 * capture and refund, a declined payment, a webhook paused, a settlement run and dead jobs each
 * leave one info line with ids and codes, captured from the service's own pino logger; requests
 * answered 404 carry the path and 4xx the errorCode. No line holds the card number, the CVC, the
 * API key, the access token, the callback's Authorization value, the webhook secret or the
 * operator key. Redaction is checked on its own as the second line of defence.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { JobDefinition } from '../../src/jobs/job.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger, pinoEventsLog } from '../../src/logger.js';
import { newId } from '../../src/shared/ids.js';
import { API, type TestMerchant, type TestRuntime, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS, motoBody, startReceiver, waitFor } from '../online/helpers.js';
import { billingMerchant, chargesOf, createAgreement, createPlan, LATER_MIT_DECLINED, moveClockTo, subscribe, waitForCharge } from '../billing/support.js';

type LogLine = Record<string, any>;

/** A CVC that appears nowhere else in a log line (no id, time or amount holds it as a JSON string). */
const CVC = '739';
const CARD_DIGITS = [/4111[\s-]?1111[\s-]?1111[\s-]?1111/, /41111111/, /4000[\s-]?0000[\s-]?0000[\s-]?0002/];

for (const kind of await availableStores()) {
  describe(`business event logs (${kind})`, () => {
    const raw: string[] = [];
    const lines = () => raw.map((line) => JSON.parse(line) as LogLine);
    const events = (name: string) => lines().filter((l) => l.event === name);
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    const secrets: Record<string, string> = {};

    before(async () => {
      t = await startTestRuntime(kind, { logLevel: 'info' }, { logDestination: { write: (line: string) => void raw.push(line) } });
      rx = await startReceiver();
      const merchant = await t.createMerchant({ physical: false });
      const callbackAuthorization = `Bearer cb-signing-${randomBytes(12).toString('hex')}`;
      const pos = await merchant.api.post(`${API}/management/point-of-sales`, {
        name: 'Logged shop',
        domain: 'localhost',
        webhookAuthentication: callbackAuthorization,
        type: 'ONLINE',
      });
      assert.equal(pos.status, 200, pos.text);
      const apiKey = (await merchant.api.post(`${API}/management/api-keys`, { name: 'logs' })).body.key as string;
      assert.ok(apiKey);
      m = { ...merchant, api: t.client(apiKey), onlinePointOfSaleId: pos.body.pointOfSale.id };
      Object.assign(secrets, { apiKey, accessToken: merchant.token, callbackAuthorization, operatorKey: t.operatorKey });
    });
    after(async () => {
      await t?.close();
      await rx?.close();
    });

    test('a payment, its callback, capture and refund, and a declined payment: one line each, with ids and codes', async () => {
      const path = rx.newPath('callback');
      const paid = await m.api.post(`${API}/moto`, motoBody(m, { amount: 2500, notificationUrl: rx.url(path), card: { cvc: CVC } }));
      assert.equal(paid.status, 200, paid.text);
      const txId = paid.body.transaction.id as string;
      assert.equal(paid.body.transaction.state, 'SUCCESS');

      const authorization = events('payment.answered').find((l) => l.transactionId === txId);
      assert.ok(authorization, 'the authorization line');
      assert.equal(authorization.level, 30, 'info');
      assert.equal(authorization.msg, 'payment.answered');
      assert.equal(authorization.accountId, m.accountId);
      assert.equal(authorization.operationState, 'SUCCESS');
      assert.equal(authorization.state, 'SUCCESS');
      assert.equal(authorization.errorCode, null);
      assert.equal(authorization.flow, 'MOTO');
      assert.equal(authorization.amount, 2500);
      assert.equal(authorization.currency, 'DKK');
      assert.match(authorization.operationId, /^[0-9a-f-]{36}$/);
      assert.notEqual(authorization.type, 'CAPTURE');

      const captured = await m.api.post(`${API}/transactions/${txId}/capture`, { amount: 2500 });
      assert.equal(captured.status, 200, captured.text);
      const refunded = await m.api.post(`${API}/transactions/${txId}/refund`, { amount: 1000 });
      assert.equal(refunded.status, 200, refunded.text);
      const answersOf = () => events('payment.answered').filter((l) => l.transactionId === txId);
      const capture = answersOf().find((l) => l.type === 'CAPTURE');
      const refund = answersOf().find((l) => l.type === 'REFUND');
      assert.ok(capture && refund, JSON.stringify(answersOf()));
      assert.deepEqual([capture.operationId, capture.operationState, capture.amount], [captured.body.operationId, 'SUCCESS', 2500]);
      assert.deepEqual([refund.operationId, refund.operationState, refund.amount], [refunded.body.operations[0].operationId, 'SUCCESS', 1000]);
      assert.equal(answersOf().length, 3, 'one line per answer');

      // The callback of the SUCCESS state, delivered to the local receiver.
      const attempt = await waitFor(() => events('callback.attempt').find((l) => l.transactionId === txId), 'the callback attempt line');
      assert.equal(rx.at(path).length, 1);
      assert.equal(rx.at(path)[0]!.headers.authorization, secrets.callbackAuthorization, 'the receiver got the Authorization value');
      assert.equal(attempt.accountId, m.accountId);
      assert.equal(attempt.host, `localhost:${rx.port}`, 'the host only, never the path');
      assert.equal(attempt.status, 200);
      assert.equal(attempt.attempt, 1);
      assert.equal(attempt.delivered, true);
      assert.equal(attempt.callbackEvent, 'SUCCESS');
      assert.equal(typeof attempt.durationMs, 'number');
      assert.ok(!JSON.stringify(attempt).includes(path), 'no callback path in the line');

      // A payout to the card just stored: its answer has a line too.
      const payout = await m.api.post(`${API}/payout-sync`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 640,
        currency: 'DKK',
        paymentMethodId: paid.body.transaction.paymentMethodId,
      });
      assert.equal(payout.status, 200, payout.text);
      const payoutLine = events('payment.answered').find((l) => l.transactionId === payout.body.transaction.id);
      assert.ok(payoutLine, 'the payout line');
      assert.deepEqual([payoutLine.flow, payoutLine.operationState, payoutLine.state, payoutLine.amount], ['PAYOUT', 'SUCCESS', 'SUCCESS', 640]);

      const declined = await m.api.post(
        `${API}/moto`,
        motoBody(m, { number: CARDS.DECLINED, notificationUrl: rx.url(rx.newPath('declined')), card: { cvc: CVC } }),
      );
      assert.equal(declined.status, 200, declined.text);
      const declinedTx = declined.body.transaction;
      assert.equal(declinedTx.state, 'FAILED');
      const decline = events('payment.answered').find((l) => l.transactionId === declinedTx.id);
      assert.ok(decline, 'the decline line');
      assert.equal(decline.operationState, 'FAILED');
      assert.equal(decline.state, 'FAILED');
      assert.ok(decline.errorCode, 'the decline carries its code');
      assert.equal(decline.errorCode, declinedTx.errorCode?.code ?? declinedTx.errorCode);
      await waitFor(
        () => events('callback.attempt').find((l) => l.transactionId === declinedTx.id && l.callbackEvent === 'FAILED'),
        'the FAILED callback line',
      );
    });

    test('a webhook paused by the merchant and a settlement run: one line each', async () => {
      const secret = `whsec-${randomBytes(12).toString('hex')}`;
      secrets.webhookSecret = secret;
      const created = await m.api.post(`${API}/webhooks`, { url: rx.url(rx.newPath('webhook')), events: ['transaction.success.v1'], secret });
      assert.equal(created.status, 200, created.text);
      const webhookId = created.body.webhook.id as string;
      // A payment for it to deliver (with the secret as its Authorization), then the pause.
      assert.equal((await m.api.post(`${API}/moto`, motoBody(m, { instantCapture: 'NO_VOID', card: { cvc: CVC } }))).status, 200);
      await waitFor(() => rx.hits.find((h) => h.headers.authorization === secret), 'the webhook delivery');
      assert.equal((await m.api.post(`${API}/webhooks/${webhookId}/pause`)).status, 200);
      assert.equal((await m.api.post(`${API}/webhooks/${webhookId}/pause`)).status, 200, 'pausing again changes nothing');
      const paused = events('webhook.paused').filter((l) => l.webhookId === webhookId);
      assert.equal(paused.length, 1, 'one line for the one pause');
      assert.deepEqual([paused[0]!.accountId, paused[0]!.reason], [m.accountId, 'PAUSED_BY_MERCHANT']);

      // A webhook whose receiver fails every delivery: paused by its error rate, one line.
      const failingPath = rx.newPath('failing-webhook');
      rx.respond(
        failingPath,
        Array.from({ length: 40 }, () => 500),
      );
      const failing = await m.api.post(`${API}/webhooks`, { url: rx.url(failingPath), events: ['transaction.captured.v1'], secret });
      assert.equal(failing.status, 200, failing.text);
      const failingId = failing.body.webhook.id as string;
      await Promise.all(
        Array.from({ length: 22 }, (_, i) => t.runtime.store.transaction((repos) => repos.events.append(m.accountId, 'transaction.captured.v1', { i }))),
      );
      const autoPaused = await waitFor(() => events('webhook.paused').find((l) => l.webhookId === failingId), 'the auto-pause line');
      assert.equal(autoPaused.reason, 'ERROR_RATE_TOO_HIGH');
      assert.ok(autoPaused.totalAttempts >= 20 && autoPaused.failedAttempts * 2 > autoPaused.totalAttempts, JSON.stringify(autoPaused));
      await new Promise((r) => setTimeout(r, 300)); // attempts in flight at the pause find it paused
      assert.equal(events('webhook.paused').filter((l) => l.webhookId === failingId).length, 1, 'paused once, one line');

      const run = await t.operator.post('/sandbox/v1/settlements/run', {});
      assert.equal(run.status, 200, run.text);
      const runs = events('settlement.run');
      assert.equal(runs.length, 1);
      assert.equal(runs[0]!.transfers, run.body.settlementTransfers.length);
      assert.ok(runs[0]!.transfers >= 1, 'this merchant has a transfer');
      // The first test's capture and refund, and this one's instant capture, at least.
      assert.ok(runs[0]!.rows >= 3, `rows ${runs[0]!.rows}`);
      assert.match(runs[0]!.postingDate, /^\d{4}-\d{2}-\d{2}$/);
    });

    test('a job that fails its last attempt, or settles as dead in its commit, leaves a job.dead line', async () => {
      const logger = createLogger('info', { write: (line: string) => void raw.push(line) });
      const thrown = `logs.thrown.${newId()}`;
      const settled = `logs.settled.${newId()}`;
      const definitions = [
        { kind: thrown, maxAttempts: 1, leaseMs: 30_000, backoff: () => 1000, handle: async () => Promise.reject(new Error('the receiver is gone')) },
        {
          kind: settled,
          maxAttempts: 5,
          leaseMs: 30_000,
          backoff: () => 1000,
          handle: (_payload, ctx) => t.runtime.store.transaction((repos) => ctx.settleIn(repos.jobs, { error: 'no attempt left', retryAt: null })),
        },
      ] as JobDefinition<never>[];
      const runner = new JobRunner({ store: t.runtime.store.jobs, clock: t.runtime.clock, logger, definitions, events: pinoEventsLog(logger) });
      await t.runtime.store.jobs.enqueue({ kind: thrown, payload: {}, maxAttempts: 1 });
      await t.runtime.store.jobs.enqueue({ kind: settled, payload: {} });
      await runner.drain();
      await runner.stop(100);
      const dead = (jobKind: string) => events('job.dead').filter((l) => l.kind === jobKind);
      assert.equal(dead(thrown).length, 1);
      assert.deepEqual(
        [dead(thrown)[0]!.attempts, dead(thrown)[0]!.error, dead(thrown)[0]!.level],
        [1, 'the receiver is gone', 40],
        'a warning: the operator acts',
      );
      assert.match(dead(thrown)[0]!.jobId, /^[0-9a-f-]{36}$/);
      assert.equal(dead(settled).length, 1);
      assert.equal(dead(settled)[0]!.error, 'no attempt left');
    });

    test('request lines: a 404 carries its path, a 4xx its errorCode', async () => {
      const unknownRoute = await m.api.get(`${API}/no-such-thing?token=abc`);
      assert.equal(unknownRoute.status, 404);
      const missing = newId();
      const unknownTx = await m.api.get(`${API}/transactions/${missing}`);
      assert.equal(unknownTx.status, 404);
      const invalid = await m.api.post(`${API}/moto`, { transaction: { amount: -1 }, card: { number: CARDS.VISA, cvc: CVC } });
      assert.equal(invalid.status, 422);
      const unauthorized = await t.client(null).get(`${API}/transactions`);
      assert.equal(unauthorized.status, 401);

      const requests = lines().filter((l) => l.msg === 'request');
      const routeMiss = requests.find((l) => l.path === `${API}/no-such-thing`);
      assert.ok(routeMiss, 'the unmatched path, without its query');
      assert.deepEqual([routeMiss.status, routeMiss.route, routeMiss.errorCode], [404, 'unmatched', 'NOT_FOUND']);
      const txMiss = requests.find((l) => l.path === `${API}/transactions/${missing}`);
      assert.ok(txMiss);
      assert.deepEqual([txMiss.status, txMiss.route, txMiss.errorCode], [404, `${API}/transactions/:transactionId`, 'NOT_FOUND']);
      const refused = requests.find((l) => l.status === 422 && l.route === `${API}/moto`);
      assert.ok(refused);
      assert.equal(refused.errorCode, 'VALIDATION_ERROR');
      assert.equal(refused.path, undefined, 'the path is for 404s');
      assert.ok(
        requests.some((l) => l.status === 401 && l.errorCode === 'UNAUTHORIZED'),
        'a 401 with its code',
      );
      const fine = requests.find((l) => l.status === 200);
      assert.ok(fine);
      assert.equal(fine.errorCode, undefined, 'no errorCode on a 2xx');
    });

    test('no line holds a card number, the CVC or any credential', () => {
      assert.ok(raw.length > 20, `lines captured: ${raw.length}`);
      assert.ok(Object.keys(secrets).length >= 5);
      for (const line of raw) {
        for (const digits of CARD_DIGITS) assert.doesNotMatch(line, digits, line);
        assert.ok(!line.includes(`"${CVC}"`), `the CVC in ${line}`);
        for (const [name, secret] of Object.entries(secrets)) assert.ok(!line.includes(secret), `${name} in ${line}`);
      }
    });
  });
}

for (const kind of await availableStores()) {
  describe(`billing charge logs (${kind})`, () => {
    const raw: string[] = [];
    const events = (name: string) => raw.map((line) => JSON.parse(line) as LogLine).filter((l) => l.event === name);
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { logLevel: 'info' }, { logDestination: { write: (line: string) => void raw.push(line) } });
    });
    after(() => t?.close());

    test('a charge paid at once and one declined until its attempts run out: created, attempt, retrying and final lines', async () => {
      const m = await billingMerchant(t);
      const plan = await createPlan(m.api, { maxAttempts: 2 });
      const paying = await createAgreement(m.api, (await subscribe(t, m)).subscriptionId, plan.id);
      const declining = await createAgreement(m.api, (await subscribe(t, m, LATER_MIT_DECLINED)).subscriptionId, plan.id);
      await moveClockTo(t, Date.parse(paying.nextChargeAt) + 1000);
      const [paid] = await waitForCharge(m.api, paying.id, (c) => c[0]?.state === 'SUCCESS', 'the paid charge');
      const [retrying] = await waitForCharge(m.api, declining.id, (c) => c[0]?.nextAttemptAt != null, 'the retry');
      await moveClockTo(t, Date.parse(retrying.nextAttemptAt) + 1000);
      const [failed] = await waitForCharge(m.api, declining.id, (c) => c[0]?.state === 'FAILED', 'the failed charge');
      const of = (name: string, chargeId: string) => events(name).filter((l) => l.chargeId === chargeId);
      // The final lines follow their commit (the engine's observer): give the last one a moment.
      await waitFor(() => of('billing.charge.final', failed.id).length === 1 && of('billing.charge.final', paid.id).length === 1, 'the final lines');

      const created = of('billing.charge.created', paid.id);
      assert.equal(created.length, 1);
      assert.deepEqual(
        [created[0]!.accountId, created[0]!.billingAgreementId, created[0]!.transactionId, created[0]!.amount, created[0]!.currency, created[0]!.attempt],
        [m.accountId, paying.id, paid.transactionId, plan.amount, 'DKK', 1],
      );
      assert.deepEqual(
        of('billing.charge.final', paid.id).map((l) => [l.state, l.attempts, l.transactionId]),
        [['SUCCESS', 1, paid.transactionId]],
      );
      assert.equal(of('billing.charge.retrying', paid.id).length, 0);

      assert.equal(of('billing.charge.created', failed.id).length, 1);
      const retry = of('billing.charge.retrying', failed.id);
      assert.deepEqual(
        retry.map((l) => [l.attempts, l.nextAttemptAt, l.transactionId]),
        [[1, retrying.nextAttemptAt, retrying.transactionId]],
      );
      assert.deepEqual(
        of('billing.charge.attempt', failed.id).map((l) => [l.attempt, l.transactionId]),
        [[2, failed.transactionId]],
      );
      assert.deepEqual(
        of('billing.charge.final', failed.id).map((l) => [l.state, l.attempts, l.transactionId]),
        [['FAILED', 2, failed.transactionId]],
      );
      const declines = events('payment.answered').filter((l) => failed.transactionIds.includes(l.transactionId));
      assert.deepEqual(
        declines.map((l) => [l.flow, l.state, l.errorCode]),
        [
          ['MIT', 'FAILED', 'DECLINED_BY_ISSUER_OR_SCHEME'],
          ['MIT', 'FAILED', 'DECLINED_BY_ISSUER_OR_SCHEME'],
        ],
      );
      assert.equal((await chargesOf(m.api, declining.id)).length, 1);
      for (const line of raw) for (const digits of [...CARD_DIGITS, /4000[\s-]?0000[\s-]?0000[\s-]?0341/]) assert.doesNotMatch(line, digits, line);
    });
  });
}

describe('log redaction (second line of defence)', () => {
  test('card fields and credentials are censored at the top level and one level down', () => {
    const raw: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void raw.push(line) });
    const values = [
      '4111111111111111',
      '4242424242424242',
      '5555555555554444',
      'cvc-value',
      'cvv-value',
      'sk_live_key',
      'whsec_secret',
      'Bearer tok',
      'op_key',
    ];
    logger.info({
      cardNumber: values[0],
      pan: values[1],
      card: { number: values[2], cvc: values[3] },
      payment: { cvv: values[4], apiKey: values[5] },
      webhook: { secret: values[6] },
      headers: { authorization: values[7] },
      operatorKey: values[8],
      transactionId: 'tx-1',
    });
    assert.equal(raw.length, 1);
    for (const value of values) assert.ok(!raw[0]!.includes(value), `${value} in ${raw[0]}`);
    const line = JSON.parse(raw[0]!);
    assert.equal(line.cardNumber, '[redacted]');
    assert.equal(line.payment.cvv, '[redacted]');
    assert.equal(line.transactionId, 'tx-1', 'ids stay');
  });
});
