/**
 * Starts the fake Clearhaus in a child process (clearhaus-fake-main.ts, `node --import tsx`): its
 * URL from the first line it prints, its CPU time and what it answered over IPC.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { FakeStats } from './clearhaus-fake-main.js';
import { REPO_ROOT } from './stores.js';

export type { FakeStats } from './clearhaus-fake-main.js';

export interface ClearhausFakeProcess {
  /** `http://127.0.0.1:<port>`: CLEARHAUS_URL. */
  url: string;
  /** CPU time and the answers since the last call (the first call: since the start). */
  stats(): Promise<FakeStats>;
  close(): Promise<void>;
}

export interface ClearhausFakeProcessOptions {
  merchants: Array<{ apiKey: string; mcc?: string }>;
  /** The partner signing key the fake verifies with (default: the docs' 512-bit example key). */
  signingKeyId?: string;
  signingPublicKeyPem?: string;
}

export async function startClearhausFakeProcess(options: ClearhausFakeProcessOptions): Promise<ClearhausFakeProcess> {
  const main = fileURLToPath(new URL('./clearhaus-fake-main.ts', import.meta.url));
  // BENCH_FAKE_NODE_FLAGS: V8 or Node flags for the fake alone (e.g. `--cpu-prof --cpu-prof-dir=…`).
  const flags = process.env.BENCH_FAKE_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', main, JSON.stringify(options)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let exited: Error | null = null;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = new Error(`the fake Clearhaus process exited (${signal ?? code})`);
      for (const p of pending.values()) p.reject(exited);
      pending.clear();
      resolve();
    }),
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const early = () => reject(exited ?? new Error('the fake Clearhaus process exited before printing its URL'));
    void exit.then(early);
    lines.once('line', (line) => {
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch {
        reject(new Error(`the fake Clearhaus process printed ${line.slice(0, 200)}`));
      }
    });
  });
  // Anything it prints later (it should not) goes to the bench's output.
  lines.on('line', (line) => process.stdout.write(`   [clearhaus fake] ${line}\n`));
  child.on('message', (m: { id: number; value: unknown }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    p.resolve(m.value);
  });
  let nextId = 1;
  const ask = <T>(type: 'stats' | 'close'): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(exited);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, type });
    });
  return {
    url,
    stats: () => ask<FakeStats>('stats'),
    async close() {
      if (exited) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await ask('close').catch(() => undefined);
      await exit;
      clearTimeout(timer);
    },
  };
}
