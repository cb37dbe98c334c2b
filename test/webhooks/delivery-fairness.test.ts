/**
 * Issue 9, point 5: one merchant's slow receiver cannot slow the others. Merchant A's receiver
 * takes every request and never answers (each attempt waits out the real 5 s timeout); merchant B's
 * receiver, on the same host name (localhost) on another port, answers 200 at once. A floods with
 * MITs (callbacks and transaction.success.v1 webhook deliveries to its hanging receiver), then B's
 * MITs arrive spread over several seconds — across the moment A's first attempts time out and are
 * retried. B's callbacks must reach B within a second of the transaction becoming final (p99), and
 * B's webhook deliveries within a second of being created; A's deliveries are bounded, not starved:
 * attempted and recorded, at most a merchant's share of concurrent requests, no attempts counted
 * for the times a job was put back because the gate was full.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { DELIVERY_GATE_DEFAULTS } from '../../src/delivery/delivery-gate.js';
import { CALLBACK_TIMEOUT_MS } from '../../src/delivery/http-sender.js';
import { CALLBACK_JOB, CALLBACK_MAX_ATTEMPTS } from '../../src/modules/transactions/payment-engine.js';
import { WEBHOOK_DELIVER_JOB } from '../../src/modules/webhooks/webhooks.service.js';
import { mitBody, ok, storedCard } from '../online/cit-flows.js';
import { API, startTestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { sleep, waitFor } from './support.js';

const A_FLOOD = 200;
const B_COUNT = 50;
const B_SPACING_MS = 150;
const P99_BOUND_MS = 1000;

interface Receipt {
  path: string;
  at: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * A receiver on localhost (dual-stack `::`). `hang` keeps every request open without answering;
 * otherwise it answers 200 at once. Counts requests open at the same time.
 */
async function startReceiver(mode: 'hang' | 'fast') {
  const receipts: Receipt[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    // The response's close: answered, or the connection dropped (the sender's timeout).
    res.on('close', () => open--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      receipts.push({ path: new URL(req.url ?? '/', 'http://localhost').pathname, at: Date.now(), headers: req.headers, body });
      if (mode === 'fast') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    receipts,
    maxOpen: () => maxOpen,
    url: (path: string) => `http://localhost:${port}${path}`,
    at: (path: string) => receipts.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN;
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)];
  return `n=${sorted.length} p50=${at(0.5)} p90=${at(0.9)} p99=${at(0.99)} max=${sorted.at(-1)} ms`;
};

for (const kind of await availableStores()) {
  describe(`delivery fairness (${kind})`, () => {
    test('a merchant whose receiver never answers does not delay another merchant’s callbacks and webhook deliveries', { timeout: 60_000 }, async (ctx) => {
      const t = await startTestRuntime(kind, { shutdownTimeoutMs: 100 });
      const hang = await startReceiver('hang');
      const fast = await startReceiver('fast');
      try {
        const a = await t.createMerchant({ physical: false });
        const b = await t.createMerchant({ physical: false });
        const aCard = await storedCard(t, a, 'cust-a');
        const bCard = await storedCard(t, b, 'cust-b');
        for (const [m, rx] of [
          [a, hang],
          [b, fast],
        ] as const) {
          ok(
            await m.api.post(`${API}/webhooks`, { url: rx.url('/webhook'), events: ['transaction.success.v1'], secret: `whsec-${m.accountId}` }),
            'register webhook',
          );
        }

        // A's flood: MITs whose callbacks (and webhook deliveries) all go to the hanging receiver.
        const floodStarted = Date.now();
        for (let i = 0; i < A_FLOOD; i += 25) {
          await Promise.all(
            Array.from({ length: Math.min(25, A_FLOOD - i) }, () =>
              m200(a.api.post(`${API}/mit`, mitBody(aCard.subscriptionId, hang.url('/callback'))), 'A MIT'),
            ),
          );
        }
        await waitFor(() => hang.receipts.length > 0, 'A’s receiver to be called');

        // B's MITs, spread over several seconds: across A's first timeouts and their retries.
        const answeredAt = new Map<string, number>();
        for (let i = 0; i < B_COUNT; i++) {
          const tx = (await m200(b.api.post(`${API}/mit`, mitBody(bCard.subscriptionId, fast.url('/callback'))), 'B MIT')).transaction;
          answeredAt.set(tx.id, Date.now());
          await sleep(B_SPACING_MS);
        }
        const bIds = [...answeredAt.keys()];
        const callbackOf = (id: string) => fast.at('/callback').find((r) => r.body?.transaction?.id === id);
        const webhookOf = (id: string) => fast.at('/webhook').find((r) => r.body?.data?.transaction?.id === id);
        const complete = await waitFor(() => bIds.every((id) => callbackOf(id) && webhookOf(id)), 'all of B’s callbacks and webhook deliveries', 30_000).catch(
          () => false,
        );

        // B's delays: a callback from the transaction's final state (and from the MIT's answer), a
        // webhook delivery from its creation by the relay (which runs once per second by design).
        const { db } = t.runtime.store;
        const finals = new Map(
          (await db.selectFrom('transactions').select(['id', 'finalizedAt']).where('id', 'in', bIds).execute()).map((r) => [r.id, r.finalizedAt]),
        );
        const deliveries = await db.selectFrom('webhookDeliveries').select(['id', 'createdAt']).where('accountId', '=', b.accountId).execute();
        const createdAt = new Map(deliveries.map((d) => [d.id, Date.parse(d.createdAt)]));
        const missing = Number.POSITIVE_INFINITY;
        const fromFinal = bIds.map((id) => (callbackOf(id)?.at ?? missing) - Date.parse(finals.get(id) ?? ''));
        const fromAnswer = bIds.map((id) => (callbackOf(id)?.at ?? missing) - answeredAt.get(id)!);
        const webhookDelays = bIds.map((id) => {
          const hit = webhookOf(id);
          return hit ? hit.at - createdAt.get(String(hit.headers['x-delivery-id']))! : missing;
        });
        ctx.diagnostic(`B callbacks from final: ${summary(fromFinal)}`);
        ctx.diagnostic(`B callbacks from the MIT answer: ${summary(fromAnswer)}`);
        ctx.diagnostic(`B webhook deliveries from creation: ${summary(webhookDelays)}`);
        ctx.diagnostic(`A: ${hang.receipts.length} requests received in ${Date.now() - floodStarted} ms, at most ${hang.maxOpen()} open at once`);
        assert.ok(complete, 'every callback and webhook delivery of B arrived');
        assert.ok(p99(fromFinal) < P99_BOUND_MS, `B callbacks p99 from final ${p99(fromFinal)} ms`);
        assert.ok(p99(webhookDelays) < P99_BOUND_MS, `B webhook deliveries p99 from creation ${p99(webhookDelays)} ms`);

        // A is bounded, not starved: its deliveries were attempted, the first ones timed out and
        // were recorded, and never more than a merchant's share were open at once.
        assert.ok(Date.now() - floodStarted > CALLBACK_TIMEOUT_MS + 1000, 'the run outlasted A’s first timeouts');
        assert.ok(hang.receipts.length >= 2, `A’s receiver was called (${hang.receipts.length})`);
        assert.ok(
          hang.maxOpen() <= DELIVERY_GATE_DEFAULTS.perMerchant,
          `at most ${DELIVERY_GATE_DEFAULTS.perMerchant} of A’s requests open at once (${hang.maxOpen()})`,
        );
        // Callbacks and webhook deliveries share the merchant's slots: the first wave may hold both.
        const aCallbackAttempts = await db
          .selectFrom('notificationAttempts')
          .innerJoin('notifications', 'notifications.id', 'notificationAttempts.notificationId')
          .select(['notificationAttempts.error'])
          .where('notifications.accountId', '=', a.accountId)
          .execute();
        const aWebhookAttempts = await db
          .selectFrom('webhookDeliveryAttempts')
          .innerJoin('webhookDeliveries', 'webhookDeliveries.id', 'webhookDeliveryAttempts.deliveryId')
          .select(['webhookDeliveryAttempts.error'])
          .where('webhookDeliveries.accountId', '=', a.accountId)
          .execute();
        const aAttempts = [...aCallbackAttempts, ...aWebhookAttempts];
        assert.ok(
          aAttempts.length >= DELIVERY_GATE_DEFAULTS.perMerchant,
          `A’s first attempts are recorded (${aCallbackAttempts.length} callbacks, ${aWebhookAttempts.length} webhook deliveries)`,
        );
        assert.ok(
          aAttempts.every((x) => /timeout/i.test(x.error ?? '')),
          'as timeouts',
        );

        // The attempts counter counts attempts, not deferrals: each of A's jobs has at most one
        // more claim (an attempt under way, not recorded yet) than recorded attempts.
        const notifications = new Map(
          (await db.selectFrom('notifications').select(['transactionId', 'attempts']).where('accountId', '=', a.accountId).execute()).map((n) => [
            n.transactionId,
            n.attempts,
          ]),
        );
        const aDeliveries = new Map(
          (await db.selectFrom('webhookDeliveries').select(['id', 'attempts']).where('accountId', '=', a.accountId).execute()).map((d) => [d.id, d.attempts]),
        );
        const jobs = await db
          .selectFrom('jobs')
          .select(['kind', 'payload', 'state', 'attempts', 'createdAt', 'updatedAt'])
          .where('kind', 'in', [CALLBACK_JOB, WEBHOOK_DELIVER_JOB])
          .execute();
        let aJobs = 0;
        let deferred = 0;
        for (const job of jobs) {
          const payload = JSON.parse(job.payload);
          const recorded =
            job.kind === CALLBACK_JOB
              ? payload.accountId === a.accountId
                ? (notifications.get(payload.transactionId) ?? 0)
                : null
              : (aDeliveries.get(payload.deliveryId) ?? null);
          if (recorded === null) continue;
          aJobs++;
          assert.ok(job.attempts <= recorded + 1, `${job.kind} job: ${job.attempts} attempts counted for ${recorded} recorded`);
          assert.ok(job.attempts <= CALLBACK_MAX_ATTEMPTS && recorded <= CALLBACK_MAX_ATTEMPTS);
          // Claimed and given back without an attempt counted: a deferral.
          if (job.state === 'queued' && job.attempts === 0 && job.updatedAt > job.createdAt) deferred++;
        }
        ctx.diagnostic(`A: ${aJobs} delivery jobs, ${deferred} of them put back by the gate with no attempt counted`);
        assert.ok(aJobs >= A_FLOOD, `A's callback jobs exist (${aJobs})`);
        assert.ok(deferred > 0, 'A’s jobs were deferred, not run');
      } finally {
        await t.close();
        await hang.close();
        await fast.close();
      }
    });
  });
}

async function m200(res: Promise<{ status: number; text: string; body: any }>, what: string) {
  const r = await res;
  assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${r.text}`);
  return r.body;
}
