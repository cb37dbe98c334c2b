/**
 * Where the service's CPU goes at a fixed MIT rate: the service runs in a process of its own
 * (job runner on, sandbox latency 0, durable settings, as in `npm run bench mit`), MITs arrive at
 * RATE/s (open loop) for SECONDS with their callbacks to a keep-alive receiver in this process,
 * and a V8 CPU profile of the service (sampling every 1 ms; warm-up excluded) is written to
 * .bench/mit-<store>-<rate>.cpuprofile (open it in Chrome DevTools) and summed by function.
 *
 *   node --import tsx bench/mit-profile.ts [postgres|sqlite] [RATE=100] [SECONDS=20]
 *   node --import tsx bench/mit-profile.ts some.cpuprofile      # only the summary of a profile
 *   node --import tsx bench/mit-profile.ts sqlite 400 15 statements
 *
 * `statements` (SQLite): instead of a V8 profile, the time of every SQLite statement run in the
 * window, by SQL text (lib/statement-timer.mjs): runs, µs per run, per MIT, rows returned. In a V8
 * profile all of it is one native `run` or `all`; here COMMIT (the WAL's pages written), the claim
 * and each insert and update stand apart. The timing costs the service a few per cent.
 *
 * RATE 0: POST /mit alone — closed loop at 50 connections, the job runner off (bench mit a).
 * RATE batch: POST /mit/batch of 500 alone — closed loop at 4 connections, the runner off (bench mit b).
 * RATE capture: POST /transactions/{id}/capture alone, each on its own authorization — closed loop at
 * 10 connections, the runner off (bench capture); CPU per MIT = per capture.
 */
import fs from 'node:fs';
import path from 'node:path';
import { selfTimes, type CpuProfile } from './lib/cpuprofile.js';
import { measure } from './lib/load.js';
import { cpuByWhere } from './lib/process-cpu.js';
import { prepare as prepareCaptures } from './capture.bench.js';
import { API, createMitMerchant, MIT_BATCH_SIZE, mitBatchBody, mitBody } from './lib/merchant.js';
import { startReceiver } from './lib/receiver.js';
import { type ServiceProcess, type StatementTime, startServiceProcess } from './lib/service-process.js';
import { BENCH_DIR, benchDatabase, openRuntime, resetDatabase, type StoreKind } from './lib/stores.js';

const TOP = Number(process.env.TOP ?? 15);

function summarize(file: string): void {
  const { top, busySamples, idleSamples, seconds } = selfTimes(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
  const busyShare = busySamples / Math.max(1, busySamples + idleSamples);
  process.stdout.write(
    `${file}: ${seconds.toFixed(1)} s, ${busySamples + idleSamples} samples, ${(busyShare * 100).toFixed(1)} % not idle (main thread)\n` +
      `top ${TOP} by self time (share of the non-idle samples):\n`,
  );
  for (const [i, t] of top.slice(0, TOP).entries()) {
    process.stdout.write(`${String(i + 1).padStart(3)}. ${(t.share * 100).toFixed(1).padStart(5)} %  ${t.ms.toFixed(0).padStart(6)} ms  ${t.frame}\n`);
  }
}

/** The statement times of the window, as a table (sums by SQL text, the most time first). */
function statementTable(times: StatementTime[], mits: number): void {
  const totalNs = times.reduce((sum, t) => sum + t.ns, 0);
  process.stdout.write(`SQLite statements: ${(totalNs / 1e6).toFixed(0)} ms in all, ${(totalNs / 1e3 / Math.max(mits, 1)).toFixed(0)} µs per MIT\n`);
  process.stdout.write(
    `${'ms'.padStart(7)} ${'share'.padStart(6)} ${'runs'.padStart(7)} ${'µs/run'.padStart(7)} ${'µs/MIT'.padStart(7)} ${'rows'.padStart(7)}  statement\n`,
  );
  for (const t of times.slice(0, TOP)) {
    const sql = t.sql.replace(/\s+/g, ' ').trim();
    process.stdout.write(
      `${(t.ns / 1e6).toFixed(0).padStart(7)} ${((t.ns / totalNs) * 100).toFixed(1).padStart(5)}% ${String(t.runs).padStart(7)} ${(t.ns / t.runs / 1e3).toFixed(1).padStart(7)} ` +
        `${(t.ns / 1e3 / Math.max(mits, 1)).toFixed(1).padStart(7)} ${String(t.rows).padStart(7)}  ${sql.length > 110 ? `${sql.slice(0, 110)}…` : sql}\n`,
    );
  }
}

/**
 * Watches the service from now on: a V8 CPU profile into `file`, or (`statements`) the time of its
 * SQLite statements. The function returned ends the watch; the one it answers prints what was seen.
 */
async function watch(service: ServiceProcess, statements: boolean, file: string): Promise<() => Promise<(units: number) => void>> {
  if (statements) await service.statementTimes();
  else await service.profileStart();
  return async () => {
    if (!statements) {
      await service.profileStop(file);
      return () => summarize(file);
    }
    const times = await service.statementTimes();
    return (units) => statementTable(times, units);
  };
}

async function profile(kind: StoreKind, rate: number | 'batch', seconds: number, statements: boolean): Promise<void> {
  const db = benchDatabase(kind, 'mit_profile');
  await resetDatabase(db);
  const setup = await openRuntime(db, { sandbox: true });
  const merchant = await createMitMerchant(setup, 8).finally(() => setup.close());
  const receiver = await startReceiver();
  // Rate 0: the request alone, as in `bench mit` a (closed loop, no runner, no callbacks).
  const batch = rate === 'batch';
  const closedLoop = rate === 0 || batch;
  const service = await startServiceProcess(db, { workers: !closedLoop, timeStatements: statements });
  try {
    const load = (prefix: string, durationSeconds: number) =>
      measure({
        url: `${service.url}${API}/mit${batch ? '/batch' : ''}`,
        headers: {
          authorization: `Bearer ${merchant.apiKey}`,
          'content-type': 'application/json',
          ...(process.env.KEYED ? { 'idempotency-key': 'profile-{seq}' } : {}),
        },
        connections: batch ? 4 : 50,
        warmupSeconds: 0,
        durationSeconds,
        request: batch
          ? { method: 'POST', body: mitBatchBody(merchant, receiver.url(prefix)), expect: '"error":null' }
          : {
              method: 'POST',
              body: mitBody(receiver.url(prefix), 'profile-{seq}'),
              items: merchant.subscriptionIds,
              wrapItems: true,
              expect: '"state":"PENDING"',
              ...(closedLoop ? {} : { rate }),
            },
      });
    const callbacks = async (expected: number) => {
      if (closedLoop) return 0;
      let arrived = 0;
      for (let quiet = 0; arrived < expected && quiet < 50; quiet++) {
        await new Promise((r) => setTimeout(r, 200));
        const n = (await receiver.take()).seqs.length;
        arrived += n;
        if (n) quiet = 0;
      }
      return arrived;
    };
    const warm = await load('warm', 3);
    await callbacks(warm.requests);
    const stop = await watch(service, statements, path.join(BENCH_DIR, `mit-${kind}-${rate}.cpuprofile`));
    const start = await service.sample();
    const cpu = cpuByWhere(kind, start);
    const m = await load('profiled', seconds);
    const arrived = await callbacks(m.requests);
    const end = await service.sample();
    const print = await stop();
    const cpuMs = (end.cpuMicros - start.cpuMicros) / 1000;
    const systemMs = (end.systemMicros - start.systemMicros) / 1000;
    const mits = m.requests * (batch ? MIT_BATCH_SIZE : 1);
    const windowMs = end.at - start.at;
    const cpuWhere = cpu.where(end, mits);
    process.stdout.write(
      `${kind}: ${m.requests} ${batch ? 'batches' : 'MITs'} at ${closedLoop ? 'closed loop' : `${rate}/s`} (${m.rps.toFixed(0)}/s answered, p99 ${m.p99.toFixed(1)} ms), ${arrived} callbacks; ` +
        `service process CPU ${cpuMs.toFixed(0)} ms = ${(cpuMs / mits).toFixed(3)} ms per MIT (${((cpuMs / windowMs) * 100).toFixed(0)} % of one CPU; ${((systemMs / cpuMs) * 100).toFixed(0)} % of it in the kernel)` +
        (cpuWhere ? `; ${cpuWhere}` : '') +
        '\n',
    );
    print(mits);
  } finally {
    await service.close();
    await receiver.close();
    await resetDatabase(db);
  }
}

/** POST /transactions/{id}/capture alone, closed loop at 10 connections (as `bench capture`). */
async function profileCaptures(kind: StoreKind, seconds: number, statements: boolean): Promise<void> {
  const prepared = await prepareCaptures((line) => process.stdout.write(`${line}\n`), kind, (seconds + 3) * 3000);
  await prepared.runtime.close();
  const service = await startServiceProcess(prepared.db, { workers: false, timeStatements: statements });
  let next = 0;
  try {
    const load = (durationSeconds: number) => {
      const items = prepared.ids.slice(next, (next += durationSeconds * 3000));
      return measure({
        url: `${service.url}${API}/transactions/{item}/capture`,
        headers: { authorization: `Bearer ${prepared.apiKey}`, 'content-type': 'application/json' },
        connections: 10,
        warmupSeconds: 0,
        durationSeconds,
        request: { method: 'POST', body: JSON.stringify({ amount: 1000 }), items, expect: '"success":true' },
      });
    };
    await load(3);
    const stop = await watch(service, statements, path.join(BENCH_DIR, `capture-${kind}.cpuprofile`));
    const start = await service.sample();
    const cpu = cpuByWhere(kind, start);
    const m = await load(seconds);
    const end = await service.sample();
    const print = await stop();
    const cpuMs = (end.cpuMicros - start.cpuMicros) / 1000;
    const cpuWhere = cpu.where(end, m.requests);
    process.stdout.write(
      `${kind}: ${m.requests} captures (${m.rps.toFixed(0)}/s, p99 ${m.p99.toFixed(1)} ms); service process CPU ${(cpuMs / m.requests).toFixed(3)} ms per capture` +
        (cpuWhere ? `; ${cpuWhere}` : '') +
        '\n',
    );
    print(m.requests);
  } finally {
    await service.close();
    await resetDatabase(prepared.db);
  }
}

const [first = 'postgres', rate = '100', seconds = '20', mode = 'profile'] = process.argv.slice(2);
const store = first === 'postgres' || first === 'sqlite' ? first : null;
// Statement times are SQLite's (statement-timer.mjs).
const statements = mode === 'statements' && store === 'sqlite';
if (first.endsWith('.cpuprofile')) summarize(first);
else if (store && (mode === 'profile' || statements)) {
  if (rate === 'capture') await profileCaptures(store, Number(seconds), statements);
  else await profile(store, rate === 'batch' ? 'batch' : Number(rate), Number(seconds), statements);
} else {
  process.stderr.write('usage: bench/mit-profile.ts [postgres|sqlite] [rate|batch|capture] [seconds] [profile|statements (sqlite)] | <file.cpuprofile>\n');
  process.exit(2);
}
