/**
 * The service under test in a process of its own (started by service-process.ts): one runtime
 * on a bench database, listening on loopback. Its CPU time is then the service's alone — the load
 * generator and the callback receiver stay in the bench's process. Answers the parent over IPC:
 * statement counts, CPU time, job counts, and a V8 CPU profile of a chosen window.
 */
import fs from 'node:fs';
import type { Config } from '../../src/config.js';
import { Session } from 'node:inspector/promises';
import { threadCpuMicros } from './process-cpu.js';
import type { BenchDatabase } from './stores.js';
import { openRuntime, serve } from './stores.js';

interface Request {
  id: number;
  type: 'start' | 'sample' | 'stop' | 'jobs' | 'profile-start' | 'profile-stop' | 'statement-times' | 'close';
  file?: string;
}

// Stack traces as in production, where the compiled service (dist/) runs without source maps: tsx
// turns them on, and then every Error whose stack is read (Node reads it when a socket is destroyed
// with one, as undici does after each answer on a closed connection) costs source-map lookups.
process.setSourceMapsEnabled(false);

const send = (message: unknown) => process.send!(message);
const { db, workers, config, jobConcurrency } = JSON.parse(process.argv[2]!) as {
  db: BenchDatabase;
  workers: boolean;
  config?: Partial<Config>;
  jobConcurrency?: number;
};
const runtime = await openRuntime(db, { ...(workers ? {} : { maxBacklog: 0 }), ...config }, { workers, ...(jobConcurrency ? { jobConcurrency } : {}) });
const url = await serve(runtime);
const { counters } = runtime.store;
let profiler: Session | null = null;

function sample() {
  const cpu = process.cpuUsage();
  return {
    counts: counters.snapshot(),
    cpuMicros: cpu.user + cpu.system,
    systemMicros: cpu.system,
    mainThreadMicros: threadCpuMicros(),
    at: performance.now(),
    batcher: runtime.store.batcher ? { ...runtime.store.batcher.stats } : null,
  };
}

async function answer(request: Request): Promise<unknown> {
  switch (request.type) {
    case 'start':
      counters.start();
      return sample();
    case 'sample':
      return sample();
    case 'stop': {
      const s = sample();
      counters.stop();
      return s;
    }
    case 'jobs':
      return runtime.store.jobs.countsByState();
    case 'profile-start':
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 1000 });
      await profiler.post('Profiler.start');
      return null;
    case 'profile-stop': {
      if (!profiler) throw new Error('no profile started');
      const { profile } = await profiler.post('Profiler.stop');
      profiler.disconnect();
      profiler = null;
      fs.writeFileSync(request.file!, JSON.stringify(profile));
      return null;
    }
    case 'statement-times': {
      const timer = (globalThis as { __statementTimes?: { take(): unknown } }).__statementTimes;
      if (!timer) throw new Error('statement times: the service was not started with timeStatements');
      return timer.take();
    }
    case 'close':
      await runtime.close();
      return null;
  }
}

process.on('message', (request: Request) => {
  answer(request).then(
    (value) => process.send!({ id: request.id, ok: true, value }, () => request.type === 'close' && process.exit(0)),
    (err: unknown) => send({ id: request.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
send({ id: 0, ok: true, value: url });
