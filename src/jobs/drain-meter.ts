/**
 * How fast this process's workers settle jobs (done, or failed for a later retry): the measure
 * behind the lag bound (PAYMENTS_MAX_LAG_MS, backlog.ts). A backlog is only "too long" relative to
 * how fast it drains: 5 000 due jobs are 2 s of work for workers settling 2 500 a second, and 50 s
 * for workers settling 100.
 *
 * Counts in slots of SLOT_MS over the last WINDOW_MS (wall time); a rate over a few seconds smooths
 * the bursts of batch claims without hiding a slowdown for long.
 */
import { wallClock } from '../clock.js';

export const DRAIN_WINDOW_MS = 5_000;
const SLOT_MS = 250;

export class DrainMeter {
  private readonly slots: number[];
  /** Index (wall time / SLOT_MS) of the newest slot written. */
  private newest = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windowMs = DRAIN_WINDOW_MS,
    private readonly wallNow: () => number = wallClock,
  ) {
    this.slots = new Array<number>(Math.max(1, Math.ceil(windowMs / SLOT_MS))).fill(0);
  }

  /** `count` jobs were settled now. */
  record(count = 1): void {
    const index = this.advance();
    this.slots[index % this.slots.length]! += count;
  }

  /** Jobs settled per second over the window. */
  ratePerSecond(): number {
    this.advance();
    let total = 0;
    for (const n of this.slots) total += n;
    return total / (this.windowMs / 1000);
  }

  /** Moves the window to now: slots that fell out of it are emptied. Returns the current slot index. */
  private advance(): number {
    const index = Math.floor(this.wallNow() / SLOT_MS);
    if (index > this.newest) {
      const stale = Math.min(this.slots.length, index - this.newest);
      for (let i = 0; i < stale; i++) this.slots[(index - i) % this.slots.length] = 0;
      this.newest = index;
    }
    return index;
  }
}
