/**
 * WAL checkpoints on SQLite off the event loop (issue 10).
 *
 * SQLite copies the WAL back into the database file at a checkpoint. By default the connection
 * that commits does it, inside COMMIT, once the WAL passes 1 000 pages: on this service's one
 * connection that stalled the event loop for 8–19 ms about every seventh group commit under load
 * (two thirds of all COMMIT time, measured by statement). Here a second connection to the same file,
 * in a worker thread, runs a PASSIVE checkpoint every CHECKPOINT_INTERVAL_MS: it copies what is
 * committed without blocking the writer (it never takes the write lock). Under steady writes it
 * never quite catches up with the end of the WAL, so the WAL would not start over: the main
 * connection keeps its own automatic checkpoint at a higher mark (MAIN_AUTOCHECKPOINT_PAGES, 16 MB).
 * By then the worker has copied nearly everything, so that checkpoint is short, and the WAL starts
 * over after it. Measured by statement at ~700 MITs/s: COMMIT time halved, 2 commits over 8 ms
 * instead of 29 in the same 5 s, the WAL bounded at about 17 MB.
 *
 * Durability does not change: a commit is durable once its WAL frames are synced (wal-sync.ts);
 * a checkpoint only moves durable data and syncs the database file before the WAL may be reused.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDriverName } from './handle.js';

export const CHECKPOINT_INTERVAL_MS = 100;
/** The main connection's own automatic checkpoint, past this many WAL pages (SQLite's default is 1 000): it lets the WAL start over. */
export const MAIN_AUTOCHECKPOINT_PAGES = 4_000;

// CommonJS, run by the worker as given (no TypeScript loader there).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { file, driver, betterSqlite3, intervalMs } = workerData;
let db;
let checkpoint;
if (driver === 'node:sqlite') {
  const { DatabaseSync } = require('node:sqlite');
  db = new DatabaseSync(file);
  db.exec('PRAGMA busy_timeout = 5000');
  const stmt = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  checkpoint = () => stmt.get();
} else {
  const Database = require(betterSqlite3);
  db = new Database(file, { fileMustExist: true });
  checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)', { simple: false })[0];
}
const timer = setInterval(() => {
  try {
    checkpoint();
  } catch {
    // SQLITE_BUSY and the like: the next run tries again; the main connection's own checkpoint remains.
  }
}, intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage({ ready: true });
`;

/** The background checkpoints of one SQLite database file. */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private closing: Promise<void> | null = null;

  constructor(file: string, driver: SqliteDriverName, intervalMs = CHECKPOINT_INTERVAL_MS) {
    const betterSqlite3 = driver === 'better-sqlite3' ? createRequire(import.meta.url).resolve('better-sqlite3') : null;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver, betterSqlite3, intervalMs },
    });
    // The worker never keeps the process alive: a service that is done exits without closing it.
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', () => resolve());
      this.worker.once('error', reject);
      this.worker.once('exit', () => reject(new Error('the WAL checkpointer stopped')));
    });
    // Nobody may be waiting for it: a failure to start is seen by close().
    this.ready.catch(() => undefined);
  }

  /** Stops the checkpoints and closes the worker's connection (before the main one closes). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // Kept alive while its end is awaited (unref'd otherwise).
      this.worker.ref();
      const started = await this.ready.then(
        () => true,
        () => false,
      );
      if (!started) return;
      const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
      this.worker.postMessage('close');
      await exited;
    })();
    return this.closing;
  }
}
