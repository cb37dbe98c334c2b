/**
 * Statements outside a transaction share a few pipelined connections (PostgreSQL). One socket
 * write per statement was a third of the service's busy time at 50 concurrent `POST /mit`
 * (`writev`, each waking a backend): with a connection of the pool per request, the statements of
 * concurrent requests cannot share a write. Here every statement that needs no connection of its
 * own — an autocommitted write, a read, a transaction whose writes were all held and go out as
 * one statement (postgres/write-combining.ts) — goes to one of `size` connections kept out of the pool,
 * and the statements given to one of them in one turn of the event loop leave in one write (its
 * socket is corked until the turn's `setImmediate`).
 *
 * Each statement is its own implicit transaction (node-postgres syncs after each), so a failure
 * fails that statement alone. A connection answers in order: a slow statement delays those
 * behind it, so each statement goes to the connection with the fewest unanswered ones, and a
 * second one opens when a statement finds all busy. A transaction still takes a connection of
 * the pool for itself (its statements must follow each other on one backend).
 *
 * Joinable statements (postgres/write-combining.ts `joinable`: transactions whose writes are new rows,
 * rows their caller holds, or checked updates — a MIT's record, an answer's commit, a delivery's
 * record) given in one turn go at the turn's end as ONE transaction, whatever their kinds — its
 * BEGIN, the statements and its COMMIT in one write, one round trip: one commit for the lot, as
 * `POST /mit/batch` has, instead of one each. A delivery's record, which nobody waits for, may
 * linger until the next turn that has one (issue 10: at 100 MITs/s, 4.04 → 3.16 round trips and
 * 3.98 → 3.05 commits per MIT). When PostgreSQL refuses one of them (an ERROR: the transaction
 * rolls back, nothing of it is written), each goes again alone and gets its own answer; a lost
 * connection fails them all, as it would have failed each (none is sent twice).
 */
import type { CompiledQuery, QueryResult } from 'kysely';
import pg from 'pg';
import { DeadlineTimer } from '../../shared/deadline-timer.js';
import { holdWritesForTurn } from './bursts.js';

/** Most statements joined in one commit (the locks of its first are held until its last is done). */
const MAX_JOINED = 32;

interface Joining {
  query: CompiledQuery;
  resolve(result: QueryResult<never>): void;
  reject(error: unknown): void;
}

interface Slot {
  client: pg.PoolClient;
  pending: number;
  /** Set once the connection failed or ended: it takes nothing more and goes back to be destroyed. */
  broken: boolean;
}

export class SharedClients {
  private readonly slots: Slot[] = [];
  /** A connection being opened: settles with the error that kept it from opening, or null. */
  private opening: Promise<Error | null> | null = null;
  private closed = false;
  /** The joinable statements given this turn, sent at its end. */
  private joining: Joining[] | null = null;
  /** Joinable statements that may wait for another's turn (executeJoined's `lingerMs`), sent with it. */
  private lingering: Joining[] = [];
  /** Sends the lingering statements when the first of them has waited enough. */
  private readonly lingerTimer = new DeadlineTimer(() => this.joinThisTurn());

  constructor(
    private readonly pool: pg.Pool,
    private readonly size: number,
  ) {}

  /** Runs one statement on a shared connection; the answer as Kysely's PostgreSQL driver gives it. */
  async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { command, rowCount, rows } = await this.onSlot((client) => client.query(query.sql, [...query.parameters]));
    const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return { ...(changed ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}), rows: (rows ?? []) as R[] };
  }

  /** `send` on the least busy shared connection, its writes held for the turn (one socket write). */
  private async onSlot<T>(send: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const slot = this.claim() ?? (await this.claimOpened());
    try {
      holdWritesForTurn(slot.client);
      return await send(slot.client);
    } finally {
      slot.pending--;
    }
  }

  /**
   * A joinable statement (see above): sent with the others given this turn, in one transaction;
   * answered without rows (a held write's answer is not read). `lingerMs`: a statement nobody
   * waits for (a delivered callback's record) given in a quiet turn may wait that long for the
   * next joinable statement, and go with it, instead of a round trip and a commit of its own.
   */
  executeJoined<R>(query: CompiledQuery, lingerMs = 0): Promise<QueryResult<R>> {
    return new Promise<QueryResult<never>>((resolve, reject) => {
      const one = { query, resolve, reject };
      if (lingerMs > 0 && !this.joining && !this.closed) {
        this.lingering.push(one);
        this.lingerTimer.arm(Date.now() + lingerMs);
        return;
      }
      this.joinThisTurn().push(one);
    }) as Promise<QueryResult<R>>;
  }

  /** The statements to be sent at this turn's end (the send scheduled by the first). */
  private joinThisTurn(): Joining[] {
    if (!this.joining) {
      this.joining = [];
      setImmediate(() => this.sendJoining());
    }
    return this.joining;
  }

  /** The turn's joinable statements (and those lingering), in the order given, MAX_JOINED to a commit. */
  private sendJoining(): void {
    const joining = [...this.lingering, ...(this.joining ?? [])];
    this.joining = null;
    this.lingering = [];
    this.lingerTimer.clear();
    for (let i = 0; i < joining.length; i += MAX_JOINED) void this.sendJoined(joining.slice(i, i + MAX_JOINED));
  }

  /**
   * `group` as one transaction whose BEGIN, statements and COMMIT leave in one write and are
   * answered in one round trip. Each statement keeps its own text, so each stays one prepared
   * statement with its plan cached; a statement made of the group's texts (a CTE per part, as
   * before) was a new text for each mix and count, planned again at nearly every run: at 300
   * MITs/s, 37 % of the PostgreSQL server's CPU was the planner's. The BEGIN … COMMIT is queued
   * on the connection in one synchronous step, so no other statement falls inside it.
   */
  private async sendJoined(group: Joining[]): Promise<void> {
    const alone = (one: Joining) => void this.execute<never>(one.query).then(one.resolve, one.reject);
    if (group.length <= 1) return group.forEach(alone);
    let settled: PromiseSettledResult<pg.QueryResult>[];
    try {
      settled = await this.onSlot((client) =>
        Promise.allSettled([client.query('BEGIN'), ...group.map((one) => client.query(one.query.sql, [...one.query.parameters])), client.query('COMMIT')]),
      );
    } catch (error) {
      return group.forEach((one) => one.reject(error));
    }
    const failure = settled.find((result) => result.status === 'rejected');
    const end = settled[settled.length - 1]!;
    if (!failure && end.status === 'fulfilled' && end.value.command === 'COMMIT') return group.forEach((one) => one.resolve({ rows: [] }));
    // Refused by PostgreSQL (the transaction rolled back; a statement after the refused one is
    // refused too, and the COMMIT answers ROLLBACK): each goes again on its own. Any other failure
    // (the connection lost, the server going down) may have come after the commit: sent again,
    // the rows would be written twice.
    const error: unknown = failure?.reason;
    if (!failure || refusedStatement(error)) group.forEach(alone);
    else group.forEach((one) => one.reject(error));
  }

  /** Waits for the statements under way, then gives the connections back to the pool (to be closed with it). */
  async close(): Promise<void> {
    this.closed = true;
    // Joinable statements given this turn, or lingering, are sent (in the next one) and counted below.
    if (this.lingering.length) this.joinThisTurn();
    while (this.joining) await new Promise((resolve) => setImmediate(resolve));
    await this.opening;
    while (this.slots.some((slot) => slot.pending > 0)) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const slot of this.slots.splice(0)) {
      if (slot.broken) continue;
      slot.broken = true;
      slot.client.release();
    }
  }

  /** Takes the least busy open connection (opening another while all are busy), or null when none is open. */
  private claim(): Slot | null {
    let best: Slot | null = null;
    for (const slot of this.slots) {
      if (!best || slot.pending < best.pending) best = slot;
    }
    if ((!best || best.pending > 0) && this.slots.length < this.size && !this.closed) {
      // Settles without rejecting: a failure that no statement waited for must not go unhandled.
      this.opening ??= this.open()
        .then(
          () => null,
          (error: Error) => error,
        )
        .finally(() => (this.opening = null));
    }
    if (best) best.pending++;
    return best;
  }

  private async claimOpened(): Promise<Slot> {
    for (;;) {
      if (this.closed) throw new Error('the connection pool is closed');
      const failed = await this.opening;
      const slot = this.claim();
      if (slot) return slot;
      if (failed) throw failed;
    }
  }

  private async open(): Promise<void> {
    const client = await this.pool.connect();
    const slot: Slot = { client, pending: 0, broken: false };
    const drop = (error?: Error) => {
      if (slot.broken) return;
      slot.broken = true;
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      client.release(error ?? true);
    };
    client.on('error', drop);
    client.on('end', () => drop());
    if (this.closed) {
      slot.broken = true;
      client.release();
    } else this.slots.push(slot);
  }
}

/**
 * An error PostgreSQL answered the statement with, which rolled it back — not one of the classes
 * after which it may have committed: connection exception (08), operator intervention such as a
 * shutdown (57), system error (58), internal error (XX).
 */
export function refusedStatement(error: unknown): boolean {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' && !/^(08|57|58|XX)/.test(error.code);
}
