/**
 * What one MIT writes to SQLite's WAL, request to delivered callback, by B-tree: every page a
 * commit changed is written whole (one frame), so the frames per MIT are a payment's write volume,
 * counted rather than timed (the same on a busy host as on a quiet one).
 *
 * N MITs are sent one after another, 10 ms apart, to a service in this process (sandbox, job
 * runner on) after a warm-up, with WAL checkpoints off (`checkpoints: false`), so that the WAL
 * holds every frame the N MITs and their callbacks wrote. Then each frame's page is attributed
 * to its table or index (SQLite's dbstat).
 *
 *   node --import tsx bench/mit-wal-pages.ts [N=100]
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { API, createMitMerchant, mitBody } from './lib/merchant.js';
import { startReceiver, type Receiver } from './lib/receiver.js';
import { benchDatabase, openRuntime, resetDatabase, serve } from './lib/stores.js';

const count = Number(process.argv[2] ?? 100);
const WARMUP = 300;
const db = benchDatabase('sqlite', 'mit_wal_pages');
if (db.config.kind !== 'sqlite') throw new Error('SQLite only');
const file = db.config.path;

/** `n` MITs one after another, then every callback delivered and the delivery records committed. */
async function send(url: string, receiver: Receiver, apiKey: string, subscriptions: string[], prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const body = mitBody(receiver.url(prefix), `${prefix}-${i}`)
      .replace('{item}', subscriptions[i % subscriptions.length]!)
      .replace('{seq}', String(i));
    const res = await fetch(url + `${API}/mit`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body });
    if (!res.ok) throw new Error(`POST /mit: ${res.status} ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  for (let arrived = 0, waited = 0; arrived < n; waited += 100) {
    if (waited > 30_000) throw new Error(`${n - arrived} callbacks missing after 30 s`);
    arrived += (await receiver.take()).total;
    await new Promise((r) => setTimeout(r, 100));
  }
  // The delivery records linger for a commit to join (unit-commits.ts, DELIVERY_RECORD_LINGER_MS), then commit alone.
  await new Promise((r) => setTimeout(r, 500));
}

await resetDatabase(db);
const setup = await openRuntime(db, { sandbox: true });
const merchant = await createMitMerchant(setup, 8).finally(() => setup.close());
const receiver = await startReceiver();
try {
  const warm = await openRuntime(db, { sandbox: true }, { workers: true });
  try {
    await send(await serve(warm), receiver, merchant.apiKey, merchant.subscriptionIds, 'warm', WARMUP);
  } finally {
    // Its last connection closing checkpoints the whole WAL and removes it: the next one starts empty.
    await warm.close();
  }
  const runtime = await openRuntime(db, { sandbox: true }, { workers: true, connectOptions: { checkpoints: false } });
  try {
    await send(await serve(runtime), receiver, merchant.apiKey, merchant.subscriptionIds, 'counted', count);
    report(fs.readFileSync(`${file}-wal`));
  } finally {
    await runtime.close();
  }
} finally {
  await receiver.close();
  await resetDatabase(db);
}

function report(wal: Buffer): void {
  // WAL format: a 32-byte header (page size at byte 8), then frames of a 24-byte header (page
  // number; the database size after a commit, non-zero on a commit's last frame) and the page.
  const pageSize = wal.readUInt32BE(8);
  const framesOf = new Map<number, number>();
  let frames = 0;
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at);
    frames++;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
    framesOf.set(page, (framesOf.get(page) ?? 0) + 1);
  }
  const reader = new Database(file, { readonly: true });
  const owner = new Map<number, string>();
  try {
    for (const row of reader.prepare('select name, pageno from dbstat').all() as Array<{ name: string; pageno: number }>) owner.set(row.pageno, row.name);
  } finally {
    reader.close();
  }
  const byTree = new Map<string, { frames: number; pages: number }>();
  for (const [page, n] of framesOf) {
    // Page 1 (the header) is sqlite_schema's root; a page no B-tree owns is on the free list.
    const name = owner.get(page) ?? 'free pages';
    const tree = byTree.get(name) ?? { frames: 0, pages: 0 };
    tree.frames += n;
    tree.pages++;
    byTree.set(name, tree);
  }
  const per = (n: number) => (n / count).toFixed(2);
  process.stdout.write(
    `${count} MITs, request → delivered callback: ${frames} WAL frames of ${pageSize} bytes = ${per(frames)} per MIT ` +
      `(${((frames * (pageSize + 24)) / count / 1024).toFixed(0)} KiB), ${commits} commits = ${per(commits)} per MIT, ${framesOf.size} distinct pages\n` +
      `frames per MIT   pages  table or index\n`,
  );
  for (const [name, tree] of [...byTree].sort((a, b) => b[1].frames - a[1].frames)) {
    process.stdout.write(`${per(tree.frames).padStart(14)}  ${String(tree.pages).padStart(6)}  ${name}\n`);
  }
}
