/**
 * Durable commits on SQLite without blocking the event loop on fsync.
 *
 * With `synchronous = FULL` SQLite fsyncs the WAL inside every COMMIT: on this service's one
 * connection that stalls the whole process (HTTP, acquirer answers, callbacks) for the disk's
 * flush time, ~1.2 ms here, several hundred times a second under load (issue 10). Instead the
 * connection runs with `synchronous = NORMAL` — in WAL mode SQLite then syncs at checkpoints only,
 * so the database stays consistent after a crash or a power loss, but the last commits may be
 * missing — and the group commit (sqlite/group-commit.ts) calls `sync()` after each COMMIT: an
 * `fdatasync` of the WAL file in libuv's thread pool. Nothing written in the batch is answered
 * before it returns, which is where `FULL` would have synced: the same guarantee, off the event
 * loop. (WAL frames carry checksums: a commit whose frames did not all reach the disk is ignored
 * on recovery, as with FULL.)
 *
 * The WAL file is opened on the first sync (it exists once a transaction has written), and its
 * directory is synced once then, so that the file's own entry survives a power loss too.
 */
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

export class WalSync {
  private wal: Promise<FileHandle> | null = null;

  constructor(private readonly databaseFile: string) {}

  /** Makes every commit of the connection so far durable. */
  async sync(): Promise<void> {
    this.wal ??= this.openWal();
    try {
      await (await this.wal).datasync();
    } catch (error) {
      // A failed open is tried again at the next sync; a failed datasync is the batch's error (503).
      this.wal = null;
      throw error;
    }
  }

  async close(): Promise<void> {
    const wal = this.wal;
    this.wal = null;
    if (wal) await (await wal.catch(() => null))?.close();
  }

  private async openWal(): Promise<FileHandle> {
    const handle = await open(`${this.databaseFile}-wal`, 'r');
    const directory = await open(path.dirname(path.resolve(this.databaseFile)), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
    return handle;
  }
}
