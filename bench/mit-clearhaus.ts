/**
 * `npm run bench mit`, section e) (issue 44, item 9): merchant-initiated payments through Clearhaus
 * against the same through the simulator, in one run on one service.
 *
 *   - The fake Clearhaus (test/support/clearhaus-fake.ts) runs in a process of its own
 *     (lib/clearhaus-fake-main.ts), verifying every signature with the public half of a signing key
 *     made for the run: 2048 bits, as a partner's real key (BENCH_CLEARHAUS_KEY_BITS=512 takes the
 *     docs' example key instead).
 *   - The service runs in a process of its own as in d) (lib/service-process.ts), job runner on,
 *     its Clearhaus connector built by the runtime from its settings as in production
 *     (CLEARHAUS_URL = the fake, CLEARHAUS_SIGNING_KEY_ID/FILE = that key, the default timeout
 *     and in-flight bound), so that its CPU is its own: not the load generator's, the receiver's
 *     or the fake's.
 *   - Two merchants in its database, each with SUBSCRIPTIONS subscriptions made by CIT sessions
 *     completed through the sandbox `complete` route: one with a `sandbox` acquirer agreement
 *     (the simulator), one with a `clearhaus` agreement put before its CITs, so that each CIT is
 *     authorized at the fake and stores its card with a series (series[type]=unscheduled); every
 *     MIT then names the latest approved authorization of its card (series[previous][id]). The
 *     fake refuses one that does not (clearhaus.md §2.1, 40000). The service sends a card's MITs
 *     one at a time (its series is claimed while one is on the wire) and a waiting one comes back
 *     250 ms later, so the load generator takes the subscriptions in turn: with SUBSCRIPTIONS of
 *     them a card comes round again only after SUBSCRIPTIONS / rate seconds.
 *
 * Then, the two merchants taken in turn (simulator, Clearhaus, simulator, ...):
 *   1. c)'s search for the highest MIT → callback rate sustained (2 000/s first, then below; a
 *      rate is sustained when the answers keep up, every callback arrives, answer → callback p99 ≤
 *      1 s — and here also every callback reports SUCCESS), each merchant its own search. Target:
 *      Clearhaus sustains ≥ 0.7× the simulator's rate.
 *   2. d)'s count at 100/s and 300/s (BENCH_COST_RATE, BENCH_COST_LOADED_RATE), in alternating
 *      rounds: the service's CPU (and its main thread's), statements and commits per MIT, request
 *      → delivered callback, for each; the difference is what the connector costs the service —
 *      the RS256 signature, the HTTP exchange on a fresh connection, the at-most-once commit
 *      (acquirer_requests) before sending and the card's series moved on in the answer's commit.
 *      The fake's CPU per MIT is printed beside it (it shares the host's CPUs with the service).
 *   3. RS256 signing alone, in this process: SigningKey.sign of the body of a MIT authorization as
 *      the connector sent it, µs per signature with the 2 048-bit key and the docs' 512-bit one.
 *   When Clearhaus stays below the target (or BENCH_CLEARHAUS_PROFILE=1): a V8 CPU profile of the
 *   service for each merchant at the loaded rate, the functions whose self time per MIT grew most.
 *
 *   BENCH_CLEARHAUS_SUBSCRIPTIONS  subscriptions per merchant (default 1 000)
 *   BENCH_CLEARHAUS_KEY_BITS       the signing key's size (default 2048; 512: the docs' example key)
 *   BENCH_CLEARHAUS_PROFILE=1      profile the service at the loaded rate whatever the ratio
 *   BENCH_CLEARHAUS_KEEP=1         keep the database afterwards (its transactions name their Clearhaus ids)
 *   BENCH_CLEARHAUS_SERVICE_CONFIG settings over the service's, JSON (diagnosis: '{"dbPoolSize":32}'; `clearhaus` merged)
 *   BENCH_CLEARHAUS_JOB_CONCURRENCY job slots per runner lane of the service (default: the runtime's, 64)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type ClearhausConfig, type Config, DEFAULT_CLEARHAUS_MAX_IN_FLIGHT, DEFAULT_CLEARHAUS_TIMEOUT_MS } from '../src/config.js';
import { SigningKey } from '../src/connectors/clearhaus/signing.js';
import type { StatementCounts } from '../src/storage/statement-counter.js';
import { CLEARHAUS_DOCS_KEY } from '../test/support/clearhaus-fake/wire.js';
import { type ClearhausFakeProcess, type FakeStats, startClearhausFakeProcess } from './lib/clearhaus-fake-process.js';
import { type CpuProfile, selfTimes } from './lib/cpuprofile.js';
import type { Measurement, RequestTemplate } from './lib/load.js';
import { API, type BenchAgreement, type BenchMerchant, createMitMerchant, mitBody } from './lib/merchant.js';
import { postgresCpuMicros } from './lib/process-cpu.js';
import { startReceiver, type Receiver } from './lib/receiver.js';
import { formatMs, loadNote } from './lib/report.js';
import { type ServiceProcess, type ServiceSample, startServiceProcess } from './lib/service-process.js';
import { BENCH_DIR, benchDatabase, openRuntime, resetDatabase, type StoreKind } from './lib/stores.js';
import type { BenchContext } from './lib/suite.js';
import {
  CALLBACK_RATE_GOAL,
  CONNECTIONS,
  COST_LOADED_RATE,
  COST_RATE,
  type Delivery,
  deliveries,
  deliveryNote,
  pipelineBacklog,
  sustained,
} from './mit.bench.js';

const MIT = `${API}/mit`;
const json = { 'content-type': 'application/json' };
/** Issue 44: Clearhaus's sustained MIT → callback rate against the simulator's, same run. */
const RATIO_TARGET = 0.7;
/** The fake merchant's category: the agreement names the same. */
const MCC = '5734';

function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

const SUBSCRIPTIONS = positiveEnv('BENCH_CLEARHAUS_SUBSCRIPTIONS', 1_000);
const KEY_BITS = positiveEnv('BENCH_CLEARHAUS_KEY_BITS', 2048);
/** CIT sessions made at once while seeding. */
const SEED_CONCURRENCY = 16;

interface Lane {
  name: 'simulator' | 'clearhaus';
  merchant: BenchMerchant;
  headers: Record<string, string>;
}

interface PartnerKey {
  id: string;
  bits: number;
  privateKeyPem: string;
  publicKeyPem: string;
  /** CLEARHAUS_SIGNING_KEY_FILE: the private key, PEM, mode 0600. */
  file: string;
}

/** The run's signing key: a new RSA key of `bits` (512: the docs' example key), its private half in a file. */
function partnerKey(bits: number): PartnerKey {
  const pair =
    bits === 512
      ? { id: CLEARHAUS_DOCS_KEY.id, privateKeyPem: CLEARHAUS_DOCS_KEY.privateKeyPem, publicKeyPem: CLEARHAUS_DOCS_KEY.publicKeyPem }
      : {
          id: crypto.randomUUID(),
          ...(({ privateKey, publicKey }) => ({ privateKeyPem: privateKey, publicKeyPem: publicKey }))(
            crypto.generateKeyPairSync('rsa', {
              modulusLength: bits,
              publicKeyEncoding: { type: 'spki', format: 'pem' },
              privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
            }),
          ),
        };
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  const file = path.join(BENCH_DIR, `clearhaus-signing-${bits}.pem`);
  fs.writeFileSync(file, pair.privateKeyPem, { mode: 0o600 });
  return { ...pair, bits, file };
}

/** Until no MIT job is left (queued or running) in the service process. */
async function settled(service: ServiceProcess, limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (pipelineBacklog(await service.jobCounts()) > 0) {
    if (performance.now() > deadline) throw new Error(`MIT jobs still pending after ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The fake's answers, most first: `POST /authorizations 201 20000 ×1234`, a refusal with its first message. */
function answersNote(stats: FakeStats): string {
  const entries = Object.entries(stats.answered).sort((a, b) => b[1] - a[1]);
  const message = (what: string) => (stats.messages[what] ? ` ("${stats.messages[what]!.slice(0, 160)}")` : '');
  return entries.length ? entries.map(([what, n]) => `${what} ×${n}${message(what)}`).join(', ') : 'nothing';
}

const approvedAuthorizations = (stats: FakeStats): number => stats.answered['POST /authorizations 201 20000'] ?? 0;
const fakeRequests = (stats: FakeStats): number => Object.values(stats.answered).reduce((n, c) => n + c, 0);

/** One step of c)'s search. */
interface Step {
  rate: number;
  delivery: Delivery;
  ok: boolean;
  /** Callbacks that did not report SUCCESS. */
  declined: number;
}

/** c)'s next rate after `steps`, or null when the search is done (the same rule as c). */
function nextRate(steps: Step[], maxSteps: number): number | null {
  if (steps.length >= maxSteps) return null;
  const lo = Math.max(0, ...steps.filter((s) => s.ok).map((s) => s.rate));
  const hi = Math.min(...steps.filter((s) => !s.ok).map((s) => s.rate));
  if (hi === Infinity || hi / Math.max(lo, 1) < 1.25) return null;
  const last = steps[steps.length - 1]!;
  const next = lo > 0 ? Math.sqrt(lo * hi) : Math.min(hi * 0.75, last.delivery.endToEndPerSecond * 0.8);
  return Math.max(20, Math.round(next / 10) * 10);
}

const best = (steps: Step[]): Step | undefined => steps.filter((s) => s.ok).sort((x, y) => y.rate - x.rate)[0];

const zeroCounts = (): StatementCounts => ({ reads: 0, writes: 0, control: 0, statements: 0, commits: 0, autocommits: 0, rollbacks: 0, roundTrips: 0 });

/** What a lane's counted windows add up to at one rate. */
interface Tally {
  mits: number;
  seconds: number;
  cpuMicros: number;
  systemMicros: number;
  mainMicros: number | null;
  serverMicros: number | null;
  fakeMicros: number;
  fakeRequests: number;
  counts: StatementCounts;
  p99: number[];
  notSuccess: number;
  /** Answers of the fake other than an approval, and what the first of them said. */
  refused: number;
  refusal: string;
}

const newTally = (): Tally => ({
  mits: 0,
  seconds: 0,
  cpuMicros: 0,
  systemMicros: 0,
  mainMicros: 0,
  serverMicros: 0,
  fakeMicros: 0,
  fakeRequests: 0,
  counts: zeroCounts(),
  p99: [],
  notSuccess: 0,
  refused: 0,
  refusal: '',
});

/** RS256 with `key` over `body`: wall and CPU µs per signature, over about `ms` of signing after a warm-up. */
function signingCost(privateKeyPem: string, body: Buffer, ms: number): { wallMicros: number; cpuMicros: number; signatures: number } {
  const key = SigningKey.fromPem(privateKeyPem, 'bench');
  for (let i = 0; i < 50; i++) key.sign(body);
  const cpu = process.cpuUsage();
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    for (let i = 0; i < 10; i++) key.sign(body);
    n += 10;
  }
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wallMicros: (wall * 1000) / n, cpuMicros: (used.user + used.system) / n, signatures: n };
}

/** A MIT authorization's body as the connector builds it (when the fake saw none to sample). */
const FALLBACK_MIT_BODY =
  'amount=1000&currency=DKK&reference=0b6f5f7e-2f0e-4c55-9d4e-2a7d3c1e9f10&series[previous][id]=6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' +
  '&card[pan]=4111111111111111&card[expire_month]=12&card[expire_year]=2030';

export async function clearhausAgainstSimulator(ctx: BenchContext, kind: StoreKind, mitBaseline: Measurement): Promise<void> {
  const { report } = ctx;
  const db = benchDatabase(kind, 'mit_clearhaus');
  await resetDatabase(db);
  const key = partnerKey(KEY_BITS);
  const apiKey = crypto.randomUUID();
  let fake: ClearhausFakeProcess | null = null;
  let service: ServiceProcess | null = null;
  let receiver: Receiver | null = null;
  try {
    fake = await startClearhausFakeProcess({ merchants: [{ apiKey, mcc: MCC }], signingKeyId: key.id, signingPublicKeyPem: key.publicKeyPem });
    const clearhaus: ClearhausConfig = {
      url: fake.url,
      signingKeyId: key.id,
      signingKeyFile: key.file,
      timeoutMs: DEFAULT_CLEARHAUS_TIMEOUT_MS,
      maxInFlight: DEFAULT_CLEARHAUS_MAX_IN_FLIGHT,
    };
    report.section(
      `${kind} e) Clearhaus against the simulator: MIT → callback, the service in a process of its own with its Clearhaus connector pointed at the fake Clearhaus in another ` +
        `(${key.bits}-bit signing key), ${SUBSCRIPTIONS} subscriptions per merchant, the merchants taken in turn (ratios: the baseline of a)`,
    );
    report.note(loadNote());

    // Both merchants in one database, their cards stored where their payments go.
    const seedStart = performance.now();
    const setup = await openRuntime(db, { sandbox: true, clearhaus });
    const agreements: Record<Lane['name'], BenchAgreement> = { simulator: { acquirer: 'sandbox' }, clearhaus: { acquirer: 'clearhaus', apiKey, mcc: MCC } };
    let lanes: Lane[];
    try {
      lanes = [];
      for (const name of ['simulator', 'clearhaus'] as const) {
        const merchant = await createMitMerchant(setup, SUBSCRIPTIONS, { agreement: agreements[name], concurrency: SEED_CONCURRENCY });
        lanes.push({ name, merchant, headers: { authorization: `Bearer ${merchant.apiKey}`, ...json } });
      }
    } finally {
      await setup.close();
    }
    const seeded = await fake.stats();
    report.note(
      `seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s: 2 × ${SUBSCRIPTIONS} CIT sessions completed through the sandbox route; ` +
        `the fake Clearhaus answered ${answersNote(seeded)}`,
    );
    if (approvedAuthorizations(seeded) < SUBSCRIPTIONS)
      throw new Error(
        `the Clearhaus merchant's CITs did not reach the fake: ${approvedAuthorizations(seeded)} approved authorizations for ${SUBSCRIPTIONS} subscriptions`,
      );

    // Diagnosis only: other settings of the service (both merchants alike), other job slots.
    const extra = JSON.parse(process.env.BENCH_CLEARHAUS_SERVICE_CONFIG ?? '{}') as Partial<Config>;
    const jobConcurrency = process.env.BENCH_CLEARHAUS_JOB_CONCURRENCY ? positiveEnv('BENCH_CLEARHAUS_JOB_CONCURRENCY', 64) : undefined;
    if (Object.keys(extra).length || jobConcurrency)
      report.note(`the service with ${JSON.stringify({ ...extra, ...(jobConcurrency ? { jobConcurrency } : {}) })}`);
    service = await startServiceProcess(db, {
      workers: true,
      config: { ...extra, clearhaus: { ...clearhaus, ...extra.clearhaus } },
      ...(jobConcurrency ? { jobConcurrency } : {}),
    });
    receiver = await startReceiver();
    const rx = receiver;
    const svc = service;
    const fk = fake;
    const template = (lane: Lane, prefix: string, rate: number): RequestTemplate => ({
      method: 'POST',
      body: mitBody(rx.url(prefix)),
      items: lane.merchant.subscriptionIds,
      wrapItems: true,
      expect: '"state":"PENDING"',
      recordAnswers: true,
      rate,
    });
    const run = (lane: Lane, prefix: string, rate: number, durationSeconds: number) =>
      ctx.measure(svc.url + MIT, lane.headers, { connections: CONNECTIONS, warmupSeconds: 0, durationSeconds }, template(lane, prefix, rate));
    /** The receiver's count of callbacks not reporting SUCCESS, since it started. */
    let notSuccessSeen = 0;
    const declinedSince = async () => {
      const total = (await rx.take()).notSuccess;
      const declined = total - notSuccessSeen;
      notSuccessSeen = total;
      return declined;
    };

    // Each merchant: a first MIT through its acquirer (the Clearhaus one must come back SUCCESS with
    // a signed series authorization at the fake), then c)'s warm-up, then an empty queue.
    for (const lane of lanes) {
      await fk.stats();
      const probe = await run(lane, `${lane.name}-probe`, 20, 1);
      const d = await deliveries(rx, `${lane.name}-probe`, probe);
      await settled(svc, 60_000);
      const declined = await declinedSince();
      const seen = await fk.stats();
      if (declined || d.delivered !== d.accepted)
        throw new Error(`${lane.name}: of ${d.accepted} probe MITs ${d.delivered} callbacks came, ${declined} not SUCCESS (${answersNote(seen)})`);
      if (lane.name === 'clearhaus') {
        if (approvedAuthorizations(seen) !== d.accepted || seen.badSignatures || !seen.sampleMitBody)
          throw new Error(`clearhaus probe: ${d.accepted} MITs, the fake answered ${answersNote(seen)}, ${seen.badSignatures} bad signatures`);
        report.note(`probe: ${d.accepted} Clearhaus MITs, each one signed series authorization at the fake (${answersNote(seen)}), every callback SUCCESS`);
      } else if (fakeRequests(seen)) throw new Error(`simulator probe: the fake Clearhaus saw ${answersNote(seen)}`);
    }
    for (const lane of lanes) {
      const warm = await run(lane, `${lane.name}-warm`, CALLBACK_RATE_GOAL / 4, ctx.load.warmupSeconds);
      await deliveries(rx, `${lane.name}-warm`, warm);
      await settled(svc, 300_000);
      const declined = await declinedSince();
      if (declined)
        report.note(
          `warm-up, ${lane.name}: ${declined} callbacks not SUCCESS${lane.name === 'clearhaus' ? ` (the fake answered ${answersNote(await fk.stats())})` : ''}`,
        );
    }

    await search(ctx, kind, lanes, mitBaseline, svc, fk, run, rx, declinedSince);
    await costs(ctx, kind, lanes, svc, fk, run, rx, declinedSince);

    // Signing alone, in this process (idle otherwise): the body of a MIT authorization as sent.
    const body = Buffer.from((await fk.stats()).sampleMitBody ?? FALLBACK_MIT_BODY, 'utf8');
    const sample = ctx.quick ? 500 : 2000;
    const keys = key.bits === 512 ? [key] : [key, { ...CLEARHAUS_DOCS_KEY, bits: 512 }];
    const costsBySize = keys.map((k) => ({ bits: k.bits, ...signingCost(k.privateKeyPem, body, sample) }));
    report.note(
      `RS256 signing alone (SigningKey.sign of a ${body.length}-byte MIT authorization body, in the bench's process, ${sample} ms each): ` +
        costsBySize
          .map((c) => `${c.bits}-bit ${c.cpuMicros.toFixed(1)} µs CPU per signature (${c.wallMicros.toFixed(1)} µs wall, ${c.signatures} signatures)`)
          .join('; ') +
        " — on the service's event loop: node:crypto sign is synchronous",
    );
  } finally {
    await service?.close();
    await receiver?.close();
    await fake?.close();
    fs.rmSync(key.file, { force: true });
    if (process.env.BENCH_CLEARHAUS_KEEP === '1')
      report.note(`BENCH_CLEARHAUS_KEEP: the database is kept (${db.config.kind === 'sqlite' ? db.config.path : `schema ${db.schema}`})`);
    else await resetDatabase(db);
  }
}

type Run = (lane: Lane, prefix: string, rate: number, durationSeconds: number) => Promise<Measurement>;

/** Share of one CPU, from two samples of the service. */
const cpuShare = (micros: number, ms: number) => `${((micros / 1000 / ms) * 100).toFixed(0)} %`;

/** 1. c)'s search, for each merchant, the merchants in turn at each step. */
async function search(
  ctx: BenchContext,
  kind: StoreKind,
  lanes: Lane[],
  mitBaseline: Measurement,
  service: ServiceProcess,
  fake: ClearhausFakeProcess,
  run: Run,
  receiver: Receiver,
  declinedSince: () => Promise<number>,
): Promise<void> {
  const { report } = ctx;
  const seconds = ctx.load.durationSeconds;
  const maxSteps = ctx.quick ? 3 : 5;
  const searches = lanes.map((lane) => ({ lane, steps: [] as Step[], rate: CALLBACK_RATE_GOAL as number | null }));
  report.note(
    `1. the highest MIT → callback rate sustained, c)'s search for each merchant (${maxSteps} steps at most, ${seconds} s each), the merchants in turn`,
  );
  report.header();
  for (let step = 0; step < maxSteps; step++) {
    for (const s of searches) {
      if (s.rate === null) continue;
      const { lane } = s;
      const rate = s.rate;
      const prefix = `${lane.name}-s${step}-${rate}`;
      const fakeBefore = await fake.stats();
      const before = await service.sample();
      const m = await run(lane, prefix, rate, seconds);
      const after = await service.sample();
      const delivery = await deliveries(receiver, prefix, m);
      await settled(service, 600_000);
      const declined = await declinedSince();
      const fakeAfter = await fake.stats();
      const ok = !m.overloaded && !m.non2xx['503'] && sustained(delivery, rate) && declined === 0;
      report.figure(`${kind} ${lane.name} POST /mit at ${rate}/s${m.overloaded ? ' (OVERLOADED: stopped)' : ''}`, m, mitBaseline, { refusalsExpected: true });
      deliveryNote(ctx, `${kind} ${lane.name} ${rate} MITs/s ${ok ? 'sustained' : 'NOT sustained'}`, delivery);
      const ms = after.at - before.at;
      const main =
        after.mainThreadMicros !== null && before.mainThreadMicros !== null
          ? `, its main thread ${cpuShare(after.mainThreadMicros - before.mainThreadMicros, ms)}`
          : '';
      report.note(
        `   while loaded: the service ${cpuShare(after.cpuMicros - before.cpuMicros, ms)} of one CPU${main}` +
          (lane.name === 'clearhaus'
            ? `; the fake Clearhaus ${cpuShare(fakeAfter.cpuMicros - fakeBefore.cpuMicros, ms)} (until settled), answered ${answersNote(fakeAfter)}`
            : '') +
          (declined ? `; ${declined} callbacks not SUCCESS` : ''),
      );
      s.steps.push({ rate, delivery, ok, declined });
      s.rate = nextRate(s.steps, maxSteps);
    }
  }
  const [sim, ch] = searches.map((s) => best(s.steps));
  // The same overload for both, first step: what each delivered while far past its limit.
  const [simOver, chOver] = searches.map((s) => s.steps[0]!.delivery.endToEndPerSecond) as [number, number];
  report.note(
    `${kind} at ${CALLBACK_RATE_GOAL}/s offered (both far past their limit): simulator ${simOver.toFixed(0)}, Clearhaus ${chOver.toFixed(0)} callbacks/s ` +
      `first answer → last callback = ${(chOver / simOver).toFixed(2)}× — a second estimate of the ratio, without the search's steps`,
  );
  /** The highest rate sustained, the lowest not: the limit is between them. */
  const describe = (name: string, s: Step | undefined, steps: Step[]) => {
    const above = Math.min(...steps.filter((x) => !x.ok && (!s || x.rate > s.rate)).map((x) => x.rate));
    return s
      ? `${name} ${s.rate}/s${Number.isFinite(above) ? ` (not ${above}/s)` : ''}, answer → callback p50 ${formatMs(s.delivery.p50)} ms, p99 ${formatMs(s.delivery.p99)} ms`
      : `${name} none of ${steps.map((x) => x.rate).join(', ')}/s`;
  };
  const ratio = sim && ch ? ch.rate / sim.rate : Number.NaN;
  report.note(
    `${kind} sustained: ${describe('simulator', sim, searches[0]!.steps)}, ${describe('Clearhaus', ch, searches[1]!.steps)}; ` +
      `Clearhaus / simulator ${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'}× (each search stops within 1.25× of the limit)`,
  );
  report.target(
    `${kind} Clearhaus MIT → callback sustained ≥ ${RATIO_TARGET}× the simulator's (same run, same service)`,
    Number.isFinite(ratio) && ratio >= RATIO_TARGET,
    sim && ch
      ? `${ch.rate}/s against ${sim.rate}/s = ${ratio.toFixed(2)}×`
      : `${describe('simulator', sim, searches[0]!.steps)}; ${describe('Clearhaus', ch, searches[1]!.steps)}`,
  );
  if (!(ratio >= RATIO_TARGET) || process.env.BENCH_CLEARHAUS_PROFILE === '1') {
    const rate = Math.max(20, Math.min(COST_LOADED_RATE || COST_RATE, ch?.rate ?? COST_RATE));
    await profile(ctx, kind, lanes, service, run, receiver, rate);
  }
}

/** 2. CPU, statements and commits per MIT at d)'s rates, the merchants in alternating rounds. */
async function costs(
  ctx: BenchContext,
  kind: StoreKind,
  lanes: Lane[],
  service: ServiceProcess,
  fake: ClearhausFakeProcess,
  run: Run,
  receiver: Receiver,
  declinedSince: () => Promise<number>,
): Promise<void> {
  const { report } = ctx;
  const seconds = ctx.load.durationSeconds;
  const rounds = ctx.quick ? 1 : 2;
  const rates = COST_LOADED_RATE > 0 ? [COST_RATE, COST_LOADED_RATE] : [COST_RATE];
  report.note(
    `2. cost of one MIT, request → delivered callback: ${rates.join(' then ')} MITs/s, ${seconds} s per merchant at each in ${rounds} alternating round(s), ` +
      'the service process alone (user + system; the fake, the load generator and the receiver are other processes)',
  );
  for (const lane of lanes) {
    const warm = await run(lane, `${lane.name}-cost-warm`, COST_RATE, ctx.load.warmupSeconds);
    await deliveries(receiver, `${lane.name}-cost-warm`, warm);
  }
  await settled(service, 60_000);
  await declinedSince();
  for (const rate of rates) {
    const tallies = lanes.map(newTally);
    for (let round = 0; round < rounds; round++) {
      for (const [i, lane] of lanes.entries()) {
        const t = tallies[i]!;
        const prefix = `${lane.name}-cost-${rate}-${round}`;
        const fakeBefore = await fake.stats();
        const start: ServiceSample = await service.startCounting();
        const serverStart = kind === 'postgres' ? postgresCpuMicros() : null;
        const m = await run(lane, prefix, rate, seconds / rounds);
        const delivery = await deliveries(receiver, prefix, m);
        // The delivery's own commit (the callback job done) follows the receiver's answer.
        await new Promise((r) => setTimeout(r, 500));
        const end = await service.stopCounting();
        const serverEnd = serverStart === null ? null : postgresCpuMicros();
        const fakeAfter = await fake.stats();
        await settled(service, 60_000);
        const left = pipelineBacklog(await service.jobCounts());
        if (left) report.broken.push(`${kind} e) ${lane.name} at ${rate}/s: ${left} MIT jobs not done when the count ended`);
        if (delivery.delivered < delivery.accepted)
          report.broken.push(`${kind} e) ${lane.name} at ${rate}/s: ${delivery.accepted - delivery.delivered} callbacks never arrived`);
        t.mits += delivery.accepted;
        t.seconds += (end.at - start.at) / 1000;
        t.cpuMicros += end.cpuMicros - start.cpuMicros;
        t.systemMicros += end.systemMicros - start.systemMicros;
        t.mainMicros =
          t.mainMicros !== null && end.mainThreadMicros !== null && start.mainThreadMicros !== null
            ? t.mainMicros + end.mainThreadMicros - start.mainThreadMicros
            : null;
        t.serverMicros = t.serverMicros !== null && serverStart !== null && serverEnd !== null ? t.serverMicros + serverEnd - serverStart : null;
        t.fakeMicros += fakeAfter.cpuMicros - fakeBefore.cpuMicros;
        t.fakeRequests += fakeRequests(fakeAfter);
        t.refused += fakeRequests(fakeAfter) - approvedAuthorizations(fakeAfter);
        t.refusal ||= Object.values(fakeAfter.messages)[0] ?? '';
        for (const k of Object.keys(t.counts) as Array<keyof StatementCounts>) t.counts[k] += end.counts[k];
        t.p99.push(delivery.p99);
        t.notSuccess += await declinedSince();
      }
    }
    const per = (t: Tally, n: number) => n / Math.max(1, t.mits);
    const line = (lane: Lane, t: Tally) => {
      const c = t.counts;
      return (
        `${lane.name}: ${(per(t, t.cpuMicros) / 1000).toFixed(3)} ms service CPU per MIT` +
        ` (system ${(per(t, t.systemMicros) / 1000).toFixed(3)}${t.mainMicros !== null ? `, main thread ${(per(t, t.mainMicros) / 1000).toFixed(3)}` : ''}` +
        `; ${((t.cpuMicros / 1000 / (t.seconds * 1000)) * 100).toFixed(0)} % of one CPU), ` +
        `${per(t, c.statements).toFixed(2)} statements (${per(t, c.reads).toFixed(2)} reads, ${per(t, c.writes).toFixed(2)} writes), ${per(t, c.commits).toFixed(2)} commits` +
        (kind === 'postgres' ? `, ${per(t, c.roundTrips).toFixed(2)} round trips` : '') +
        (t.serverMicros !== null
          ? `; every postgres process here ${t.serverMicros >= 0 ? `${(per(t, t.serverMicros) / 1000).toFixed(3)} ms` : 'n/a (one exited meanwhile)'}`
          : '') +
        (lane.name === 'clearhaus'
          ? `; the fake Clearhaus ${(per(t, t.fakeMicros) / 1000).toFixed(3)} ms CPU and ${per(t, t.fakeRequests).toFixed(2)} requests per MIT`
          : '') +
        ` — ${t.mits} MITs, answer → callback p99 ${t.p99.map((p) => formatMs(p)).join(' / ')} ms` +
        (t.refused ? `; ${t.refused} refused by the fake ("${t.refusal.slice(0, 140)}")` : '')
      );
    };
    report.note(`${kind} at ${rate}/s per MIT, request → delivered callback:`);
    for (const [i, lane] of lanes.entries()) report.note(`   ${line(lane, tallies[i]!)}`);
    const [sim, ch] = tallies as [Tally, Tally];
    const diff = (f: (t: Tally) => number) => per(ch, f(ch)) - per(sim, f(sim));
    report.note(
      `   the connector's cost (Clearhaus − simulator): ${(diff((t) => t.cpuMicros) / 1000).toFixed(3)} ms service CPU per MIT` +
        (sim.mainMicros !== null && ch.mainMicros !== null ? ` (main thread ${(diff((t) => t.mainMicros!) / 1000).toFixed(3)})` : '') +
        ` (Clearhaus ${(per(ch, ch.cpuMicros) / per(sim, sim.cpuMicros)).toFixed(2)}× the simulator's); ` +
        `${diff((t) => t.counts.statements).toFixed(2)} statements, ${diff((t) => t.counts.commits).toFixed(2)} commits` +
        (kind === 'postgres' ? `, ${diff((t) => t.counts.roundTrips).toFixed(2)} round trips` : '') +
        (sim.serverMicros !== null && ch.serverMicros !== null && sim.serverMicros >= 0 && ch.serverMicros >= 0
          ? `; postgres ${(diff((t) => t.serverMicros!) / 1000).toFixed(3)} ms`
          : ''),
    );
    const notSuccess = tallies.reduce((n, t) => n + t.notSuccess, 0);
    if (notSuccess) report.broken.push(`${kind} e) at ${rate}/s: ${notSuccess} callbacks did not report SUCCESS`);
  }
}

/**
 * Self time by function, as cpuprofile.ts's selfTimes, but a native function (no script: a
 * driver's or node:crypto's C++) named after its caller as well: better-sqlite3's statement `run`
 * and the `run` of node:crypto's sign job would otherwise be one frame.
 */
function selfTimesByCaller(profile: CpuProfile & { nodes: Array<{ id: number; children?: number[] }> }): { ms: Map<string, number>; busyMs: number } {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const name = (id: number | undefined): string => {
    const node = id === undefined ? undefined : byId.get(id);
    if (!node) return '';
    const { functionName, url } = node.callFrame;
    const script = url ? path.basename(url.startsWith('file://') ? new URL(url).pathname : url) : '';
    return `${functionName || '(anonymous)'}${script ? ` (${script})` : ''}`;
  };
  const { busySamples, idleSamples, seconds } = selfTimes(profile);
  const msPerSample = (seconds * 1000) / Math.max(1, busySamples + idleSamples);
  const ms = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits || node.callFrame.functionName === '(idle)') continue;
    const native = !node.callFrame.url && !node.callFrame.functionName.startsWith('(');
    const frame = native ? `${name(node.id)} ← ${name(parent.get(node.id))}` : name(node.id);
    ms.set(frame, (ms.get(frame) ?? 0) + hits * msPerSample);
  }
  return { ms, busyMs: busySamples * msPerSample };
}

/**
 * The service's V8 profile (its main thread, sampled every 1 ms) for each merchant at `rate`: the
 * functions whose self time per MIT grew most with Clearhaus. Sampled time, not CPU time: on a
 * host short of CPU a sample also lands while the thread waits for one, so read the shares.
 */
async function profile(ctx: BenchContext, kind: StoreKind, lanes: Lane[], service: ServiceProcess, run: Run, receiver: Receiver, rate: number): Promise<void> {
  const { report } = ctx;
  const seconds = ctx.load.durationSeconds;
  const perMit = new Map<string, [number, number]>();
  const busy: number[] = [];
  for (const [i, lane] of lanes.entries()) {
    const prefix = `${lane.name}-profile`;
    const file = path.join(BENCH_DIR, `mit-clearhaus-${kind}-${lane.name}-${rate}.cpuprofile`);
    await service.profileStart();
    const m = await run(lane, prefix, rate, seconds);
    const d = await deliveries(receiver, prefix, m);
    await service.profileStop(file);
    await settled(service, 60_000);
    const mits = Math.max(1, d.accepted);
    const { ms, busyMs } = selfTimesByCaller(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
    busy.push(busyMs / mits);
    for (const [frame, t] of ms) {
      const row = perMit.get(frame) ?? [0, 0];
      row[i] = t / mits;
      perMit.set(frame, row);
    }
  }
  const rows = [...perMit].map(([frame, [sim, ch]]) => ({ frame, sim, ch, more: ch - sim }));
  report.note(
    `${kind} profile of the service's main thread at ${rate}/s (.bench/mit-clearhaus-${kind}-*-${rate}.cpuprofile): sampled busy ${busy.map((b) => b.toFixed(3)).join(' / ')} ms per MIT ` +
      '(simulator / Clearhaus); the self times per MIT that grew most with Clearhaus (native functions named with their caller):',
  );
  for (const g of rows.sort((a, b) => b.more - a.more).slice(0, 15))
    report.note(`   +${(g.more * 1000).toFixed(0).padStart(5)} µs  (${(g.sim * 1000).toFixed(0)} → ${(g.ch * 1000).toFixed(0)})  ${g.frame}`);
}
