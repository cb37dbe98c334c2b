/**
 * Starts the service under test in a child process (service-main.ts) on a bench database, so
 * that what it costs — CPU time, statements, commits — is measured without the load generator
 * and the callback receiver, which stay in this process.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../src/config.js';
import type { StatementCounts } from '../../src/storage/statement-counter.js';
import type { BatcherStats } from '../../src/storage/sqlite/group-commit.js';
import type { BenchDatabase } from './stores.js';

export interface ServiceSample {
  /** Counted since the last start (zero while counting is off). */
  counts: StatementCounts;
  /** CPU time of the service process since it started (user + system), µs. */
  cpuMicros: number;
  /** Of which in the kernel (system calls, the loopback's network stack), µs. */
  systemMicros: number;
  /** Of which on the main thread (the event loop), µs; null without /proc. */
  mainThreadMicros: number | null;
  /** The child's performance.now(), ms. */
  at: number;
  /** SQLite: group commits and units of work since the runtime opened. */
  batcher: BatcherStats | null;
}

export interface ServiceProcess {
  url: string;
  /** Counting from zero from now; returns the sample at the start (CPU, batcher). */
  startCounting(): Promise<ServiceSample>;
  sample(): Promise<ServiceSample>;
  /** The last sample, then counting off. */
  stopCounting(): Promise<ServiceSample>;
  jobCounts(): Promise<Array<{ kind: string; state: string; count: number }>>;
  /** A V8 CPU profile of the service (sampling every 1 ms) from now until profileStop writes it to `file`. */
  profileStart(): Promise<void>;
  profileStop(file: string): Promise<void>;
  /** With `timeStatements`: the SQLite statements run since the last call, by SQL text (statement-timer.mjs). */
  statementTimes(): Promise<StatementTime[]>;
  close(): Promise<void>;
}

export interface StatementTime {
  sql: string;
  runs: number;
  /** Time inside the driver's call, ns. */
  ns: number;
  /** Rows returned (reads, RETURNING). */
  rows: number;
}

/**
 * `config`: settings over the bench's (benchConfig), sent to the child as JSON — e.g. `clearhaus`,
 * the Clearhaus connector the runtime builds as in production (its signing key read from its file).
 * `jobConcurrency`: job slots per runner lane (default: the runtime's).
 */
export async function startServiceProcess(
  db: BenchDatabase,
  options: { workers: boolean; timeStatements?: boolean; config?: Partial<Config>; jobConcurrency?: number },
): Promise<ServiceProcess> {
  const main = fileURLToPath(new URL('./service-main.ts', import.meta.url));
  const timer = options.timeStatements ? ['--import', fileURLToPath(new URL('./statement-timer.mjs', import.meta.url))] : [];
  const child = fork(main, [JSON.stringify({ db, workers: options.workers, config: options.config ?? {}, jobConcurrency: options.jobConcurrency })], {
    // BENCH_SERVICE_NODE_FLAGS: V8 or Node flags for the service alone (e.g. `--log-ic --logfile=…`).
    execArgv: [...(process.env.BENCH_SERVICE_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []), ...timer, '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let exited: Error | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = new Error(`service process exited (${signal ?? code})`);
      for (const p of pending.values()) p.reject(exited);
      pending.clear();
      resolve();
    }),
  );
  child.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`service process: ${m.error}`));
  });
  const ask = <T>(type: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(exited);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, type, ...extra });
    });
  // The first message (id 0) is the URL it listens on.
  const url = await new Promise<string>((resolve, reject) => {
    pending.set(0, { resolve: resolve as (v: unknown) => void, reject });
  });
  return {
    url,
    startCounting: () => ask('start'),
    sample: () => ask('sample'),
    stopCounting: () => ask('stop'),
    jobCounts: () => ask('jobs'),
    profileStart: () => ask('profile-start'),
    profileStop: (file) => ask('profile-stop', { file }),
    statementTimes: () => ask('statement-times'),
    async close() {
      if (exited) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await ask('close').catch(() => undefined);
      await exit;
      clearTimeout(timer);
    },
  };
}
