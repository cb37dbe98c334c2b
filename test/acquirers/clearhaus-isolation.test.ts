/**
 * A slow acquirer stays its merchant's problem (INTERFACE §12.4): "a slow or silent acquirer holds
 * at most CLEARHAUS_MAX_IN_FLIGHT requests and never delays callbacks, webhooks, the simulator's
 * merchants or API answers of other merchants".
 *
 * One runtime, two merchants: a sandbox merchant (the simulator) and a Clearhaus merchant whose
 * authorizations the fake holds. The sandbox merchant's API answers (GET /transactions, a MOTO) and
 * its MIT → callback latency are measured the same way in alternating phases: with Clearhaus idle,
 * and while the Clearhaus merchant has more MOTO and MIT payments hanging there than
 * CLEARHAUS_MAX_IN_FLIGHT allows on the wire. The usual p99 (the median of the rounds' p99s) under
 * load stays within twice the idle one.
 *
 * Alternating rounds, not one idle phase then one loaded phase: a host's hiccup of a second or two
 * (another process, a checkpoint, a collection) then lands in one phase of one round and the median
 * leaves it out, where before it decided the one comparison (about 1 run in 4 failed). A sandbox
 * merchant queued behind Clearhaus would wait in every loaded phase, for as long as Clearhaus holds.
 *
 * The Clearhaus connector talks to the fake through a counting TCP relay: every request goes on a
 * connection of its own (client.ts), so the relay sees each request open from its first byte until
 * the fake's first answer byte or the connection's end, and keeps the most that were open at once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ClearhausAcquirer } from '../../src/connectors/clearhaus/connector.js';
import { SigningKey } from '../../src/connectors/clearhaus/signing.js';
import { type ClearhausFake, CLEARHAUS_DOCS_KEY, startClearhausFake } from '../support/clearhaus-fake.js';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { postForm, storedCard } from '../online/cit-flows.js';
import { putAgreement } from './support.js';
import { expiryYear, freshPan } from './clearhaus-support.js';

const MAX_IN_FLIGHT = 4;
/** Long enough that the requests the fake holds are released by the test, not timed out. */
const TIMEOUT_MS = 15_000;
/** The fake holds each authorization this long unless the test releases it first (it does). */
const HOLD_MS = 10_000;
/** Clearhaus merchant's load: 3 × MAX_IN_FLIGHT authorizations at once, half MOTO, half MIT. */
const CLEARHAUS_MOTOS = 6;
const CLEARHAUS_MITS = 6;
/** A Clearhaus MIT batch of more entries than the payments job lane has slots (64, runtime.ts). */
const LANE_BATCH = 80;
/** The cards it is spread over: more than the connector takes at once. */
const LANE_CARDS = 8;
/** Rounds of an idle phase then a loaded one; each phase samples the sandbox merchant PHASE_MS. */
const ROUNDS = 3;
const PHASE_MS = 2_000;
const WARMUP_MS = 2_000;
/** Pause of the GET /transactions client between its requests. */
const LIST_PAUSE_MS = 10;
/** Sandbox clients doing MOTOs one after another during a phase. */
const MOTO_CLIENTS = 2;
/** One sandbox MIT started this often during a phase (its callback latency is a sample). */
const MIT_EVERY_MS = 60;

const AUTHORIZATIONS = /^\/authorizations$/;

function ok(res: TestResponse, what: string): any {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Nearest-rank percentile. */
function percentile(samples: number[], p: number): number {
  assert.ok(samples.length > 0, 'no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * A TCP relay to the fake that counts requests open at the fake at once: a connection's request is
 * open from its first byte until the fake's first answer byte or either side's end.
 */
async function startCountingRelay(target: number) {
  let open = 0;
  let maxOpen = 0;
  let opened = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => sockets.delete(socket));
    }
    let state: 'idle' | 'open' | 'done' = 'idle';
    const finish = () => {
      if (state === 'open') open--;
      state = 'done';
    };
    client.on('data', () => {
      if (state !== 'idle') return;
      state = 'open';
      opened++;
      open++;
      maxOpen = Math.max(maxOpen, open);
    });
    upstream.once('data', finish);
    const end = () => {
      finish();
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    get opened() {
      return opened;
    },
    resetMax() {
      maxOpen = open;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A callback receiver that notes when the first callback to each path arrived (performance.now()). */
async function startTimedReceiver() {
  const arrivals = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const at = performance.now();
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (!arrivals.has(path)) {
        arrivals.set(path, at);
        waiting.get(path)?.(at);
        waiting.delete(path);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  // Both address families: the callback URLs name `localhost`, the merchants' approved domain.
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  let counter = 0;
  return {
    newUrl: (label: string) => {
      const path = `/${label}/${++counter}`;
      return { path, url: `http://localhost:${port}${path}` };
    },
    /** When the first callback to `path` arrived (waits for it, at most `timeoutMs`). */
    arrival(path: string, timeoutMs: number): Promise<number> {
      const at = arrivals.get(path);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(path);
          reject(new Error(`no callback to ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(path, (arrived) => {
          clearTimeout(timer);
          resolve(arrived);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Phase {
  list: number[];
  moto: number[];
  callback: number[];
}
type Metric = keyof Phase;
const METRICS: Array<[Metric, string]> = [
  ['list', 'GET /transactions'],
  ['moto', 'sandbox MOTO'],
  ['callback', 'sandbox MIT → callback'],
];

/** The usual p99 of a metric over rounds of one kind of phase: the median of the rounds' p99s. */
const usualP99 = (phases: Phase[], metric: Metric) => median(phases.map((p) => percentile(p[metric], 99)));

/**
 * What a p99 under Clearhaus load may reach: twice the idle p99, with a floor. On a noisy 2-core host
 * (other test processes running beside this one) the p99 of a few dozen to a few hundred samples moves
 * by up to a hundred ms between two identical phases (seen: 80 → 169 ms with another suite beside
 * it), so the bound is max(2 × idle p99, idle p99 + 250 ms). A sandbox merchant queued behind
 * Clearhaus would wait seconds (HOLD_MS), far beyond it.
 */
const bound = (idleP99: number) => Math.max(2 * idleP99, idleP99 + 250);

/** Each metric's p99 per round, and the sample counts. */
const summary = (phases: Phase[]) =>
  METRICS.map(
    ([metric, what]) =>
      `${what} p99 ${phases.map((p) => percentile(p[metric], 99).toFixed(0)).join('/')} ms (n=${phases.map((p) => p[metric].length).join('/')})`,
  ).join(', ');

for (const kind of await availableStores()) {
  describe(`clearhaus: a slow acquirer delays nobody else (${kind})`, { timeout: 150_000 }, () => {
    let t: TestRuntime;
    let fake: ClearhausFake;
    let relay: Awaited<ReturnType<typeof startCountingRelay>>;
    let rx: Awaited<ReturnType<typeof startTimedReceiver>>;
    let sandbox: TestMerchant;
    let sandboxSubscription: string;
    let clearhaus: TestMerchant;
    let clearhausSubscription: string;
    const apiKey = randomUUID();
    /** The sandbox merchant's usual MIT → callback p99 with Clearhaus idle (the first test's baseline). */
    let idleCallbackP99: number | null = null;

    /** A card stored through the Clearhaus merchant's window; its subscription (MITs go one at a time per card). */
    async function clearhausCard(customerId: string): Promise<string> {
      const init = ok(
        await clearhaus.api.post(`${API}/cit`, {
          pointOfSaleId: clearhaus.onlinePointOfSaleId,
          amount: 100,
          currency: 'DKK',
          customerId,
          subscription: { type: 'UNSCHEDULED' },
        }),
        'POST /cit (clearhaus)',
      );
      const window = await postForm(t, init.paymentWindowUrl, {
        number: freshPan(),
        expiryMonth: '12',
        expiryYear: String(expiryYear()),
        cvc: '123',
        holderName: 'Test Holder',
      });
      assert.ok([200, 303].includes(window.status), `window: ${window.status} ${window.text.slice(0, 300)}`);
      const session = ok(await clearhaus.api.get(`${API}/sessions/${init.session.id}`), 'GET session').session;
      assert.equal(session.state, 'COMPLETED', JSON.stringify(session));
      return session.subscriptionId;
    }

    before(async () => {
      fake = await startClearhausFake({ merchants: [{ apiKey, mcc: '5734' }] });
      relay = await startCountingRelay(fake.port);
      const connector = new ClearhausAcquirer({
        baseUrl: relay.url,
        signingKeyId: CLEARHAUS_DOCS_KEY.id,
        signingKey: SigningKey.fromPem(CLEARHAUS_DOCS_KEY.privateKeyPem),
        timeoutMs: TIMEOUT_MS,
        maxInFlight: MAX_IN_FLIGHT,
      });
      t = await startTestRuntime(kind, {}, { clearhaus: connector });
      rx = await startTimedReceiver();

      sandbox = await t.createMerchant({ physical: false });
      sandboxSubscription = (await storedCard(t, sandbox, 'cust-sandbox')).subscriptionId;

      clearhaus = await t.createMerchant({ physical: false });
      ok(await putAgreement(t.operator, clearhaus.accountId, { acquirer: 'clearhaus', apiKey, mcc: '5734' }), 'PUT clearhaus agreement');
      // A card stored through the Clearhaus window: its series lets the merchant send MITs there.
      clearhausSubscription = await clearhausCard('cust-clearhaus');
      assert.equal(fake.requestsTo(AUTHORIZATIONS).length, 1, 'the stored card was authorized at Clearhaus');
    });
    after(async () => {
      await t?.close();
      await relay?.close();
      await fake?.close();
      await rx?.close();
    });

    const card = () => ({ number: '4111111111111111', expiryMonth: 12, expiryYear: expiryYear(), cvc: '123', holderName: 'Test Holder' });
    const moto = (m: TestMerchant, reference: string) =>
      m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference, instantCapture: 'OFF' },
        card: card(),
      });
    const mit = (m: TestMerchant, subscriptionId: string, reference: string, notificationUrl: string) =>
      m.api.post(`${API}/mit`, { subscriptionId, amount: 500, currency: 'DKK', reference, notificationUrl });

    /**
     * `durationMs` of the sandbox merchant's traffic, each answer timed: a client doing GET
     * /transactions one after another, MOTO_CLIENTS clients doing MOTOs, and a MIT every
     * MIT_EVERY_MS, timed from its POST to its callback. `whenLastStarted` runs once no sample starts
     * any more (the answers of the last ones may come later).
     */
    async function samplePhase(label: string, durationMs: number, whenLastStarted?: () => void): Promise<Phase> {
      const phase: Phase = { list: [], moto: [], callback: [] };
      const endAt = performance.now() + durationMs;
      const timed = async (into: number[], call: () => Promise<TestResponse>, what: string) => {
        const started = performance.now();
        const res = await call();
        into.push(performance.now() - started);
        return ok(res, what);
      };
      // Each client pauses between its requests, as one over a network would: an in-process request on
      // SQLite can complete without giving timers and sockets a turn, and back to back it would starve them.
      const lister = (async () => {
        while (performance.now() < endAt) {
          await timed(phase.list, () => sandbox.api.get(`${API}/transactions?perPage=20`), 'GET /transactions');
          await sleep(LIST_PAUSE_MS);
        }
      })();
      const motoClients = Array.from({ length: MOTO_CLIENTS }, async (_, c) => {
        for (let i = 0; performance.now() < endAt; i++) {
          const tx = (await timed(phase.moto, () => moto(sandbox, `${label}-moto-${c}-${i}`), 'sandbox MOTO')).transaction;
          assert.equal(tx.state, 'SUCCESS', 'the simulator approves the sandbox MOTO');
          await sleep(0);
        }
      });
      const mits: Array<Promise<void>> = [];
      for (let i = 0; performance.now() < endAt; i++) {
        const { path, url } = rx.newUrl(label);
        const started = performance.now();
        mits.push(
          (async () => {
            ok(await mit(sandbox, sandboxSubscription, `${label}-mit-${i}`, url), 'sandbox MIT');
            phase.callback.push((await rx.arrival(path, 20_000)) - started);
          })(),
        );
        await sleep(MIT_EVERY_MS);
      }
      whenLastStarted?.();
      // Every sampler settles before a failure is reported (no rejection left unhandled).
      const failed = (await Promise.allSettled([lister, ...motoClients, ...mits])).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return phase;
    }

    /**
     * The Clearhaus merchant's load for one loaded phase: CLEARHAUS_MOTOS MOTOs and CLEARHAUS_MITS
     * MITs at once, every authorization held at the fake until `release`. Resolves once
     * MAX_IN_FLIGHT of them hang there: Clearhaus is saturated, the rest wait in the service.
     */
    async function saturateClearhaus(round: number) {
      const sentBefore = fake.requestsTo(AUTHORIZATIONS).length;
      const held = fake.script({ method: 'POST', path: AUTHORIZATIONS, action: { slow: HOLD_MS }, times: CLEARHAUS_MOTOS + CLEARHAUS_MITS });
      const startedAt = performance.now();
      const motos = Array.from({ length: CLEARHAUS_MOTOS }, (_, i) => moto(clearhaus, `ch-load-${round}-moto-${i}`));
      const callbacks = Array.from({ length: CLEARHAUS_MITS }, () => rx.newUrl('clearhaus'));
      const mits = await Promise.all(callbacks.map(({ url }, i) => mit(clearhaus, clearhausSubscription, `ch-load-${round}-mit-${i}`, url)));
      for (const res of mits) ok(res, 'Clearhaus MIT accepted');
      while (fake.requestsTo(AUTHORIZATIONS).length < sentBefore + MAX_IN_FLIGHT) {
        assert.ok(
          performance.now() - startedAt < 3_000,
          `the Clearhaus load did not start: ${fake.requestsTo(AUTHORIZATIONS).length - sentBefore} requests at the fake`,
        );
        await sleep(10);
      }
      return {
        /** Requests at the fake since the load began. */
        atFake: () => fake.requestsTo(AUTHORIZATIONS).length - sentBefore,
        /** Answers what the fake holds, then waits until every payment of the load went through Clearhaus. */
        async release(): Promise<string[]> {
          held.release();
          const motoStates = (await Promise.all(motos)).map((res) => ok(res, 'Clearhaus MOTO').transaction.state as string);
          await Promise.all(callbacks.map(({ path }) => rx.arrival(path, 20_000)));
          while (fake.requestsTo(AUTHORIZATIONS).length < sentBefore + CLEARHAUS_MOTOS + CLEARHAUS_MITS || relay.open > 0) {
            assert.ok(performance.now() - startedAt < 30_000, `the Clearhaus load of round ${round} did not drain`);
            await sleep(20);
          }
          return motoStates;
        },
      };
    }

    test(`with more than ${MAX_IN_FLIGHT} Clearhaus payments hanging, the sandbox merchant's API answers and callbacks keep their p99`, async () => {
      const t0 = performance.now();
      // The first answers of a fresh process take up to seconds (compilation, caches): not part of any phase.
      await samplePhase('warmup', WARMUP_MS);
      const idle: Phase[] = [];
      const loaded: Phase[] = [];
      const motoStates: string[] = [];
      relay.resetMax();
      for (let round = 0; round < ROUNDS; round++) {
        const sentBefore = relay.opened;
        idle.push(await samplePhase(`idle-${round}`, PHASE_MS));
        assert.equal(relay.opened, sentBefore, `no Clearhaus traffic while round ${round}'s baseline was sampled`);

        const load = await saturateClearhaus(round);
        let openWhileSampling = 0;
        let atFakeWhileSampling = 0;
        loaded.push(
          await samplePhase(`loaded-${round}`, PHASE_MS, () => {
            openWhileSampling = relay.open;
            atFakeWhileSampling = load.atFake();
          }),
        );
        // Every sample started while Clearhaus held all it had taken, with the rest waiting in the service.
        assert.equal(atFakeWhileSampling, MAX_IN_FLIGHT, `only ${MAX_IN_FLIGHT} of the Clearhaus payments reached the fake while it held them`);
        assert.equal(openWhileSampling, MAX_IN_FLIGHT, `the fake still held all ${MAX_IN_FLIGHT} when the last sample started`);
        // The load ends before the next idle phase: its MOTOs are answered (approved once the fake
        // answers, or PROCESSING for those that found no free place and are sent later), its MITs called back.
        motoStates.push(...(await load.release()));
      }
      assert.equal(relay.maxOpen, MAX_IN_FLIGHT, `at most (saturated: exactly) ${MAX_IN_FLIGHT} requests open at the fake at once`);

      idleCallbackP99 = usualP99(idle, 'callback');
      // The comparison: both kinds of phase sample the same traffic for the same time (see `bound`).
      const report = `idle: ${summary(idle)}; loaded: ${summary(loaded)}`;
      for (const [metric, what] of METRICS) {
        const [p99Idle, p99Loaded] = [usualP99(idle, metric), usualP99(loaded, metric)];
        assert.ok(
          p99Loaded <= bound(p99Idle),
          `${what}: usual p99 under Clearhaus load ${p99Loaded.toFixed(0)} ms > ${bound(p99Idle).toFixed(0)} ms (idle ${p99Idle.toFixed(0)} ms)\n${report}`,
        );
      }

      console.log(
        `# clearhaus isolation (${kind}): ${report}; at most ${relay.maxOpen} open at the fake (limit ${MAX_IN_FLIGHT}); ` +
          `Clearhaus MOTOs ${motoStates.join(' ')}; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    });

    // Each Clearhaus MIT's drive job would hold one of the payments lane's job slots (64) while it
    // waited in the connector for one of CLEARHAUS_MAX_IN_FLIGHT connection slots; a batch larger
    // than the lane filled it and every other merchant's drive jobs waited. A saturated connector
    // now gives the job back (Deferred) before anything is sent.
    test(`a Clearhaus MIT batch larger than the job lane does not delay the sandbox merchant's MIT callbacks`, async () => {
      // A card's MITs go one at a time (its series names the latest authorization): the batch spans cards.
      const cards: string[] = [];
      for (let i = 0; i < LANE_CARDS; i++) cards.push(await clearhausCard(`cust-lane-${i}`));
      const held = fake.script({ method: 'POST', path: AUTHORIZATIONS, action: { slow: HOLD_MS }, times: LANE_BATCH });
      const sentBefore = fake.requestsTo(AUTHORIZATIONS).length;
      const loadStarted = performance.now();
      try {
        ok(
          await clearhaus.api.post(`${API}/mit/batch`, {
            transactions: Array.from({ length: LANE_BATCH }, (_, i) => ({
              subscriptionId: cards[i % LANE_CARDS],
              amount: 100,
              currency: 'DKK',
              reference: `ch-lane-${i}`,
              notificationUrl: rx.newUrl('clearhaus-batch').url,
            })),
          }),
          'Clearhaus MIT batch',
        );
        while (fake.requestsTo(AUTHORIZATIONS).length < sentBefore + MAX_IN_FLIGHT) {
          assert.ok(performance.now() - loadStarted < 5_000, 'the Clearhaus batch did not reach the fake');
          await sleep(10);
        }
        await sleep(500); // the lane takes the batch's jobs
        const latencies: number[] = [];
        for (let i = 0; i < 5; i++) {
          const { path, url } = rx.newUrl('lane');
          const started = performance.now();
          ok(await mit(sandbox, sandboxSubscription, `lane-mit-${i}`, url), 'sandbox MIT');
          latencies.push((await rx.arrival(path, 30_000)) - started);
          await sleep(100);
        }
        const limit = bound(idleCallbackP99 ?? 500);
        console.log(
          `# clearhaus isolation, job lane (${kind}): sandbox MIT → callback ${latencies.map((l) => l.toFixed(0)).join(', ')} ms, bound ${limit.toFixed(0)} ms`,
        );
        assert.ok(
          Math.max(...latencies) <= limit,
          `sandbox MIT → callback ${latencies.map((l) => l.toFixed(0)).join(', ')} ms while ${LANE_BATCH} Clearhaus MITs wait: beyond ${limit.toFixed(0)} ms`,
        );
      } finally {
        held.release();
      }
    });
  });
}
