/**
 * One measurement: fixed-concurrency HTTP load against a URL for a fixed time, after a warm-up.
 * The load runs in a worker thread (load-worker.mjs); the server under test keeps this thread.
 */
import { Worker } from 'node:worker_threads';

/**
 * What each request sends, beyond the URL and headers (see load-worker.mjs): `{item}` in the
 * URL, a header value or the body takes the next of `items`, `{seq}` a value unique in the run.
 */
export interface RequestTemplate {
  method?: 'GET' | 'POST';
  body?: string;
  /** One per request, in order, shared by the connections; across rounds the next round goes on where the last stopped. */
  items?: string[];
  /** Start again at the first item when they run out (else the extra requests are reported as failures). */
  wrapItems?: boolean;
  /** A 2xx answer whose body lacks this text is reported as a failure. */
  expect?: string;
  /** Return the time of each 2xx answer with its `{seq}` value. */
  recordAnswers?: boolean;
  /**
   * Open loop: this many requests per second in all, on a fixed schedule, latencies counted from
   * each request's scheduled start (default: closed loop, each connection sends on the answer).
   */
  rate?: number;
}

/** 2xx answers of a run: `{seq}` value and epoch milliseconds (performance.timeOrigin + now()). */
export interface Answers {
  seqs: string[];
  times: Float64Array;
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  request?: RequestTemplate;
  /** First item to use (measureInterleaved carries it over the rounds). */
  itemStart?: number;
  /** Concurrent keep-alive connections (closed loop: each sends its next request on the answer). */
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface Measurement {
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses that were not 2xx, by status; a benchmark with any is reported as broken. */
  non2xx: Record<string, number>;
  errors: number;
  /** Items consumed, warm-up included. */
  itemsUsed: number;
  /** recordAnswers: the measured run's 2xx answers. */
  answers: Answers | null;
  /** Open loop (`rate`): the answers fell too far behind the schedule and the run stopped early. */
  overloaded: boolean;
}

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

interface Run {
  latencies: Float64Array;
  seconds: number;
  errors: number;
  non2xx: Record<string, number>;
  itemsUsed: number;
  answers: Answers | null;
  overloaded: boolean;
}

function summarize(runs: Run[]): Measurement {
  const total = runs.reduce((n, r) => n + r.latencies.length, 0);
  const latencies = new Float64Array(total);
  let at = 0;
  for (const r of runs) {
    latencies.set(r.latencies, at);
    at += r.latencies.length;
  }
  latencies.sort();
  const non2xx: Record<string, number> = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.non2xx)) non2xx[code] = (non2xx[code] ?? 0) + n;
  return {
    requests: total,
    rps: total / runs.reduce((s, r) => s + r.seconds, 0),
    p50: quantile(latencies, 0.5),
    p90: quantile(latencies, 0.9),
    p99: quantile(latencies, 0.99),
    max: total ? latencies[total - 1]! : Number.NaN,
    non2xx,
    errors: runs.reduce((n, r) => n + r.errors, 0),
    itemsUsed: runs.reduce((n, r) => n + r.itemsUsed, 0),
    answers: runs.some((r) => r.answers)
      ? {
          seqs: runs.flatMap((r) => r.answers?.seqs ?? []),
          times: Float64Array.from(runs.flatMap((r) => [...(r.answers?.times ?? [])])),
        }
      : null,
    overloaded: runs.some((r) => r.overloaded),
  };
}

export async function measure(options: LoadOptions): Promise<Measurement> {
  return summarize([await run(options)]);
}

/**
 * Several targets measured in alternating rounds (A B C A B C ...), each figure the union of its
 * rounds: on a machine shared with other work, a burst of load then hits every target alike
 * instead of spoiling one figure, and the ratios between them stay meaningful.
 */
export async function measureInterleaved(
  targets: Array<Omit<LoadOptions, 'durationSeconds' | 'warmupSeconds'>>,
  settings: { rounds: number; warmupSeconds: number; durationSeconds: number },
): Promise<Measurement[]> {
  const runs: Run[][] = targets.map(() => []);
  const itemAt = targets.map((t) => t.itemStart ?? 0);
  const perRound = settings.durationSeconds / settings.rounds;
  for (let round = 0; round < settings.rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const r = await run({ ...target, itemStart: itemAt[i]!, durationSeconds: perRound, warmupSeconds: round === 0 ? settings.warmupSeconds : 0 });
      itemAt[i]! += r.itemsUsed;
      runs[i]!.push(r);
    }
  }
  return runs.map(summarize);
}

let workerRuns = 0;

function run(options: LoadOptions): Promise<Run> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.mjs', import.meta.url), {
      workerData: {
        url: options.url,
        headers: options.headers ?? {},
        connections: options.connections,
        warmupSeconds: options.warmupSeconds,
        durationSeconds: options.durationSeconds,
        ...options.request,
        itemStart: options.itemStart ?? 0,
        // `{seq}` values stay unique over every run of the process.
        tag: `w${++workerRuns}-`,
      },
    });
    worker.once('error', reject);
    worker.once(
      'message',
      (m: {
        latencies: Float64Array;
        durationSeconds: number;
        errors: number;
        non2xx: Record<string, number>;
        itemsUsed: number;
        answers: Answers | null;
        overloaded: boolean;
      }) => {
        resolve({
          latencies: m.latencies,
          seconds: m.durationSeconds,
          errors: m.errors,
          non2xx: m.non2xx,
          itemsUsed: m.itemsUsed,
          answers: m.answers,
          overloaded: m.overloaded,
        });
        void worker.terminate();
      },
    );
  });
}
