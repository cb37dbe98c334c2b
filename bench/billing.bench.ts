/**
 * Subscription billing at scale: 10 000 ACTIVE billing agreements (each on an ACTIVE SCHEDULED
 * subscription with its own approved stored card) fall due at one sandbox clock advance
 * (POST /sandbox/v1/clock); the real charge scheduler and job runner create every charge and
 * its MIT attempt, the sandbox acquirer (latency 0) approves it, and the charge becomes SUCCESS.
 * Durable settings: SQLite WAL synced before any answer, PostgreSQL synchronous_commit=on.
 *
 * Printed: charges created per second, charges settled (final SUCCESS) per second, and the time
 * from the clock advance until the last charge is final — taken from the charges' own timestamps
 * (service time: the advance moves the clock to the instant the agreements are due), and checked
 * against what a poll of the database saw. The baseline of the same run is the payment pipeline
 * alone: the same number of MIT authorizations on the same subscriptions, created in commits of
 * 500 and driven by the same job runner — the gap is what the scheduler itself costs.
 *
 * Seeding writes directly through the repositories (cards through the real vault), in commits of
 * 500: each agreement exactly as POST /agreements writes it (the row, its agreement-active event
 * and its charge-due job).
 */
import os from 'node:os';
import { sql } from 'kysely';
import { newId } from '../src/shared/ids.js';
import { enqueueChargeDue } from '../src/modules/billing/charge-jobs.js';
import type { BillingAgreement } from '../src/modules/billing/agreement.js';
import { AGREEMENT_EVENTS } from '../src/modules/billing/agreement.js';
import { billingAgreementWire } from '../src/modules/billing/agreements.schemas.js';
import type { BillingPlan } from '../src/modules/billing/plan.js';
import type { PaymentMethod } from '../src/modules/payment-methods/payment-method.js';
import type { Subscription } from '../src/modules/subscriptions/subscription.js';
import type { PaymentRequest } from '../src/modules/transactions/payment-engine.js';
import type { Runtime } from '../src/runtime.js';
import type { Repositories } from '../src/storage/store.js';
import { benchDatabase, openRuntime, measuredStores, resetDatabase, type StoreKind } from './lib/stores.js';
import { defineSuite, type BenchContext } from './lib/suite.js';

/** Figures taken while other work shares the CPUs are lower: each section says how loaded the host was. */
const hostLoad = (): string =>
  `host load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .slice(0, 2)
    .join(' (1 min), ')} (5 min) on ${os.cpus().length} CPUs`;

const CHUNK = 500;
const VISA_APPROVED = '4111111111111111';
/** Longest wait for a phase before the bench gives up (a stuck run must not hang the command). */
const PHASE_TIMEOUT_MS = 15 * 60_000;
const POLL_MS = 20;
const BASELINE_REFERENCE = 'baseline-';

interface Seeded {
  accountId: string;
  pointOfSaleId: string;
  plan: BillingPlan;
  subscriptions: Subscription[];
  paymentMethods: Map<string, PaymentMethod>;
  dueAt: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const rate = (n: number, ms: number): string => (ms > 0 ? Math.round(n / (ms / 1000)).toString() : 'n/a');
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function seed(runtime: Runtime, agreements: number, dueAt: number): Promise<Seeded> {
  const { accounts, pointsOfSale, paymentMethods, billing } = runtime.services;
  const account = await accounts.create({
    name: 'Billing bench merchant',
    email: 'billing@shop.example.com',
    currencyCode: 'DKK',
    timezone: 'UTC',
    domain: 'shop.example.com',
  });
  await accounts.activate(account.id);
  const pos = await pointsOfSale.create(account.id, { name: 'Web shop', domain: 'shop.example.com', webhookAuthentication: 'Bearer bench', type: 'ONLINE' });
  const plan = await billing.plans.create(account.id, {
    name: 'Daily plan',
    amount: 4900,
    currency: 'DKK',
    maxAttempts: 3,
    interval: { period: 'DAY', frequency: 1 },
  });
  const subscriptions: Subscription[] = [];
  const methods = new Map<string, PaymentMethod>();
  for (let from = 0; from < agreements; from += CHUNK) {
    const size = Math.min(CHUNK, agreements - from);
    // The real vault: validated, sealed, stored (concurrent: they share group commits / the pool).
    const cards = await Promise.all(
      Array.from({ length: size }, (_, k) =>
        paymentMethods.storeCard(account.id, {
          customerId: `cust-${from + k}`,
          card: { number: VISA_APPROVED, expiryMonth: 12, expiryYear: 2034, cvc: '123', holderName: `Holder ${from + k}` },
        }),
      ),
    );
    const now = runtime.clock.nowIso();
    const subs: Subscription[] = cards.map((card, k) => ({
      id: newId(),
      accountId: account.id,
      pointOfSaleId: pos.id,
      paymentMethodId: card.id,
      sessionId: null,
      customerId: card.customerId,
      currency: 'DKK',
      reference: `sub-${from + k}`,
      description: null,
      state: 'ACTIVE',
      statusReason: null,
      type: 'SCHEDULED',
      expiryDate: null,
      interval: { period: 'DAY', frequency: 1 },
      amount: null,
      createdAt: now,
      updatedAt: now,
    }));
    await runtime.store.transaction(async (repos) => {
      for (const s of subs) await repos.subscriptions.insert(s);
      for (const s of subs) {
        // As BillingAgreementsService.insertActive writes it.
        const agreement: BillingAgreement = {
          id: newId(),
          accountId: account.id,
          billingPlanId: plan.id,
          subscriptionId: s.id,
          sessionId: null,
          customerId: s.customerId,
          state: 'ACTIVE',
          nextChargeAt: iso(dueAt),
          lastChargeAt: null,
          desiredDate: null,
          reference: `agreement-${s.reference}`,
          stateChangedAt: now,
          createdAt: now,
          updatedAt: now,
        };
        await repos.billingAgreements.insert(agreement);
        await repos.events.append(account.id, AGREEMENT_EVENTS.ACTIVE, billingAgreementWire(agreement));
        await enqueueChargeDue(repos.jobs, agreement);
      }
    });
    subscriptions.push(...subs);
    for (const card of cards) methods.set(card.id, card);
  }
  return { accountId: account.id, pointOfSaleId: pos.id, plan, subscriptions, paymentMethods: methods, dueAt };
}

async function count(runtime: Runtime, table: 'billingAgreementCharges' | 'transactions', filter: (q: any) => any): Promise<number> {
  const row = await filter(runtime.store.db.selectFrom(table).select(sql<number>`count(*)`.as('n'))).executeTakeFirstOrThrow();
  return Number((row as { n: number }).n);
}

/**
 * Progress without loading the database: a result listener of the payment pipeline (it runs in
 * the commit that makes a transaction final) counts charge attempts and baseline payments. A poll
 * of the database every 50 ms would itself hold SQLite's one connection for milliseconds each
 * time (a count over 10k charges), slowing what it measures; the database is asked once the count
 * is reached, to confirm it, and the figures come from the rows' own timestamps.
 */
interface Progress {
  chargesFinal: number;
  baselineFinal: number;
}

function trackProgress(runtime: Runtime): Progress {
  const progress: Progress = { chargesFinal: 0, baselineFinal: 0 };
  runtime.services.payments.observeFinal((transaction) => {
    if (transaction.billingAgreementChargeId) progress.chargesFinal++;
    else if (transaction.reference?.startsWith(BASELINE_REFERENCE)) progress.baselineFinal++;
  });
  return progress;
}

/** Waits until `reached()` (in memory), then until the database confirms with `confirmed()`; returns ms since `start`. */
async function waitUntil(start: number, what: string, reached: () => boolean, confirmed: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (reached() && (await confirmed())) return performance.now() - start;
    if (performance.now() - start > PHASE_TIMEOUT_MS) throw new Error(`timed out after ${PHASE_TIMEOUT_MS / 1000} s waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

interface BatcherSnapshot {
  commits: number;
  closures: number;
  largestBatch: number;
}
const snapshot = (runtime: Runtime): BatcherSnapshot | null => (runtime.store.batcher ? { ...runtime.store.batcher.stats } : null);
function commits(runtime: Runtime, before: BatcherSnapshot | null): string {
  const now = snapshot(runtime);
  if (!before || !now) return '';
  const c = now.commits - before.commits;
  return `, ${c} group commits (${((now.closures - before.closures) / Math.max(1, c)).toFixed(1)} units each)`;
}

/** Baseline: MIT authorizations on the same subscriptions, through the pipeline alone. */
async function pipelineBaseline(ctx: BenchContext, runtime: Runtime, seeded: Seeded, progress: Progress): Promise<number> {
  const n = seeded.subscriptions.length;
  const before = snapshot(runtime);
  const start = performance.now();
  for (let from = 0; from < n; from += CHUNK) {
    const requests: PaymentRequest<Repositories>[] = seeded.subscriptions.slice(from, from + CHUNK).map((s) => ({
      accountId: seeded.accountId,
      pointOfSaleId: s.pointOfSaleId,
      flow: 'MIT',
      type: 'PAYMENT',
      operation: 'AUTHORIZATION',
      amount: seeded.plan.amount,
      currency: seeded.plan.currency,
      paymentMethod: seeded.paymentMethods.get(s.paymentMethodId)!,
      reference: `${BASELINE_REFERENCE}${s.id}`,
      notificationUrl: null,
      customerId: s.customerId,
      instantCapture: 'OFF',
      scaMode: null,
      exemptions: null,
      descriptor: null,
      subscriptionId: s.id,
      billingAgreementChargeId: null,
    }));
    await runtime.services.payments.submitMany(requests);
  }
  const created = performance.now() - start;
  const final = (q: any) => q.where('flow', '=', 'MIT').where('billingAgreementChargeId', 'is', null).where('state', 'in', ['SUCCESS', 'FAILED']);
  const done = await waitUntil(
    start,
    'the baseline MIT payments',
    () => progress.baselineFinal >= n,
    async () => (await count(runtime, 'transactions', final)) >= n,
  );
  const ok = await count(runtime, 'transactions', (q) =>
    q.where('flow', '=', 'MIT').where('billingAgreementChargeId', 'is', null).where('state', '=', 'SUCCESS'),
  );
  if (ok !== n) throw new Error(`baseline: ${ok} of ${n} MIT payments SUCCESS`);
  ctx.report.note(
    `BASELINE ${n} MIT payments, pipeline alone`.padEnd(46) +
      `created ${rate(n, created).padStart(6)}/s   final ${rate(n, done).padStart(6)}/s   all final after ${secs(done)}${commits(runtime, before)}`,
  );
  return n / (done / 1000);
}

async function runStore(ctx: BenchContext, kind: StoreKind, agreements: number): Promise<void> {
  const { report } = ctx;
  report.section(`${kind}: ${agreements} agreements due at one clock advance`);
  const db = benchDatabase(kind, 'billing');
  await resetDatabase(db);
  const runtime = await openRuntime(db, { sandbox: true, sandboxLatencyMs: 0 });
  try {
    if (kind === 'postgres') {
      const { rows } = await sql<{ synchronousCommit: string }>`show synchronous_commit`.execute(runtime.store.db);
      report.note(`synchronous_commit=${rows[0]?.synchronousCommit}; ${hostLoad()}`);
    } else {
      const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(runtime.store.db);
      report.note(`synchronous=${rows[0]?.synchronous === 1 ? 'NORMAL + WAL fdatasync per group commit' : String(rows[0]?.synchronous)}; ${hostLoad()}`);
    }
    // Due a few minutes ahead: nothing is due while seeding; the advance makes all of it due at once.
    const dueAt = Math.ceil((runtime.clock.now() + 10 * 60_000) / 1000) * 1000;
    const seedStart = performance.now();
    const seeded = await seed(runtime, agreements, dueAt);
    report.note(`seeded ${agreements} agreements (cards, subscriptions, agreements, charge-due jobs) in ${secs(performance.now() - seedStart)}`);

    const progress = trackProgress(runtime);
    runtime.runner.start();
    const baselineRate = await pipelineBaseline(ctx, runtime, seeded, progress);

    // The measured run: one sandbox clock advance, then the scheduler and runner do the rest.
    const before = snapshot(runtime);
    const start = performance.now();
    const res = await runtime.app.inject({
      method: 'POST',
      url: '/sandbox/v1/clock',
      headers: { authorization: `Bearer ${runtime.operatorKey}` },
      payload: { now: iso(dueAt) },
    });
    if (res.statusCode !== 200) throw new Error(`clock advance: HTTP ${res.statusCode} ${res.body}`);
    const charges = (q: any) => q.where('accountId', '=', seeded.accountId);
    const finalSeen = await waitUntil(
      start,
      'the charges to be final',
      () => progress.chargesFinal >= agreements,
      async () => (await count(runtime, 'billingAgreementCharges', (q) => charges(q).where('state', 'in', ['SUCCESS', 'FAILED']))) >= agreements,
    );

    const stats = await runtime.store.db
      .selectFrom('billingAgreementCharges')
      .select([
        sql<number>`count(*)`.as('n'),
        sql<number>`sum(case when state = 'SUCCESS' then 1 else 0 end)`.as('succeeded'),
        sql<string>`max(created_at)`.as('lastCreated'),
        sql<string>`max(finalized_at)`.as('lastFinal'),
      ])
      .where('accountId', '=', seeded.accountId)
      .executeTakeFirstOrThrow();
    const succeeded = Number(stats.succeeded);
    if (Number(stats.n) !== agreements || succeeded !== agreements) throw new Error(`${stats.n} charges, ${succeeded} SUCCESS; ${agreements} expected`);
    const moved = await runtime.store.db
      .selectFrom('billingAgreements')
      .select(sql<number>`count(*)`.as('n'))
      .where('accountId', '=', seeded.accountId)
      .where('nextChargeAt', '=', iso(dueAt + 86_400_000))
      .where('lastChargeAt', 'is not', null)
      .executeTakeFirstOrThrow();
    if (Number(moved.n) !== agreements) throw new Error(`${moved.n} of ${agreements} agreements moved to their next period`);

    // Service time: the advance set the clock to dueAt, so a row's timestamp minus dueAt is time since the advance.
    const toLastCreated = Date.parse(stats.lastCreated) - dueAt;
    const toLastFinal = Date.parse(stats.lastFinal) - dueAt;
    report.note(
      `billing: ${agreements} charges from one advance`.padEnd(46) +
        `created ${rate(agreements, toLastCreated).padStart(6)}/s   SUCCESS ${rate(agreements, toLastFinal).padStart(6)}/s   last final after ${secs(toLastFinal)}${commits(runtime, before)}`,
    );
    report.note(
      `   all final seen ${secs(finalSeen)} after the advance (wall clock); settled/s = ${(agreements / (toLastFinal / 1000) / baselineRate).toFixed(2)}× the pipeline baseline; ${hostLoad()}`,
    );
  } finally {
    await runtime.close();
  }
}

export default defineSuite({
  name: 'billing',
  description: '10k billing agreements due at one sandbox clock advance: charges created/s, settled/s, time to the last final charge',
  async run(ctx) {
    const agreements = ctx.quick ? 1_000 : 10_000;
    for await (const kind of measuredStores(ctx.report, 'billing figures')) {
      await runStore(ctx, kind, agreements);
    }
  },
});
