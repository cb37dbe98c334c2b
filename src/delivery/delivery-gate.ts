/**
 * The delivery gate: bounds how many callback and webhook deliveries run at once per merchant and
 * per destination (host and port), so that one merchant's slow or dead receiver holds a bounded
 * share of the runner's delivery lane (jobs/lanes.ts) and cannot delay other merchants' deliveries
 * (issue 9, point 5).
 *
 * - A delivery that finds its merchant or its destination at the bound waits in this process for
 *   a slot, briefly (at most `maxWaitMs`, and at most `waitingPerKey` deliveries per key; never for
 *   a destination marked slow): a fast receiver's burst then costs no database round trip — a
 *   deferral costs a claim, a read and an update (issue 10: 2.7 deferrals per callback under load
 *   before this). A waiting delivery holds its runner slot, hence the bounds.
 * - Past those bounds the delivery does not wait: the gate throws `Deferred`, and the runner puts
 *   the job back in the queue a little later without counting an attempt. The delay is jittered and grows with
 *   each round of deferrals while the same key stays full (250 ms doubling up to 10 s, ×0.5–1.5;
 *   jobs deferred in one burst share a round), and starts short again as soon
 *   as a delivery on that key ends quickly — so a busy but fast receiver loses little, and the
 *   hundreds of queued jobs of a hung one are not claimed and put back several times a second
 *   (which would cost the database and this process what the other merchants need).
 * - A destination where an attempt took half the timeout or more (2.5 s of 5 s: a timeout, a
 *   receiver that holds requests) is "slow" for the next 5 s: only 2 deliveries to it at once,
 *   instead of 16, until one ends quickly. Its queued jobs defer instead of each taking a slot for
 *   5 s; the deliveries under way keep running (the timeout bounds them).
 * - Counters are taken and given back around the send itself, in `finally`: whatever the send
 *   does (answer, timeout, throw), the key is released, so a deferral can never wait for a slot
 *   that nobody will give back.
 *
 * Callbacks and webhook deliveries share one gate (services.ts): the bounds cover both together.
 * The counters live in this process: with several processes, each bound holds per process.
 */
import { Deferred } from '../jobs/job.js';

export const DELIVERY_GATE_DEFAULTS = {
  /**
   * Deliveries of one merchant at once (all its destinations, callbacks and webhooks together): half
   * of the 64 slots of the runner's delivery lane (jobs/lanes.ts), three quarters with its 16
   * waiting. The bound is a bandwidth-delay product: a merchant's callbacks can go no faster than it
   * divided by the round trip, which is the network's plus the event loop's under load. At 8 (then
   * 16) one merchant's fast receiver was capped near 400 (then ~800) MITs/s on this 2-core box, most
   * callbacks going back to the queue once before being sent; a receiver 50 ms away would be capped
   * at 320/s. A slow receiver holds only 2 slots once marked (perSlowDestination). Bench mit c,
   * SQLite, one merchant, 16 → 32: 820/s sustained with answer → callback p99 691 ms → 890/s with
   * p99 77 ms; with drives and deliveries in one pool of slots, billing lost 5–7 % at 32.
   */
  perMerchant: 32,
  /** Deliveries to one host:port at once (all merchants together). */
  perDestination: 32,
  /** Deliveries at once to a destination marked slow. */
  perSlowDestination: 2,
  /** An attempt that lasts this long marks its destination slow (half the 5 s timeout). */
  slowAfterMs: 2_500,
  /** How long the slow mark lasts after the last slow attempt ended. */
  slowForMs: 5_000,
  /** First deferral delay on a full key; doubles per deferral on the same key, up to maxDeferMs. */
  deferMs: 250,
  maxDeferMs: 10_000,
  /** Deliveries that may wait in this process for a slot of one full key (merchant or destination); 0: none wait. */
  waitingPerKey: 16,
  /** Longest such wait; then the delivery is deferred. */
  maxWaitMs: 1_000,
} as const;

export type DeliveryGateOptions = Partial<Record<keyof typeof DELIVERY_GATE_DEFAULTS, number>> & {
  /** Monotonic time in ms (durations and slow marks; not service time). */
  now?: () => number;
  /** In [0, 1): the jitter. */
  random?: () => number;
};

export interface DeliveryTarget {
  /** The merchant (account id). */
  merchant: string;
  /** The URL delivered to: its host and port are the destination. */
  url: string;
}

interface Counter {
  inFlight: number;
  /** Rounds of deferrals on this key since a delivery on it last ended quickly: the deferral delay's exponent. */
  level: number;
  /** Destinations: slow until then (0: not slow). */
  slowUntil: number;
  /** When the deferral level last went up. */
  lastDeferAt: number;
  /** Deliveries waiting in `run` for a slot of this key. */
  waiting: number;
}

interface Waiter {
  merchant: string;
  destination: string;
  wake: () => void;
}

/** host:port of a URL (the scheme's default port when none is given); the URL itself when it does not parse. */
export function destinationOf(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '');
    return `${parsed.hostname}:${port}`;
  } catch {
    return url;
  }
}

export class DeliveryGate {
  private readonly limits: Required<Omit<DeliveryGateOptions, 'now' | 'random'>>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly merchants = new Map<string, Counter>();
  private readonly destinations = new Map<string, Counter>();
  private readonly waiters = new Set<Waiter>();
  private deferrals = 0;

  constructor(options: DeliveryGateOptions = {}) {
    const { now, random, ...limits } = options;
    this.limits = { ...DELIVERY_GATE_DEFAULTS, ...limits };
    this.now = now ?? (() => performance.now());
    this.random = random ?? Math.random;
  }

  /**
   * Throws Deferred when the merchant (or, given a URL, the destination) is at its bound: a cheap
   * check a delivery makes before its reads, so that a job put back costs little. Takes no slot:
   * `run` checks again and takes them.
   */
  check(target: { merchant: string; url?: string | null }): void {
    const now = this.now();
    const merchant = this.merchants.get(target.merchant);
    if (merchant && merchant.inFlight >= this.limits.perMerchant && merchant.waiting >= this.limits.waitingPerKey) {
      throw this.deferral(merchant, `merchant ${target.merchant}`);
    }
    if (!target.url) return;
    const destination = destinationOf(target.url);
    const dest = this.destinations.get(destination);
    if (dest && this.destinationFull(dest, now) && (dest.slowUntil > now || dest.waiting >= this.limits.waitingPerKey)) {
      throw this.deferral(dest, `${dest.slowUntil > now ? 'slow ' : ''}destination ${destination}`);
    }
  }

  /** Runs `send` holding a slot of the merchant and of the destination; throws Deferred (nothing sent) when either is full. */
  async run<T>(target: DeliveryTarget, send: () => Promise<T>): Promise<T> {
    const destination = destinationOf(target.url);
    let started = this.now();
    let merchant = this.counter(this.merchants, target.merchant, started);
    let dest = this.counter(this.destinations, destination, started);
    // Made only when a key is full: most deliveries find a slot at once.
    let wait: SlotWait | null = null;
    try {
      for (;;) {
        const merchantFull = merchant.inFlight >= this.limits.perMerchant;
        const destFull = this.destinationFull(dest, started);
        if (!merchantFull && !destFull) break;
        const slow = dest.slowUntil > started;
        if (slow || wait?.timedOut || merchant.waiting >= this.limits.waitingPerKey || dest.waiting >= this.limits.waitingPerKey) {
          this.forget(this.merchants, target.merchant, merchant, started);
          this.forget(this.destinations, destination, dest, started);
          throw merchantFull ? this.deferral(merchant, `merchant ${target.merchant}`) : this.deferral(dest, `${slow ? 'slow ' : ''}destination ${destination}`);
        }
        wait ??= new SlotWait(this.waiters, target.merchant, destination, this.limits.maxWaitMs);
        merchant.waiting++;
        dest.waiting++;
        try {
          await wait.next();
        } finally {
          merchant.waiting--;
          dest.waiting--;
        }
        started = this.now();
        merchant = this.counter(this.merchants, target.merchant, started);
        dest = this.counter(this.destinations, destination, started);
      }
    } finally {
      wait?.end();
    }
    merchant.inFlight++;
    dest.inFlight++;
    try {
      return await send();
    } finally {
      const ended = this.now();
      merchant.inFlight--;
      dest.inFlight--;
      if (ended - started >= this.limits.slowAfterMs) {
        dest.slowUntil = Math.max(dest.slowUntil, ended + this.limits.slowForMs);
      } else {
        // A quick delivery: the destination answers again, and both keys' deferrals start short.
        dest.slowUntil = 0;
        dest.level = 0;
        merchant.level = 0;
      }
      this.forget(this.merchants, target.merchant, merchant, ended);
      this.forget(this.destinations, destination, dest, ended);
      // A slot of both keys is free: whoever waits on either looks again (one of them gets it).
      for (const waiter of this.waiters) if (waiter.merchant === target.merchant || waiter.destination === destination) waiter.wake();
    }
  }

  /** For operators and tests: deferrals so far, deliveries under way, destinations marked slow now. */
  stats(): { deferrals: number; inFlight: number; waiting: number; slowDestinations: string[] } {
    const now = this.now();
    let inFlight = 0;
    for (const counter of this.merchants.values()) inFlight += counter.inFlight;
    return {
      deferrals: this.deferrals,
      inFlight,
      waiting: this.waiters.size,
      slowDestinations: [...this.destinations].filter(([, c]) => c.slowUntil > now).map(([key]) => key),
    };
  }

  private destinationFull(dest: Counter, now: number): boolean {
    return dest.inFlight >= (dest.slowUntil > now ? this.limits.perSlowDestination : this.limits.perDestination);
  }

  private counter(map: Map<string, Counter>, key: string, now: number): Counter {
    let counter = map.get(key);
    if (!counter) {
      // Keys are forgotten when idle (see forget); a large map means many keys still marked slow.
      if (map.size >= 10_000) this.sweep(map, now);
      map.set(key, (counter = { inFlight: 0, level: 0, slowUntil: 0, lastDeferAt: -Infinity, waiting: 0 }));
    }
    return counter;
  }

  /** Drops an idle key that is not marked slow: its next delivery starts from a fresh counter. */
  private forget(map: Map<string, Counter>, key: string, counter: Counter, now: number): void {
    if (counter.inFlight === 0 && counter.waiting === 0 && counter.slowUntil <= now && map.get(key) === counter) map.delete(key);
  }

  private sweep(map: Map<string, Counter>, now: number): void {
    for (const [key, counter] of map) if (counter.inFlight === 0 && counter.waiting === 0 && counter.slowUntil <= now) map.delete(key);
  }

  private deferral(counter: Counter, what: string): Deferred {
    this.deferrals++;
    const now = this.now();
    const roundDelay = (rounds: number) => Math.min(this.limits.maxDeferMs, this.limits.deferMs * 2 ** Math.min(Math.max(0, rounds - 1), 20));
    // `level` counts rounds of deferrals, not deferrals: a burst of jobs deferred in the same
    // instant all come back after the same short delay, instead of the last of them after 10 s.
    if (counter.level === 0 || now - counter.lastDeferAt >= roundDelay(counter.level) / 2) {
      counter.level++;
      counter.lastDeferAt = now;
    }
    const delayMs = Math.round(roundDelay(counter.level) * (0.5 + this.random()));
    return new Deferred(`delivery gate: ${what} at its bound; again in ${delayMs} ms`, delayMs);
  }
}

/**
 * One delivery's wait for a slot: `next()` resolves when a slot of its merchant or destination is
 * given back, or when `maxWaitMs` (real time, from the first wait) has passed (`timedOut`).
 */
class SlotWait {
  timedOut = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly waiter: Waiter;

  constructor(
    private readonly waiters: Set<Waiter>,
    merchant: string,
    destination: string,
    private readonly maxWaitMs: number,
  ) {
    this.waiter = { merchant, destination, wake: () => undefined };
  }

  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiter.wake = () => {
        this.waiters.delete(this.waiter);
        resolve();
      };
      this.waiters.add(this.waiter);
      this.timer ??= setTimeout(() => {
        this.timedOut = true;
        this.waiter.wake();
      }, this.maxWaitMs);
    });
  }

  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.waiters.delete(this.waiter);
  }
}
