/** How one unit of work (store.transaction) is committed. */
export interface UnitOptions {
  /**
   * SQLite: the unit may wait this long (ms) to join a group commit another unit starts instead of
   * starting its own (write-batcher.ts). PostgreSQL commits it at once. Default 0.
   */
  lingerMs?: number;
}

/**
 * The record of a delivery attempt (callback or webhook) may wait this long for another commit:
 * the receiver has its answer already and nobody waits for the record. At low rates it shares the
 * next payment's commit instead of paying a commit and an fsync of its own; a crash within the wait
 * sends the delivery again (deliveries are at least once, with their X-Delivery-Id).
 */
export const DELIVERY_RECORD_LINGER_MS = 20;

export const DELIVERY_RECORD_UNIT: UnitOptions = { lingerMs: DELIVERY_RECORD_LINGER_MS };
