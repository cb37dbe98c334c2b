/**
 * The job runner's lanes: one JobRunner per lane (job.ts JobLane), each with slots, claims and
 * handoffs of its own. Deliveries wait on merchants' receivers; payment work (drives, billing,
 * sessions) waits on the acquirer and the database. In one pool of slots, raising the delivery
 * gate's per-merchant bound let deliveries take the slots billing's drives needed (SQLite billing
 * bench 716/696 → 677/633 charges/s at 32); apart, neither lane's backlog takes the other's slots or
 * stops its handoffs (a runner hands a new job over only once its queue is claimed to the end).
 */
import type { JobLane, JobHandoff, LocalLease } from './job.js';
import { JobRunner, type RunnerOptions } from './runner.js';

/** Payments first: drain() answers payments before it delivers what they caused. */
const LANE_ORDER: readonly JobLane[] = ['payments', 'deliveries'];

export class JobLanes implements JobHandoff {
  private readonly runners: JobRunner[] = [];
  private readonly runnerOfKind = new Map<string, JobRunner>();

  /** A runner for each lane that `options.definitions` use, each with `options.concurrency` slots. */
  constructor(options: RunnerOptions) {
    for (const lane of LANE_ORDER) {
      const definitions = options.definitions.filter((definition) => (definition.lane ?? 'payments') === lane);
      if (definitions.length === 0) continue;
      const runner = new JobRunner({ ...options, definitions });
      this.runners.push(runner);
      for (const definition of definitions) this.runnerOfKind.set(definition.kind, runner);
    }
  }

  start(): void {
    for (const runner of this.runners) runner.start();
  }

  async stop(timeoutMs?: number): Promise<void> {
    await Promise.all(this.runners.map((runner) => runner.stop(timeoutMs)));
  }

  /** Jobs of `kind` were queued (its lane looks), or time moved (every lane looks). */
  notify(dueAt?: number, kind?: string): void {
    const runner = kind === undefined ? undefined : this.runnerOfKind.get(kind);
    if (runner) runner.notify(dueAt);
    else for (const each of this.runners) each.notify(dueAt);
  }

  /** The runner of `kind`'s lane. */
  runnerOf(kind: string): JobRunner | undefined {
    return this.runnerOfKind.get(kind);
  }

  take(kind: string): LocalLease | null {
    return this.runnerOfKind.get(kind)?.take(kind) ?? null;
  }

  remember(jobId: string, kind: string, known: unknown): void {
    this.runnerOfKind.get(kind)?.remember(jobId, kind, known);
  }

  /** Runs every due job of every lane until none is left (a job may queue one in another lane). */
  async drain(maxRounds = 1000): Promise<number> {
    let total = 0;
    for (let round = 0; round < maxRounds; round++) {
      let ran = 0;
      for (const runner of this.runners) ran += await runner.drain(maxRounds);
      if (ran === 0) break;
      total += ran;
    }
    return total;
  }
}
