/**
 * Callback delivery policy (INTERFACE §8): the retry schedule (attempts 1 and 2 at once, attempt
 * n ≥ 3 after 2^n s, at most 3 h), 25 attempts and then the job is dead and the notification
 * FAILED, and the 5 s timeout of one attempt against a receiver that never answers.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { callbackBackoff } from '../../src/delivery/callbacks.js';
import { CALLBACK_TIMEOUT_MS } from '../../src/delivery/http-sender.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import { CALLBACK_JOB, CALLBACK_MAX_ATTEMPTS } from '../../src/modules/transactions/payment-engine.js';
import { API, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { motoBody, startReceiver, waitFor } from './helpers.js';

const HOURS_3 = 3 * 3600 * 1000;

/** The contract's delay before attempt n, in ms. */
const contractDelayBefore = (n: number) => (n <= 2 ? 0 : Math.min(HOURS_3, 2 ** n * 1000));

describe('callback retry schedule (unit)', () => {
  test('callbackBackoff(n - 1) is the delay before attempt n: 1 and 2 at once, then 2^n s, capped at 3 h', () => {
    const delays = Array.from({ length: 25 }, (_, i) => callbackBackoff(i));
    const expected = [
      0,
      0,
      8,
      16,
      32,
      64,
      128,
      256,
      512,
      1024,
      2048,
      4096,
      8192, // attempts 1..13
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800,
      10_800, // attempts 14..25: 2^14 s > 3 h
    ].map((s) => s * 1000);
    assert.deepEqual(delays, expected);
    for (let n = 1; n <= 25; n++) assert.equal(callbackBackoff(n - 1), contractDelayBefore(n), `attempt ${n}`);
  });

  test('25 attempts in all, 5 s per attempt', () => {
    assert.equal(CALLBACK_MAX_ATTEMPTS, 25);
    assert.equal(CALLBACK_TIMEOUT_MS, 5000);
  });
});

/** An HTTP server that reads requests and never answers them. */
async function startSilentReceiver() {
  const received: string[] = [];
  const server = http.createServer((req) => {
    received.push(req.url ?? '');
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: (path: string) => `http://localhost:${(server.address() as AddressInfo).port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stores = await availableStores();
/** Attempts for which the runner is also shown not to send early (every attempt's nextAttemptAt is checked). */
const CHECK_NOT_EARLY = new Set([3, 4, 13, 14, 25]);

// Every test has its own runtime, so they run at once: the timeout tests each wait out a real 5 s.
describe('callback delivery', { concurrency: true }, () => {
  for (const kind of stores) {
    test(`a callback answered 500 every time follows the schedule for 25 attempts, then the notification is FAILED and the job dead (${kind})`, async () => {
      // No background runner: the test drives the jobs with drain() and moves the service clock itself.
      const t = await startTestRuntime(kind, {}, { startWorkers: false });
      const rx = await startReceiver();
      try {
        const merchant = await t.createMerchant({ physical: false });
        // An API key: the clock moves by days, far past the 8-hour access token.
        const m = { ...merchant, api: t.client((await merchant.api.post(`${API}/management/api-keys`, { name: 'callbacks' })).body.key) };
        const path = rx.newPath('always-500');
        rx.respond(
          path,
          Array.from({ length: 30 }, () => 500),
        );
        const moto = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url(path) }));
        assert.equal(moto.status, 200, moto.text);
        const txId = moto.body.transaction.id as string;
        const notification = async () => (await m.api.get(`${API}/transactions/${txId}/notifications`)).body.notifications[0];

        // A runner of callback jobs only, on the service clock: the clock jumps make other scheduled work due too.
        const definition = t.runtime.services.jobs.find((d) => d.kind === CALLBACK_JOB);
        assert.ok(definition);
        const runner = new JobRunner({ store: t.runtime.store.jobs, clock: t.runtime.clock, logger: createLogger('silent'), definitions: [definition] });
        await runner.drain();
        assert.equal(rx.at(path).length, 1, 'attempt 1');
        // Attempt 2 without backoff but not in the same instant: 250–1000 ms later (callbacks.ts).
        const first = await notification();
        const gap = Date.parse(first.nextAttemptAt) - Date.parse(first.attempts[0].createdAt);
        assert.ok(gap >= 250 && gap < 1000, `attempt 2 within a second (${gap} ms)`);
        await t.runtime.clock.advance(1);
        await runner.drain();
        assert.equal(rx.at(path).length, 2, 'attempt 2 promptly');
        for (let n = 3; n <= CALLBACK_MAX_ATTEMPTS; n++) {
          const pending = await notification();
          assert.equal(pending.state, 'PENDING');
          assert.equal(pending.attemptCount, n - 1);
          const last = pending.attempts.at(-1);
          // The contract's delay ± 10 % jitter, never above the 3 h cap.
          const delay = Date.parse(pending.nextAttemptAt) - Date.parse(last.createdAt);
          const nominal = contractDelayBefore(n);
          assert.ok(delay >= Math.round(nominal * 0.9) && delay <= Math.min(HOURS_3, Math.round(nominal * 1.1)), `nextAttemptAt of attempt ${n}: ${delay} ms`);
          const wait = delay / 1000;
          if (CHECK_NOT_EARLY.has(n)) {
            // 4 s short of the delay (the service clock also runs in real time meanwhile).
            await t.runtime.clock.advance(wait - 4);
            await runner.drain();
            assert.equal(rx.at(path).length, n - 1, `attempt ${n} not before its delay`);
            await t.runtime.clock.advance(4);
          } else {
            await t.runtime.clock.advance(wait);
          }
          await runner.drain();
          assert.equal(rx.at(path).length, n, `attempt ${n} once due`);
        }

        const failed = await notification();
        assert.equal(failed.state, 'FAILED');
        assert.equal(failed.attemptCount, 25);
        assert.equal(failed.nextAttemptAt, null);
        assert.equal(failed.deliveredAt, null);
        assert.deepEqual(
          failed.attempts.map((a: any) => a.attempt),
          Array.from({ length: 25 }, (_, i) => i + 1),
        );
        assert.ok(failed.attempts.every((a: any) => a.statusCode === 500 && a.error === 'HTTP 500'));
        assert.equal(new Set(rx.at(path).map((h) => h.headers['x-delivery-id'])).size, 1);

        const jobs = await t.runtime.store.db.selectFrom('jobs').select(['state', 'attempts']).where('kind', '=', CALLBACK_JOB).execute();
        assert.deepEqual(
          jobs.map((j) => ({ ...j })),
          [{ state: 'dead', attempts: 25 }],
        );
        await t.runtime.clock.advance(24 * 3600);
        await runner.drain();
        assert.equal(rx.at(path).length, 25, 'no 26th attempt');
      } finally {
        await t.close();
        await rx.close();
      }
    });

    test(`a final state scheduled again sends no second callback, also once its first job was swept away (${kind})`, async () => {
      const t = await startTestRuntime(kind, {}, { startWorkers: false });
      const rx = await startReceiver();
      try {
        const m = await t.createMerchant({ physical: false });
        const path = rx.newPath('once');
        const moto = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url(path) }));
        assert.equal(moto.status, 200, moto.text);
        const txId = moto.body.transaction.id as string;
        await t.runtime.runner.drain();
        assert.equal(rx.at(path).length, 1, 'the callback');
        const tx = await t.runtime.store.transactions.findById(m.accountId, txId);
        assert.ok(tx);
        const scheduleAgain = () => t.runtime.store.transaction((repos) => t.runtime.services.callbacks.scheduleInCommit(repos, tx));
        await scheduleAgain();
        await t.runtime.runner.drain();
        // The finished job is swept after a week (maintenance): its dedupe key is free again.
        await t.runtime.store.db.deleteFrom('jobs').where('kind', '=', CALLBACK_JOB).execute();
        await scheduleAgain();
        await t.runtime.runner.drain();
        const jobs = await t.runtime.store.db.selectFrom('jobs').select('state').where('kind', '=', CALLBACK_JOB).execute();
        assert.deepEqual(
          jobs.map((j) => j.state),
          ['done'],
          'the new job ran',
        );
        assert.equal(rx.at(path).length, 1, 'still one callback');
        const notifications = (await m.api.get(`${API}/transactions/${txId}/notifications`)).body.notifications;
        assert.equal(notifications.length, 1);
        assert.equal(notifications[0].attemptCount, 1);
      } finally {
        await t.close();
        await rx.close();
      }
    });

    test(`a callback started from a row a resend delivered meanwhile is sent, numbered from the row, and leaves the row DELIVERED (${kind})`, async () => {
      const t = await startTestRuntime(kind, {}, { startWorkers: false });
      const rx = await startReceiver();
      try {
        const m = await t.createMerchant({ physical: false });
        const path = rx.newPath('stale');
        rx.respond(path, [200, 500, 500]);
        const moto = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url(path) }));
        assert.equal(moto.status, 200, moto.text);
        const txId = moto.body.transaction.id as string;
        const list = async () => (await m.api.get(`${API}/transactions/${txId}/notifications`)).body.notifications;
        // The row as its commit wrote it: what a queued job claimed by this process starts from (JobHandoff.remember).
        const [written] = await t.runtime.store.notifications.listForTransaction(m.accountId, txId);
        assert.ok(written);
        assert.deepEqual([written.state, written.attempts], ['PENDING', 0]);
        // Another delivery of the row (a resend's, or this job's own first run) gets there first.
        await t.runtime.runner.drain();
        const delivered = (await list())[0];
        assert.equal(delivered.state, 'DELIVERED');
        const payload = { accountId: m.accountId, transactionId: txId, event: written.event, notificationId: written.id };
        const run = (resend: boolean) =>
          t.runtime.services.callbacks.deliver(resend ? { ...payload, resend } : payload, {
            attempt: 1,
            settleIn: async () => undefined,
            job: { known: written },
          });

        await run(false);
        assert.equal(rx.at(path).length, 2, 'sent again: callbacks are at least once');
        const after = (await list())[0];
        assert.deepEqual(
          after.attempts.map((a: any) => [a.attempt, a.statusCode]),
          [
            [1, 200],
            [2, 500],
          ],
          'numbered from the row, not from the stale copy',
        );
        assert.deepEqual([after.state, after.deliveredAt, after.nextAttemptAt, after.attemptCount], ['DELIVERED', delivered.deliveredAt, null, 2]);

        // A merchant's resend that fails reopens the row, as before.
        await run(true);
        const reopened = (await list())[0];
        assert.deepEqual(
          reopened.attempts.map((a: any) => a.attempt),
          [1, 2, 3],
        );
        assert.equal(reopened.state, 'PENDING');
        assert.ok(reopened.nextAttemptAt);
      } finally {
        await t.close();
        await rx.close();
      }
    });

    test(`a receiver that never answers is abandoned after 5 s and the attempt recorded as a timeout (${kind})`, async () => {
      const t = await startTestRuntime(kind, { shutdownTimeoutMs: 100 });
      const rx = await startSilentReceiver();
      try {
        const m = await t.createMerchant({ physical: false });
        // Before the request: the callback's attempt starts in the MOTO's answer commit, before its response arrives.
        const started = Date.now();
        const moto = await m.api.post(`${API}/moto`, motoBody(m, { notificationUrl: rx.url('/silent') }));
        assert.equal(moto.status, 200, moto.text);
        const txId = moto.body.transaction.id as string;
        const notification = await waitFor(
          async () => {
            const n = (await m.api.get(`${API}/transactions/${txId}/notifications`)).body.notifications[0];
            return n?.attempts.length ? n : null;
          },
          'the first attempt to be recorded',
          10_000,
        );
        const elapsed = Date.now() - started;
        assert.ok(rx.received.length >= 1, 'the receiver got the request');
        const [attempt] = notification.attempts;
        assert.equal(attempt.attempt, 1);
        assert.equal(attempt.statusCode, null, 'no answer');
        assert.match(attempt.error, /timeout/i);
        // Abandoned after the 5 s timeout: not earlier, and not much later (slack for a loaded machine).
        assert.ok(attempt.durationMs >= 4900 && attempt.durationMs < 7500, `abandoned after ~5 s (durationMs ${attempt.durationMs})`);
        assert.ok(elapsed >= 4900, `not recorded before the timeout (${elapsed} ms)`);
        assert.equal(notification.state, 'PENDING', 'a timeout is retried');
      } finally {
        await t.close();
        await rx.close();
      }
    });
  }
});
