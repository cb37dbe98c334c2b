/**
 * What a unit of work is, as its caller knows it (store.transaction's second argument). The store
 * decides from it how the unit is committed — whether it may wait to share another's commit, or
 * run again without a savepoint (src/storage/unit-commits.ts); the caller knows none of that.
 * Without a kind, a unit is a plain transaction of its own, committed at once.
 */
export type UnitKind =
  /**
   * It writes only through the repositories it is given and changes nothing else that a second
   * run would change again: the store may run it again from the start before answering it.
   */
  | 'rerunnable'
  /**
   * An acquirer's answer applied by a drive job (an asynchronous payment): rerunnable, and no request
   * waits for its commit — only its callback, which leaves after it.
   */
  | 'background-answer'
  /**
   * The record of a delivered callback (its attempt, its notification's counters, its job's end):
   * rerunnable, and nobody waits for it; a crash before it is committed sends the callback again
   * (callbacks are at least once, with their X-Delivery-Id).
   */
  | 'delivery-record';
