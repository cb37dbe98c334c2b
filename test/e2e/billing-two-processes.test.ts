/**
 * Exactly-once subscription billing with two real service processes (A and B, both running job
 * workers) on one PostgreSQL database, driven over HTTP like an integrator would:
 *   - through A: a merchant, a monthly plan and 10 ACTIVE agreements, each on the subscription of a
 *     CIT session paid in the sandbox with an approved card — half created with POST /agreements,
 *     half by the session itself (`subscription.billingAgreement`); their first charges fall on
 *     Jan 1, 15, 20, 29 (18:00), 30 and 31, so the months' ends are exercised (Jan 31 → Feb 28 → Mar 31);
 *   - the sandbox clock (kept in the database) moves forward one month at a time, 12 times; both
 *     processes' workers race for each month's charges, and every step waits until they are final;
 *   - month 1 is started by A alone and month 6 by B alone, which is then killed with SIGKILL in
 *     the middle of its charging and restarted; the clock then moves past the leases it held;
 *   - at the end: per agreement exactly 12 charges, one per period start (distinct periods and
 *     deadlines, on the expected calendar dates), all SUCCESS after one attempt, each with exactly
 *     one MIT transaction carrying its billingAgreementChargeId; no other charge transaction; no
 *     dead job; the simulator's ledger (PAYMENTS_SANDBOX_ACQUIRER_LOG, with the pid of each call)
 *     shows no transaction authorized twice by one process, a repeat only across the SIGKILL.
 *
 * A process learns a clock move made through another process only when its own sandbox clock
 * route is called (or at start): so each step POSTs the same `now` to both processes, except where
 * one of them is meant to start a month alone.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { POSTGRES_SKIP_MESSAGE, postgresReachable } from '../support/stores.js';
import { API, bootstrapMerchant, client, type Client, type E2eDatabase, freshDatabase, newKeys, type ServiceProcess, sleep, startService } from './service.js';

const VISA = '4111111111111111';
const MONTHLY = { period: 'MONTH', frequency: 1 } as const;
const PLAN_AMOUNT = 4900;
const MONTHS = 12;
/** 0-based: the 1st month is started by A alone, the 6th by B alone (then SIGKILL). */
const SOLO_A_MONTH = 0;
const KILL_MONTH = 5;
/** Simulated acquirer delay: long enough that authorizations are in flight when B is killed. */
const LATENCY_MS = 100;
/** After the restart the clock moves past the longest lease of the jobs in play (payment.drive 120 s, billing 60 s). */
const PAST_LEASES_MS = 5 * 60_000;
const STEP_TIMEOUT_MS = 20_000;
const DAY_MS = 86_400_000;
const FINAL = new Set(['SUCCESS', 'FAILED']);
/** The jobs that make charges and their payments. */
const BILLING_JOB_KINDS = ['billing.charge-due', 'billing.charge-attempt', 'payment.drive'];

const reachable = await postgresReachable();
if (!reachable) console.log(`# ${POSTGRES_SKIP_MESSAGE}`);

interface Spec {
  reference: string;
  /** POST /subscriptions/billing/agreements, or the CIT session's `subscription.billingAgreement`. */
  via: 'api' | 'session';
  /** Day of January (with an optional time), or null for the default (one interval after today). */
  firstCharge: { day: number; time?: string } | null;
}

const SPECS: Spec[] = [
  { reference: 'api-jan-31', via: 'api', firstCharge: { day: 31 } },
  { reference: 'api-jan-30', via: 'api', firstCharge: { day: 30 } },
  { reference: 'api-jan-29-1800', via: 'api', firstCharge: { day: 29, time: '18:00:00Z' } },
  { reference: 'api-jan-01', via: 'api', firstCharge: { day: 1 } },
  { reference: 'api-default', via: 'api', firstCharge: null },
  { reference: 'cit-jan-31', via: 'session', firstCharge: { day: 31 } },
  { reference: 'cit-jan-30', via: 'session', firstCharge: { day: 30 } },
  { reference: 'cit-jan-15', via: 'session', firstCharge: { day: 15 } },
  { reference: 'cit-jan-01', via: 'session', firstCharge: { day: 1 } },
  { reference: 'cit-default', via: 'session', firstCharge: null },
];

const iso = (ms: number) => new Date(ms).toISOString();
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
/** 23:00 UTC on the last day of month `k` of `year` (k may pass 11). */
const monthEnd = (year: number, k: number) => Date.UTC(year, k, daysIn(year, k), 23);
/** The start of period k (0-based) of a schedule first charged at `first` in January: the day clamped to the month. */
function periodStart(first: number, k: number): number {
  const d = new Date(first);
  const year = d.getUTCFullYear() + Math.floor((d.getUTCMonth() + k) / 12);
  const month = (d.getUTCMonth() + k) % 12;
  return Date.UTC(year, month, Math.min(d.getUTCDate(), daysIn(year, month))) + (first % DAY_MS);
}

interface LedgerEntry {
  pid: number;
  transactionId: string;
  attempt: number;
  initiator: string;
  outcome: string;
  acquirerReference: string | null;
}

const readLedger = (file: string): LedgerEntry[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LedgerEntry)
    : [];

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

async function allTransactions(api: Client): Promise<any[]> {
  const out: any[] = [];
  let offset = '';
  for (;;) {
    const body = await api.must('GET', `${API}/transactions?perPage=500&offset=${encodeURIComponent(offset)}`);
    out.push(...body.items.map((i: any) => i.transaction));
    if (!body.hasMore) return out;
    offset = body.nextOffset;
  }
}

async function allCharges(api: Client): Promise<any[]> {
  const body = await api.must('GET', `${API}/subscriptions/billing/charges?perPage=500`);
  assert.ok(body.total <= 500, `one page holds every charge (${body.total})`);
  return body.items.map((i: any) => i.billingAgreementCharge);
}

const moveClock = (service: ServiceProcess, ms: number) => service.operator.must('POST', '/sandbox/v1/clock', { now: iso(ms) });
/** GET /sandbox/v1/clock re-reads the shared offset: the process's workers see the new time. */
const syncClock = (service: ServiceProcess) => service.operator.must('GET', '/sandbox/v1/clock');

describe('billing exactly once: two service processes with workers on one PostgreSQL database', { timeout: 150_000 }, () => {
  let db: E2eDatabase | null = null;
  const started: ServiceProcess[] = [];
  const keys = newKeys();

  before(async () => {
    if (reachable) db = await freshDatabase('postgres', 'billing2p');
  });
  after(async () => {
    await Promise.all(started.map((s) => s.stop()));
    await db?.drop();
  });

  test(
    '12 months, both workers racing, one SIGKILL: one charge per agreement and period, one transaction per charge',
    { skip: !reachable && POSTGRES_SKIP_MESSAGE },
    async () => {
      const t0 = Date.now();
      const database = db!;
      const ledger = path.join(database.dir, 'acquirer-ledger.jsonl');
      const start = async (label: string) => {
        const s = await startService({
          databaseUrl: database.url,
          dir: database.dir,
          ...keys,
          latencyMs: LATENCY_MS,
          label,
          env: { PAYMENTS_WORKERS: '1', PAYMENTS_SANDBOX_ACQUIRER_LOG: ledger },
        });
        started.push(s);
        return s;
      };
      const logs = () => started.map((s) => `--- ${path.basename(s.logPath)} (pid ${s.pid}):\n${s.logTail(15)}`).join('\n');

      // --- Two processes; A migrates and creates the sandbox merchant, B starts while A is set up.
      const a = await start('A');
      const startingB = start('B');
      startingB.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
      const bootstrap = await bootstrapMerchant(a, 'Billing Two Processes');
      // An API key: access tokens expire on the service clock (8 h), which moves a year here.
      const { key } = await bootstrap.api.must('POST', `${API}/management/api-keys`, { name: 'billing-e2e' });
      const api = client(a.baseUrl, key);
      let b = await startingB;
      const firstB = b;

      // --- The calendar: set up on Dec 20 (12:00 UTC), first charges in January of `year`.
      const serviceNow = Date.parse((await syncClock(a)).now);
      let year = new Date(serviceNow).getUTCFullYear() + 1;
      if (Date.UTC(year - 1, 11, 20, 12) <= serviceNow + 60_000) year += 1;
      const setupAt = Date.UTC(year - 1, 11, 20, 12);
      await moveClock(a, setupAt);
      await syncClock(b);
      const card = { number: VISA, expiryMonth: 12, expiryYear: year + 3, cvc: '123', holderName: 'Two Processes' };

      const { billingPlan: plan } = await api.must('POST', `${API}/subscriptions/billing/plans`, {
        name: 'Monthly plan',
        amount: PLAN_AMOUNT,
        currency: 'DKK',
        maxAttempts: 3,
        interval: MONTHLY,
      });

      const firstChargeOf = (spec: Spec): string | undefined => {
        if (!spec.firstCharge) return undefined;
        const date = `${year}-01-${String(spec.firstCharge.day).padStart(2, '0')}`;
        return spec.firstCharge.time ? `${date}T${spec.firstCharge.time}` : date;
      };
      const setUp = async (spec: Spec, i: number) => {
        const nextChargeAt = firstChargeOf(spec);
        const subscription: Record<string, unknown> = { type: 'SCHEDULED', interval: MONTHLY };
        if (spec.via === 'session')
          subscription.billingAgreement = { billingPlanId: plan.id, reference: spec.reference, ...(nextChargeAt ? { nextChargeAt } : {}) };
        const cit = await api.must('POST', `${API}/cit`, {
          pointOfSaleId: bootstrap.pointOfSaleId,
          amount: 0,
          currency: 'DKK',
          customerId: `customer-${i}`,
          reference: `cit-${spec.reference}`,
          subscription,
        });
        await a.operator.must('POST', `/sandbox/v1/sessions/${cit.session.id}/complete`, { card });
        let session: any = null;
        for (let n = 0; n < 200 && session?.state !== 'COMPLETED'; n++) {
          if (n > 0) await sleep(50);
          session = (await api.must('GET', `${API}/sessions/${cit.session.id}`)).session;
        }
        assert.equal(session?.state, 'COMPLETED', `CIT session of ${spec.reference} completed`);
        assert.ok(session.subscriptionId, `CIT session of ${spec.reference} made a subscription`);
        if (spec.via === 'api') {
          const body = { billingPlanId: plan.id, subscriptionId: session.subscriptionId, reference: spec.reference, ...(nextChargeAt ? { nextChargeAt } : {}) };
          return {
            spec,
            subscriptionId: session.subscriptionId as string,
            agreement: (await api.must('POST', `${API}/subscriptions/billing/agreements`, body)).billingAgreement,
          };
        }
        const { items } = await api.must('GET', `${API}/subscriptions/billing/agreements?perPage=500`);
        const agreement = items.map((x: any) => x.billingAgreement).find((x: any) => x.sessionId === cit.session.id);
        assert.ok(agreement, `the session of ${spec.reference} made an agreement`);
        return { spec, subscriptionId: session.subscriptionId as string, agreement };
      };
      const made = await Promise.all(SPECS.map(setUp));

      // Expected schedule: period k of each agreement, k = 0..12 (period 12 is the deadline of the last charge).
      const schedules = made.map(({ spec, subscriptionId, agreement }) => {
        assert.equal(agreement.state, 'ACTIVE', `${spec.reference} ACTIVE`);
        assert.equal(agreement.subscriptionId, subscriptionId, `${spec.reference} on its subscription`);
        const requested = firstChargeOf(spec);
        // Default: one month after the day of set-up, Dec 20 → Jan 20 00:00 UTC.
        const first = requested ? Date.parse(requested.length === 10 ? `${requested}T00:00:00Z` : requested) : Date.UTC(year, 0, 20);
        assert.equal(agreement.nextChargeAt, iso(first), `${spec.reference}: first charge`);
        return {
          id: agreement.id as string,
          reference: spec.reference,
          subscriptionId,
          periods: Array.from({ length: MONTHS + 1 }, (_, k) => iso(periodStart(first, k))),
        };
      });
      const month31 = schedules.find((s) => s.reference === 'api-jan-31')!;
      assert.equal(month31.periods[1], iso(Date.UTC(year, 1, daysIn(year, 1))), 'Jan 31 → end of February');
      assert.equal(month31.periods[2], iso(Date.UTC(year, 2, 31)), '… → Mar 31');

      // --- One step per month: wait until each agreement's charge of the month is final.
      const monthCharges = (charges: any[], k: number) =>
        schedules.map((s) => charges.find((c) => c.billingAgreementId === s.id && c.periodStart === s.periods[k]));
      const waitMonth = async (k: number, what: (found: any[]) => boolean, label: string, timeoutMs = STEP_TIMEOUT_MS) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const charges = await allCharges(api);
          const found = monthCharges(charges, k);
          if (what(found)) return { charges, found };
          if (Date.now() > deadline) {
            const states = found.map((c, i) => `${schedules[i]!.reference}:${c ? `${c.state}/${c.attempts}` : 'missing'}`).join(', ');
            assert.fail(`month ${k + 1}: ${label} not reached within ${timeoutMs / 1000} s (${states})\n${logs()}`);
          }
          await sleep(25);
        }
      };
      const allFinal = (found: any[]) => found.every((c) => c && FINAL.has(c.state));
      const someMade = (found: any[]) => found.some(Boolean);
      /** No billing or payment job runs (but those in `held`) and none is due at `at` (+1 min): no live worker has billing work in hand. */
      const waitQuiet = async (held: string[], at: number) => {
        const deadline = Date.now() + STEP_TIMEOUT_MS;
        for (;;) {
          const [row] = await query<{ running: string; due: string }>(
            database.url,
            `select count(*) filter (where state = 'running' and not (id = any($1))) as running,
                  count(*) filter (where state = 'queued' and run_at <= $2) as due
             from jobs where kind = any($3)`,
            [held, iso(at + 60_000), BILLING_JOB_KINDS],
          );
          if (Number(row!.running) === 0 && Number(row!.due) === 0) return;
          if (Date.now() > deadline) assert.fail(`billing jobs still running or due: ${JSON.stringify(row)}\n${logs()}`);
          await sleep(25);
        }
      };

      let soloA = 0;
      let atKill = { made: 0, final: 0, held: [] as string[] };
      for (let k = 0; k < MONTHS; k++) {
        const target = monthEnd(year, k);
        if (k === SOLO_A_MONTH) {
          // A alone knows the new time: the first charges of the month are its worker's; then B joins.
          await moveClock(a, target);
          soloA = (await waitMonth(k, someMade, 'a first charge by A')).found.filter(Boolean).length;
          await syncClock(b);
        } else if (k === KILL_MONTH) {
          // B alone knows the new time (A's clock is a month behind): B's worker starts the month, and
          // is killed as soon as the first charge is committed — authorizations are still in flight.
          await moveClock(b, target);
          await waitMonth(k, someMade, 'a first charge by B', 10_000);
          await b.kill();
          const found = monthCharges(await allCharges(api), k);
          const held = await query<{ id: string; kind: string }>(database.url, `select id, kind from jobs where state = 'running' order by kind`);
          atKill = { made: found.filter(Boolean).length, final: found.filter((c) => c && FINAL.has(c.state)).length, held: held.map((j) => j.kind) };
          // B restarts (reading the new time) and A learns it: both take over what B had not leased.
          b = await start('B-restarted');
          await syncClock(a);
          // Once the billing work left is only what the dead B leased, both move past its leases and
          // race for it. (The clock must not jump past the lease of a job a live worker is running:
          // that job would be handed out a second time while it runs.)
          await waitQuiet(
            held.map((j) => j.id),
            target,
          );
          await Promise.all([moveClock(a, target + PAST_LEASES_MS), moveClock(b, target + PAST_LEASES_MS)]);
        } else {
          // Both processes learn the new time at once (alternating who is asked first).
          await Promise.all((k % 2 ? [a, b] : [b, a]).map((s) => moveClock(s, target)));
        }
        const { charges } = await waitMonth(k, allFinal, 'every charge final');
        assert.equal(charges.length, SPECS.length * (k + 1), `month ${k + 1}: one charge per agreement and month so far, nothing early, nothing twice`);
      }
      assert.ok(soloA >= 1, "A's worker charged while only A knew the time");
      assert.ok(atKill.made >= 1, "B's worker charged while only B knew the time");

      // --- Charges: 12 per agreement, one per period start, on the calendar, SUCCESS after one attempt.
      const charges = await allCharges(api);
      assert.equal(charges.length, SPECS.length * MONTHS);
      for (const s of schedules) {
        const mine = charges.filter((c) => c.billingAgreementId === s.id).sort((x, y) => x.periodStart.localeCompare(y.periodStart));
        assert.deepEqual(
          mine.map((c) => c.periodStart),
          s.periods.slice(0, MONTHS),
          `${s.reference}: one charge per period start`,
        );
        assert.deepEqual(
          mine.map((c) => c.deadlineAt),
          s.periods.slice(1),
          `${s.reference}: each deadline is the next period start`,
        );
        for (const c of mine) {
          assert.equal(c.state, 'SUCCESS', `${s.reference} ${c.periodStart}`);
          assert.equal(c.attempts, 1, `${s.reference} ${c.periodStart}: one attempt`);
          assert.equal(c.amount, PLAN_AMOUNT);
          assert.equal(c.billingPlanId, plan.id);
          assert.deepEqual(c.transactionIds, [c.transactionId], `${s.reference} ${c.periodStart}: one transaction`);
        }
        const agreement = (await api.must('GET', `${API}/subscriptions/billing/agreements/${s.id}`)).billingAgreement;
        assert.equal(agreement.state, 'ACTIVE');
        assert.equal(agreement.nextChargeAt, s.periods[MONTHS], `${s.reference}: moved exactly ${MONTHS} intervals`);
        assert.ok(agreement.lastChargeAt, `${s.reference}: lastChargeAt set`);
      }

      // --- Transactions: exactly one per charge, carrying its billingAgreementChargeId, on the agreement's subscription.
      const chargeById = new Map(charges.map((c) => [c.id, c]));
      const subscriptionOf = new Map(schedules.map((s) => [s.id, s.subscriptionId]));
      const chargeTransactions = (await allTransactions(api)).filter((tx) => tx.billingAgreementChargeId);
      assert.equal(chargeTransactions.length, charges.length, 'one MIT transaction per charge, no loser left behind');
      assert.deepEqual(new Set(chargeTransactions.map((tx) => tx.billingAgreementChargeId)), new Set(chargeById.keys()));
      for (const tx of chargeTransactions) {
        const charge = chargeById.get(tx.billingAgreementChargeId)!;
        assert.equal(tx.id, charge.transactionId, `${tx.id} is its charge's transaction`);
        assert.equal(tx.state, 'SUCCESS');
        assert.equal(tx.amount, PLAN_AMOUNT);
        assert.equal(tx.subscriptionId, subscriptionOf.get(charge.billingAgreementId));
      }
      // The service's view of each: one AUTHORIZATION operation, authorized once.
      for (const tx of chargeTransactions) {
        const detail = await api.must('GET', `${API}/transactions/${tx.id}`);
        const auths = detail.operations.filter((op: any) => op.type === 'AUTHORIZATION');
        assert.deepEqual(
          auths.map((op: any) => op.state),
          ['SUCCESS'],
          `${tx.id}: one AUTHORIZATION operation`,
        );
        assert.equal(detail.aggregates.authorized, PLAN_AMOUNT, `${tx.id}: authorized once`);
      }
      // The database agrees (nothing the merchant's lists would hide), and no job gave up.
      const [dbCount] = await query<{ charges: string; txs: string }>(
        database.url,
        `select (select count(*) from billing_agreement_charges) as charges, (select count(*) from transactions where billing_agreement_charge_id is not null) as txs`,
      );
      assert.deepEqual({ charges: Number(dbCount!.charges), txs: Number(dbCount!.txs) }, { charges: charges.length, txs: charges.length });
      assert.deepEqual(await query(database.url, `select kind, last_error from jobs where state = 'dead'`), [], 'no dead job');

      // --- The acquirer's view: every charge transaction authorized; never twice by one process; a repeat only across the SIGKILL.
      const calls = new Map<string, LedgerEntry[]>();
      for (const e of readLedger(ledger).filter((x) => x.initiator === 'MIT')) calls.set(e.transactionId, [...(calls.get(e.transactionId) ?? []), e]);
      const labelOf = (pid: number) => path.basename(started.find((x) => x.pid === pid)?.logPath ?? `pid-${pid}`, '.log');
      const showCalls = (list: LedgerEntry[]) => list.map((e) => `${labelOf(e.pid)} attempt ${e.attempt} ${e.outcome} ${e.acquirerReference}`).join('; ');
      let repeats = 0;
      const byProcess = new Map<number, number>();
      for (const [id, list] of calls) {
        assert.ok(
          chargeTransactions.some((tx) => tx.id === id),
          `the acquirer authorized ${id}, which is no charge's transaction`,
        );
        const pids = list.map((e) => e.pid);
        assert.equal(new Set(pids).size, pids.length, `${id}: authorized more than once by one process (${showCalls(list)})`);
        assert.equal(new Set(list.map((e) => e.acquirerReference)).size, 1, `${id}: one acquirer reference`);
        if (list.length > 1) {
          repeats += list.length - 1;
          assert.equal(pids[0], firstB.pid, `${id}: a repeat only after the SIGKILL of B (${showCalls(list)})`);
        }
        const last = pids[pids.length - 1]!;
        byProcess.set(last, (byProcess.get(last) ?? 0) + 1);
      }
      for (const tx of chargeTransactions) assert.ok(calls.has(tx.id), `${tx.id} SUCCESS with an authorization on the acquirer's ledger`);
      const share = (s: ServiceProcess) => byProcess.get(s.pid) ?? 0;
      const [, , restartedB] = started;
      const distribution = `A ${share(a)}, B ${share(firstB)}, B restarted ${restartedB ? share(restartedB) : 0}`;
      if (share(firstB) + (restartedB ? share(restartedB) : 0) === 0 || share(a) === 0)
        console.log(`# note: one process authorized no charge (${distribution})`);

      console.log(
        `# billing, two processes (postgres): ${SPECS.length} agreements × ${MONTHS} months = ${charges.length} charges, each SUCCESS with one transaction; ` +
          `month ${SOLO_A_MONTH + 1} started by A alone (${soloA} charge(s) before B saw the time); ` +
          `month ${KILL_MONTH + 1}: B killed with ${atKill.made} charge(s) made, ${atKill.final} final, jobs running at the kill: ${[...new Set(atKill.held)].map((kind) => `${kind} ×${atKill.held.filter((x) => x === kind).length}`).join(', ') || 'none'}; ` +
          `authorizations by process (last call): ${distribution}; ${repeats} repeat(s) across the SIGKILL; ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    },
  );
});
