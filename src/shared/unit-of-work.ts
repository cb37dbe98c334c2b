/** How one unit of work (store.transaction) is committed. */
export interface UnitOptions {
  /**
   * The unit may wait this long (ms) to join a commit another unit starts instead of starting its
   * own: on SQLite the next group commit (sqlite/group-commit.ts); on PostgreSQL the next joinable
   * statement, when all its writes are joinable (postgres/shared-clients.ts). Default 0.
   */
  lingerMs?: number;
  /**
   * The unit may run again from the start, in a new transaction, before it is answered: it writes
   * only through the repositories it is given and changes nothing else that a second run would
   * change again (what it registers after the commit is taken back with the first run). On SQLite
   * it then needs no savepoint in a group commit of such units (sqlite/group-commit.ts): a later one's
   * failure rolls the transaction back and runs it again. Ignored on PostgreSQL. Default false.
   */
  replayable?: boolean;
}

/** A replayable unit (UnitOptions.replayable). */
export const REPLAYABLE_UNIT: UnitOptions = { replayable: true };

/**
 * The record of a callback's attempt (with its job's end) may wait this long for another commit:
 * the receiver has its answer already and nobody waits for the record. At low rates it shares the
 * next payment's commit instead of paying a commit and an fsync of its own; a crash within the wait
 * sends the callback again (callbacks are at least once, with their X-Delivery-Id).
 *
 * Not for webhooks: their job ends in the runner's commit after the record's, so a lingering
 * record would wait for nothing; ending the job in the record's commit made the fan-out of 100k
 * deliveries on SQLite about 5 % slower (3 runs each), though it saved a commit per delivery.
 */
export const DELIVERY_RECORD_LINGER_MS = 20;

export const DELIVERY_RECORD_UNIT: UnitOptions = { lingerMs: DELIVERY_RECORD_LINGER_MS, replayable: true };

/**
 * The commit of an acquirer's answer applied by its drive job (an asynchronous payment: no request
 * waits for it, only its callback, which leaves after it) may wait this long for another commit. At
 * low rates it then shares the next payment's commit instead of paying one of its own (SQLite, MITs
 * at 100/s: 2.05 → 1.03 commits and 17.2 → 15.2 statements per MIT, the callback ~9 ms later);
 * under load a commit is always next and it waits for none. Synchronous flows' answers never wait.
 */
export const JOB_ANSWER_LINGER_MS = 10;

export const JOB_ANSWER_UNIT: UnitOptions = { lingerMs: JOB_ANSWER_LINGER_MS, replayable: true };
