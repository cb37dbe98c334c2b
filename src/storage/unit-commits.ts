/**
 * How the store commits each kind of unit of work (UnitKind, src/shared/unit-of-work.ts).
 *
 * `lingerMs`: the unit may wait that long to join a commit another unit starts instead of starting
 * its own — on SQLite the next group commit (sqlite/group-commit.ts), on PostgreSQL the next
 * joinable statement, when all its writes are joinable (postgres/shared-clients.ts). At low rates
 * it then shares the next payment's commit instead of paying a commit and an fsync of its own;
 * under load a commit is always next and it waits for none.
 *
 * `replayable`: the unit may run again from the start, in a new transaction, before it is answered.
 * On SQLite it then needs no savepoint in a group commit of such units: a later one's failure rolls
 * the transaction back and runs it again. Ignored on PostgreSQL.
 */
import type { UnitKind } from '../shared/unit-of-work.js';

export interface UnitOptions {
  lingerMs?: number;
  replayable?: boolean;
}

/**
 * An answer applied by its drive job: at MITs at 100/s on SQLite, lingering took a MIT from 2.05
 * to 1.03 commits and from 17.2 to 15.2 statements, its callback ~9 ms later. Synchronous flows'
 * answers never wait.
 */
export const JOB_ANSWER_LINGER_MS = 10;

/**
 * A delivered callback's record. Not for webhooks: their job ends in the runner's commit after the
 * record's, so a lingering record would wait for nothing; ending the job in the record's commit made
 * the fan-out of 100k deliveries on SQLite about 5 % slower (3 runs each), though it saved a commit
 * per delivery.
 */
export const DELIVERY_RECORD_LINGER_MS = 20;

export const UNIT_COMMITS: Readonly<Record<UnitKind, UnitOptions>> = {
  rerunnable: { replayable: true },
  'background-answer': { lingerMs: JOB_ANSWER_LINGER_MS, replayable: true },
  'delivery-record': { lingerMs: DELIVERY_RECORD_LINGER_MS, replayable: true },
};

/** How a unit of `kind` is committed (none: a plain transaction of its own). */
export const unitCommit = (kind: UnitKind | undefined): UnitOptions => (kind ? UNIT_COMMITS[kind] : {});
