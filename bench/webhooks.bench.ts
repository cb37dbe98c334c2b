/**
 * Webhook fan-out at scale: one merchant with 10 webhooks (the limit), every one subscribed to
 * every event, each on its own local HTTP receiver (a worker thread, on its own port); 10 000
 * events are written to the event outbox — the way the payment flows write them, in commits of
 * 100 events — and the real relay and delivery jobs (job runner, outbound HTTP sender) turn them
 * into 100 000 deliveries. Durable settings: SQLite WAL synced before any answer, PostgreSQL
 * synchronous_commit=on.
 *
 * Printed: deliveries per second (from the first event's commit to the last delivery's arrival)
 * and the lag of each delivery — from the commit of its event to its arrival at the receiver —
 * p50, p99 and max. All events are written at once, so the lag includes the queue behind them
 * (the last event waits for the 99 990 deliveries before it) and the relay's one-second period.
 * A second, steady figure writes a few hundred events at half the rate just measured (10 per
 * commit), so that its lag is the relay's period plus one delivery rather than a queue.
 * The baseline of the same run is the HTTP alone: the same 100 000 requests (same bodies and
 * headers) posted by the same sender, as many at a time as the job runner runs jobs, to the same
 * receivers — the ceiling the deliveries would reach if the database cost nothing.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { CALLBACK_TIMEOUT_MS, UndiciSender } from '../src/delivery/http-sender.js';
import { WEBHOOK_EVENTS } from '../src/modules/webhooks/webhook.js';
import type { Runtime } from '../src/runtime.js';
import { newId, newTransactionId } from '../src/shared/ids.js';
import { formatMs } from './lib/report.js';
import { benchDatabase, openRuntime, measuredStores, resetDatabase, type StoreKind } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';
import { startWebhookReceivers, type Arrivals, type WebhookReceivers } from './lib/webhook-receiver.js';

/** Figures taken while other work shares the CPUs are lower: each section says how loaded the host was. */
const hostLoad = (): string =>
  `host load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .slice(0, 2)
    .join(' (1 min), ')} (5 min) on ${os.cpus().length} CPUs`;

const WEBHOOKS = 10;
const EVENTS_PER_COMMIT = 100;
/** The runtime's job concurrency (runtime.ts default): the baseline posts as many at a time. */
const CONCURRENCY = 64;
const EVENT = 'transaction.success.v1';
const PHASE_TIMEOUT_MS = 15 * 60_000;

const epochNow = (): number => performance.timeOrigin + performance.now();
const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** What the pipeline appends for a SUCCESS transaction: about the same size and shape. */
function eventData(accountId: string, i: number) {
  const at = new Date().toISOString();
  return {
    transaction: {
      id: newTransactionId(),
      accountId,
      pointOfSaleId: newId(),
      type: 'PAYMENT',
      flow: 'MIT',
      state: 'SUCCESS',
      amount: 4900 + (i % 100),
      currency: 'DKK',
      reference: `order-${i}`,
      paymentMethod: { type: 'CARD', subType: 'Visa', displayText: '**** 1111', expiry: '2034-12-31' },
      customerId: `cust-${i}`,
      subscriptionId: newId(),
      errorCode: null,
      instantCapture: 'OFF',
      createdAt: at,
      updatedAt: at,
      finalizedAt: at,
    },
    aggregates: { authorized: 4900, captured: 0, refunded: 0, voided: 0, remaining: 4900 },
  };
}

interface Lag {
  rate: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
}

function lagOf(arrivals: Arrivals, committedAt: Map<string, number>, firstCommit: number): Lag {
  const lags = new Float64Array(arrivals.received);
  let last = 0;
  for (let i = 0; i < arrivals.received; i++) {
    const at = arrivals.times[i]!;
    const committed = committedAt.get(arrivals.eventIds[i]!);
    if (committed === undefined) throw new Error(`a delivery for an unknown event ${arrivals.eventIds[i]} arrived`);
    lags[i] = at - committed;
    last = Math.max(last, at);
  }
  lags.sort();
  const seconds = (last - firstCommit) / 1000;
  return { rate: arrivals.received / seconds, seconds, p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: lags[lags.length - 1] ?? Number.NaN };
}

/** Baseline: the same requests by the same sender, CONCURRENCY at a time, no database. */
async function httpBaseline(receivers: WebhookReceivers, events: number): Promise<{ rate: number; seconds: number; p50: number; p99: number }> {
  const sender = new UndiciSender({ allowPrivate: true, now: () => Date.now(), timeoutMs: CALLBACK_TIMEOUT_MS });
  const body = JSON.stringify({ event: EVENT, data: eventData('baseline', 0) });
  const send = async (total: number, tag: string) => {
    const { arrived } = receivers.expect(total, PHASE_TIMEOUT_MS);
    const durations = new Float64Array(total);
    let next = 0;
    let failed = 0;
    const start = epochNow();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < total; i = next++) {
          const started = performance.now();
          const result = await sender.post(
            receivers.urls[i % receivers.urls.length]!,
            {
              authorization: 'whsec-baseline',
              'content-type': 'application/json',
              'x-delivery-id': `${tag}-${i}`,
              'x-event-id': `${tag}-${Math.floor(i / receivers.urls.length)}`,
            },
            body,
          );
          durations[i] = performance.now() - started;
          if (result.status !== 200) failed++;
        }
      }),
    );
    const arrivals = await arrived;
    if (failed) throw new Error(`baseline: ${failed} of ${total} requests failed`);
    const last = arrivals.times.reduce((a, b) => Math.max(a, b), 0);
    durations.sort();
    const seconds = (last - start) / 1000;
    return { rate: total / seconds, seconds, p50: quantile(durations, 0.5), p99: quantile(durations, 0.99) };
  };
  try {
    // Warm-up (JIT, connections), not kept.
    await send(Math.min(5_000, events * receivers.urls.length), 'warmup');
    return await send(events * receivers.urls.length, 'baseline');
  } finally {
    await sender.close();
  }
}

/** Writes `events` outbox events in commits of `perCommit`, `gapMs` apart; resolves when every delivery has arrived. */
async function produce(runtime: Runtime, accountId: string, receivers: WebhookReceivers, events: number, perCommit: number, gapMs: number) {
  const { arrived } = receivers.expect(events * receivers.urls.length, PHASE_TIMEOUT_MS);
  const committedAt = new Map<string, number>();
  let firstCommit = Number.NaN;
  for (let from = 0; from < events; from += perCommit) {
    if (from > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, firstCommit + (from / perCommit) * gapMs - epochNow())));
    const ids = await runtime.store.transaction(async (repos) => {
      const written: string[] = [];
      for (let i = from; i < Math.min(events, from + perCommit); i++) written.push(await repos.events.append(accountId, EVENT, eventData(accountId, i)));
      return written;
    });
    const at = epochNow();
    if (Number.isNaN(firstCommit)) firstCommit = at;
    for (const id of ids) committedAt.set(id, at);
  }
  const producedSeconds = (epochNow() - firstCommit) / 1000;
  const arrivals = await arrived;
  if (arrivals.duplicates) throw new Error(`${arrivals.duplicates} deliveries arrived twice`);
  return { arrivals, committedAt, firstCommit, producedSeconds };
}

/** Every delivery recorded DELIVERED (a receiver may see a request just before its attempt commits). */
async function allDelivered(runtime: Runtime, expected: number): Promise<void> {
  const delivered = async () =>
    Number(
      (
        await runtime.store.db
          .selectFrom('webhookDeliveries')
          .select(sql<number>`count(*)`.as('n'))
          .where('state', '=', 'DELIVERED')
          .executeTakeFirstOrThrow()
      ).n,
    );
  const deadline = Date.now() + 60_000;
  let recorded = await delivered();
  while (recorded < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    recorded = await delivered();
  }
  if (recorded !== expected) throw new Error(`${recorded} of ${expected} deliveries recorded DELIVERED`);
}

async function runStore(ctx: BenchContext, kind: StoreKind, receivers: WebhookReceivers, events: number): Promise<void> {
  const { report } = ctx;
  const deliveries = events * WEBHOOKS;
  report.section(`${kind}: ${events} events × ${WEBHOOKS} webhooks = ${deliveries} deliveries`);
  const db = benchDatabase(kind, 'webhooks');
  await resetDatabase(db);
  const runtime: Runtime = await openRuntime(db);
  try {
    if (kind === 'postgres') {
      const { rows } = await sql<{ synchronousCommit: string }>`show synchronous_commit`.execute(runtime.store.db);
      report.note(`synchronous_commit=${rows[0]?.synchronousCommit}; ${hostLoad()}`);
    } else {
      const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(runtime.store.db);
      report.note(`synchronous=${rows[0]?.synchronous === 1 ? 'NORMAL + WAL fdatasync per group commit' : String(rows[0]?.synchronous)}; ${hostLoad()}`);
    }
    const { accounts, pointsOfSale, webhooks } = runtime.services;
    const account = await accounts.create({
      name: 'Webhook bench merchant',
      email: 'hooks@shop.example.com',
      currencyCode: 'DKK',
      timezone: 'UTC',
      domain: 'localhost',
    });
    await accounts.activate(account.id);
    await pointsOfSale.create(account.id, { name: 'Web shop', domain: 'localhost', webhookAuthentication: 'Bearer bench', type: 'ONLINE' });
    for (const [i, url] of receivers.urls.entries()) {
      await webhooks.create(account.id, { url, events: [...WEBHOOK_EVENTS], secret: `whsec-bench-${i}` });
    }

    const base = await httpBaseline(receivers, events);
    const header = `${''.padEnd(52)}${'deliveries/s'.padStart(13)}${'×base'.padStart(8)}${'lag p50 ms'.padStart(12)}${'p99 ms'.padStart(10)}${'max ms'.padStart(10)}`;
    report.note(header.trimEnd());
    report.note(
      `${`BASELINE HTTP alone (sender, ${CONCURRENCY} at a time, no database)`.padEnd(52)}${base.rate.toFixed(0).padStart(13)}${'1.00×'.padStart(8)}${formatMs(base.p50).padStart(12)}${formatMs(base.p99).padStart(10)}${''.padStart(10)}   (${base.seconds.toFixed(2)} s; lag = one POST)`,
    );

    // The measured run: the runner relays and delivers while the events are written.
    runtime.runner.start();
    const burst = await produce(runtime, account.id, receivers, events, EVENTS_PER_COMMIT, 0);
    const lag = lagOf(burst.arrivals, burst.committedAt, burst.firstCommit);
    await allDelivered(runtime, deliveries);
    report.note(
      `${`webhooks: ${events} events at once → ${deliveries} deliveries`.padEnd(52)}${lag.rate.toFixed(0).padStart(13)}${`${(lag.rate / base.rate).toFixed(2)}×`.padStart(8)}${formatMs(lag.p50).padStart(12)}${formatMs(lag.p99).padStart(10)}${formatMs(lag.max).padStart(10)}   (${lag.seconds.toFixed(2)} s; events written in ${burst.producedSeconds.toFixed(2)} s)`,
    );

    // Steady: events at half the rate just measured, in small commits, so that the lag is the
    // relay's period and one delivery rather than a queue.
    const steadyEvents = ctx.quick ? 100 : 300;
    const perCommit = 10;
    const eventsPerSecond = lag.rate / WEBHOOKS / 2;
    const gapMs = Math.min(2_000, Math.max(10, (perCommit / eventsPerSecond) * 1000));
    const steady = await produce(runtime, account.id, receivers, steadyEvents, perCommit, gapMs);
    const steadyLag = lagOf(steady.arrivals, steady.committedAt, steady.firstCommit);
    await allDelivered(runtime, deliveries + steadyEvents * WEBHOOKS);
    report.note(
      `${`webhooks: ${steadyEvents} events at ${((perCommit * 1000) / gapMs).toFixed(0)}/s (${perCommit} per commit)`.padEnd(52)}${''.padStart(13)}${''.padStart(8)}${formatMs(steadyLag.p50).padStart(12)}${formatMs(steadyLag.p99).padStart(10)}${formatMs(steadyLag.max).padStart(10)}   (steady: half the rate above; the relay runs once a second)`,
    );
    report.note(hostLoad());
  } finally {
    await runtime.close();
  }
}

export default defineSuite({
  name: 'webhooks',
  description: 'fan-out of 10k outbox events to 10 webhooks on local receivers: deliveries/s and lag from event commit to arrival',
  async run(ctx) {
    const events = ctx.quick ? 1_000 : 10_000;
    const receivers = await startWebhookReceivers(WEBHOOKS);
    try {
      for await (const kind of measuredStores(ctx.report, 'webhook figures')) {
        await runStore(ctx, kind, receivers, events);
      }
    } finally {
      await receivers.close();
    }
  },
});
