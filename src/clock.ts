/**
 * The one clock. Everything scheduled (jobs, expiries, billing, settlement dates, token lifetimes)
 * reads time from here. In sandbox mode the clock can be moved forward; the offset is kept in the
 * database so that every process of a deployment, and a restart, sees the same time.
 */
/**
 * The latest instant the sandbox clock may reach: far enough for any test of schedules, and a
 * thousand years short of the four-digit years that RFC 3339 dates (and the stores) can hold, so
 * that anything scheduled from it still has a valid date.
 */
export const LATEST_SERVICE_TIME_MS = Date.parse('9000-01-01T00:00:00.000Z');

export interface Clock {
  /** Milliseconds since the epoch, service time. */
  now(): number;
  /** ISO string of now(). */
  nowIso(): string;
}

/**
 * Wall-clock time, for liveness only (job leases): a process's lease must not run out because the
 * sandbox moved service time, or a job still running would be handed to a second worker.
 */
export const wallClock = (): number => Date.now();

export interface ClockStore {
  loadOffsetMs(): Promise<number>;
  saveOffsetMs(offsetMs: number): Promise<void>;
}

type Listener = () => void;

export class ServiceClock implements Clock {
  private offsetMs = 0;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly store: ClockStore | null,
    readonly controllable: boolean,
  ) {}

  async init(): Promise<void> {
    if (this.store && this.controllable) this.offsetMs = await this.store.loadOffsetMs();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Re-reads the shared offset (other processes may have moved it). */
  async refresh(): Promise<void> {
    if (!this.store || !this.controllable) return;
    const offset = await this.store.loadOffsetMs();
    // Only forward: a read that started before a local move must not undo it (service time never goes back).
    if (offset > this.offsetMs) {
      this.offsetMs = offset;
      this.emit();
    }
  }

  /**
   * Re-reads the shared offset every `intervalMs`, so that a move made through another process of
   * the deployment reaches this one's schedulers within that time. Returns a stop function.
   */
  follow(intervalMs: number, onError: (err: unknown) => void, onSuccess: () => void = () => undefined): () => void {
    if (!this.store || !this.controllable) return () => undefined;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.refresh()
        .then(onSuccess, onError)
        .finally(() => (busy = false));
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Moves service time to `targetMs`; never backwards. Returns the new now. */
  async moveTo(targetMs: number): Promise<number> {
    if (!this.controllable) throw new Error('the clock is not controllable outside sandbox mode');
    if (!Number.isFinite(targetMs) || targetMs > LATEST_SERVICE_TIME_MS)
      throw new RangeError(`service time must stay before ${new Date(LATEST_SERVICE_TIME_MS).toISOString()}`);
    const delta = targetMs - this.now();
    if (delta > 0) {
      this.offsetMs += delta;
      await this.store?.saveOffsetMs(this.offsetMs);
      this.emit();
    }
    return this.now();
  }

  advance(seconds: number): Promise<number> {
    return this.moveTo(this.now() + seconds * 1000);
  }

  /** Called whenever service time jumps, so that schedulers look again at what fell due. */
  onJump(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}
