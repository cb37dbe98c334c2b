/**
 * Statements outside a transaction share a few pipelined connections (PostgreSQL). One socket
 * write per statement was a third of the service's busy time at 50 concurrent `POST /mit`
 * (`writev`, each waking a backend): with a connection of the pool per request, the statements of
 * concurrent requests cannot share a write. Here every statement that needs no connection of its
 * own — an autocommitted write, a read, a transaction whose writes were all held and go out as
 * one statement (pg-write-combining.ts) — goes to one of `size` connections kept out of the pool,
 * and the statements given to one of them in one turn of the event loop leave in one write (its
 * socket is corked until the turn's `setImmediate`).
 *
 * Each statement is its own implicit transaction (node-postgres syncs after each), so a failure
 * fails that statement alone. A connection answers in order: a slow statement delays those
 * behind it, so each statement goes to the connection with the fewest unanswered ones, and a
 * second one opens when a statement finds all busy. A transaction still takes a connection of
 * the pool for itself (its statements must follow each other on one backend).
 *
 * Joinable statements (pg-write-combining.ts `joinable`: transactions whose writes are new rows,
 * rows their caller holds, or checked updates — a MIT's record, an answer's commit, a delivery's
 * record) given in one turn go as ONE statement at the turn's end, whatever their kinds: one
 * commit for the lot, as `POST /mit/batch` has, instead of one each. A delivery's record, which
 * nobody waits for, may linger until the next turn that has one (issue 10: at 100 MITs/s, 4.04 →
 * 3.16 round trips and 3.98 → 3.05 commits per MIT). When PostgreSQL refuses it (an ERROR:
 * nothing of it was written), each goes again alone and gets its own answer; a lost connection
 * fails them all, as it would have failed each (none is sent twice).
 */
import type { CompiledQuery, QueryResult } from 'kysely';
import pg from 'pg';
import { DeadlineTimer } from '../shared/deadline-timer.js';
import { holdWritesForTurn } from './pg-bursts.js';
import { combine } from './pg-write-combining.js';

/** PostgreSQL's limit of parameters in one statement. */
const MAX_PARAMETERS = 65_535;
/** Most statements joined as one (the combined texts, one prepared statement each, stay few). */
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
    const slot = this.claim() ?? (await this.claimOpened());
    try {
      holdWritesForTurn(slot.client);
      const result = await slot.client.query(query.sql, [...query.parameters]);
      const { command, rowCount, rows } = result;
      const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
      return { ...(changed ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}), rows: (rows ?? []) as R[] };
    } finally {
      slot.pending--;
    }
  }

  /**
   * A joinable statement (see above): sent with the others given this turn, as one; answered
   * without rows (a held write's answer is not read). `lingerMs`: a statement nobody waits for (a
   * delivered callback's record) given in a quiet turn may wait that long for the next joinable
   * statement, and go with it, instead of a round trip and a commit of its own.
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

  /**
   * The turn's joinable statements (and those lingering) as one statement, ordered by text: the
   * statements of one kind (a MIT's record, an answer's commit, a delivery's record) stand together,
   * so that a joined text is the same each time for a given count of each kind (a prepared
   * statement, pg-prepared.ts), not one per order of arrival.
   */
  private sendJoining(): void {
    const joining = [...this.lingering, ...(this.joining ?? [])];
    this.joining = null;
    this.lingering = [];
    this.lingerTimer.clear();
    const byText = new Map<string, Joining[]>();
    for (const one of joining) {
      const same = byText.get(one.query.sql);
      if (same) same.push(one);
      else byText.set(one.query.sql, [one]);
    }
    const texts = [...byText.keys()].sort();
    let group: Joining[] = [];
    let parameters = 0;
    for (const text of texts) {
      for (const one of byText.get(text)!) {
        if (group.length === MAX_JOINED || parameters + one.query.parameters.length > MAX_PARAMETERS) {
          this.sendJoined(group);
          group = [];
          parameters = 0;
        }
        group.push(one);
        parameters += one.query.parameters.length;
      }
    }
    this.sendJoined(group);
  }

  private sendJoined(group: Joining[]): void {
    const alone = (one: Joining) => void this.execute<never>(one.query).then(one.resolve, one.reject);
    if (group.length <= 1) return group.forEach(alone);
    this.execute(combine(group.map((one) => one.query))).then(
      () => group.forEach((one) => one.resolve({ rows: [] })),
      (error: unknown) => {
        // Refused by PostgreSQL: the statement was rolled back, each goes again on its own. Any
        // other failure (the connection lost, the server going down) may have come after the
        // commit: sent again, the rows would be written twice.
        if (refusedStatement(error)) group.forEach(alone);
        else group.forEach((one) => one.reject(error));
      },
    );
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
