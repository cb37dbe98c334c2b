/**
 * Ingestion counts taken ahead in blocks, on a store that counts in the payment's commit (SQLite):
 * a single MIT that finds nothing held for its merchant's minute adds a few more than itself to the
 * counter (a block, in the same conditional upsert), and once that commit is done the next MITs of
 * the minute in this process use them without a statement of their own — at 100 MITs/s one upsert
 * in HELD_BLOCK instead of one per MIT.
 *
 * The counter in the database never counts less than the transactions made: held counts are in it
 * already, so the cap holds for every process on the database. Counts held and never used — the
 * minute ended, the process stopped, the entry was dropped, a commit that used one rolled back —
 * only make that minute's cap stricter, by less than a block per merchant and process. A block is
 * taken only when the cap is large beside it (blockExtra) and while the counter has room for it; the
 * last counts of a minute are taken one by one, so the cap is reached exactly.
 */
import { BoundedMap } from '../../shared/bounded-map.js';

/** At most this many counts per upsert for a single MIT (itself included). */
export const HELD_BLOCK = 16;

/** Merchants × channels held for at once; beyond, the oldest are forgotten (their counts unused). */
const HELD_KEYS = 10_000;

/**
 * How many counts beyond itself a single MIT takes: none for small caps, where a block would be a
 * large share of the minute (and the last counts are taken one by one anyway).
 */
export function blockExtra(limit: number): number {
  return Math.max(0, Math.min(HELD_BLOCK - 1, Math.floor(limit / (HELD_BLOCK * 4))));
}

interface Held {
  windowStart: string;
  /** Counted in the database, not used by a transaction yet. */
  left: number;
  /**
   * A block is being taken (its commit is not done): meanwhile the others count one by one. A
   * commit that rolled back leaves it set: that minute's MITs then count one by one, as without blocks.
   */
  taking: boolean;
}

export class HeldCounts {
  private readonly held = new BoundedMap<string, Held>(HELD_KEYS);

  /** The entry of (merchant, channel) for `windowStart`: a new, empty one when the minute changed. */
  of(key: string, windowStart: string): Held {
    let held = this.held.get(key);
    if (held?.windowStart !== windowStart) {
      held = { windowStart, left: 0, taking: false };
      this.held.set(key, held);
    }
    return held;
  }
}
