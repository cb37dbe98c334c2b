import { insertRows } from '../bulk-insert.js';
import { deferrable, joinable } from '../postgres/write-combining.js';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { newId } from '../../shared/ids.js';
import type { ClaimTimes, Job, JobHandoff, JobState, JobStore, LocalLease, NewJob } from '../../jobs/job.js';
import type { Dialect } from '../connect.js';
import type { Database, JobsTable } from '../schema.js';
import { keyedTemplates, queryTemplate, type Params } from '../query-template.js';

/**
 * The last two times formatted, kept: the jobs of one commit (a batch's 500) share their
 * timestamps — two of them when they are handed over (now, and the lease's end).
 */
const formatted: Array<{ ms: number; iso: string }> = [
  { ms: Number.NaN, iso: '' },
  { ms: Number.NaN, iso: '' },
];
function iso(ms: number): string {
  const [first, second] = formatted as [{ ms: number; iso: string }, { ms: number; iso: string }];
  if (ms === first.ms) return first.iso;
  if (ms === second.ms) return second.iso;
  // The older one makes way.
  second.ms = first.ms;
  second.iso = first.iso;
  first.ms = ms;
  first.iso = new Date(ms).toISOString();
  return first.iso;
}
const DEFAULT_MAX_ATTEMPTS = 25;

/** A job of its row; a new row (jobRow) has no last error yet. */
export function toJob(
  row: Pick<JobsTable, 'id' | 'kind' | 'payload' | 'state' | 'maxAttempts' | 'runAt' | 'createdAt' | 'updatedAt'> & {
    attempts: number;
    lastError?: string | null;
  },
): Job {
  return {
    id: row.id,
    kind: row.kind,
    payload: JSON.parse(row.payload),
    state: row.state as JobState,
    attempts: row.attempts,
    maxAttempts: row.maxAttempts,
    runAt: row.runAt,
    lastError: row.lastError ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    // Present from the start, set by spreading over it (docs/object-shapes.md).
    known: undefined,
  };
}

/** The row of a new job: queued, or leased to this process's runner from the start (`lease`, JobHandoff) — its first attempt counted as a claim counts it. */
export function jobRow(job: NewJob, now: number, lease?: Pick<LocalLease, 'workerId' | 'leaseUntil'>) {
  return {
    id: newId(),
    kind: job.kind,
    payload: JSON.stringify(job.payload ?? null),
    state: lease ? 'running' : 'queued',
    dedupeKey: job.dedupeKey ?? null,
    runAt: iso(job.runAt ?? now),
    attempts: lease ? 1 : 0,
    maxAttempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    leasedBy: lease?.workerId ?? null,
    leaseUntil: lease ? iso(lease.leaseUntil) : null,
    createdAt: iso(now),
    updatedAt: iso(now),
  };
}

export type JobRow = ReturnType<typeof jobRow>;

/** How a commit writes its new jobs: each row queued, or `handed` to this process's runner (no wake-up needed for it). */
export interface JobPlacer {
  place(job: NewJob, now: number): { row: JobRow; handed: boolean };
}

/** Every job queued: writes outside a transaction (nothing would start them after a commit), or no runner here. */
export const queueEveryJob: JobPlacer = { place: (job, now) => ({ row: jobRow(job, now), handed: false }) };

/**
 * The rows of `jobs`, and per kind when the first of those queued comes due (service time; null: all
 * handed over): the runner's lane of that kind is told after the commit, and wakes then, not before.
 */
export function placeJobs(placer: JobPlacer, jobs: NewJob[], now: number): { rows: JobRow[]; queued: QueuedJobs | null } {
  let queued: QueuedJobs | null = null;
  const rows = jobs.map((job) => {
    const { row, handed } = placer.place(job, now);
    if (!handed) addQueued((queued ??= new Map()), job.kind, job.runAt ?? now);
    return row;
  });
  return { rows, queued };
}

/** Kinds of the jobs a write queued (not handed over), each with the first of them to come due. */
export type QueuedJobs = Map<string, number>;

/** Told when jobs of `kind` were queued, the first of them due at `firstDueAt` (the runner's lane of that kind wakes then). */
export type EnqueueNotice = (firstDueAt: number, kind: string) => void;

/** Jobs of `kind` due at `dueAt` were queued: kept when they come due before those of that kind already noted. */
export function addQueued(queued: QueuedJobs, kind: string, dueAt: number): void {
  queued.set(kind, Math.min(queued.get(kind) ?? Infinity, dueAt));
}

/** `notice` for each kind `queued` holds. */
export function noticeQueued(queued: QueuedJobs | null, notice: EnqueueNotice): void {
  if (queued) for (const [kind, dueAt] of queued) notice(dueAt, kind);
}

/**
 * One commit's placer with a runner here: a due job of a kind it takes (JobHandoff.take) is written
 * leased to it and `afterCommit` starts it; `giveBack` frees the slots of a commit that failed. A
 * job queued instead leaves what its commit wrote with the runner for its first claim (remember).
 */
export function handingPlacer(handoff: JobHandoff, afterCommit: (fn: () => void) => void): JobPlacer & { giveBack(): void } {
  const leases: LocalLease[] = [];
  return {
    place(job, now) {
      const lease = (job.runAt ?? now) <= now ? handoff.take(job.kind) : null;
      if (!lease) {
        const row = jobRow(job, now);
        if (job.known !== undefined) afterCommit(() => handoff.remember(row.id, job.kind, job.known));
        return { row, handed: false };
      }
      const row = jobRow(job, now, lease);
      leases.push(lease);
      const handed = toJob(row);
      afterCommit(() => lease.start(job.known === undefined ? handed : { ...handed, known: job.known }));
      return { row, handed: true };
    },
    giveBack: () => leases.forEach((lease) => lease.cancel()),
  };
}

/** The columns of a job row (jobRow): a template's placeholders, in the order written. */
const jobColumns = (row: Params<JobRow>) => ({
  id: row.id,
  kind: row.kind,
  payload: row.payload,
  state: row.state,
  dedupeKey: row.dedupeKey,
  runAt: row.runAt,
  attempts: row.attempts,
  maxAttempts: row.maxAttempts,
  leasedBy: row.leasedBy,
  leaseUntil: row.leaseUntil,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** One new job (jobRow), ignored when its dedupe key is taken: compiled once (query-template.ts). */
export const insertJobRow = queryTemplate((db: Kysely<Database>, row: Params<JobRow>) =>
  // Deferrable: a new row, its result unused (on PostgreSQL sent with the commit's other writes,
  // postgres/write-combining.ts); joinable: of two with one dedupe key in one statement, one is written.
  joinable(
    db
      .insertInto('jobs')
      .values(jobColumns(row))
      .onConflict((oc) => oc.column('dedupeKey').doNothing()),
  ),
);

// Joinable (postgres/write-combining.ts): the job is under the caller's lease.
const completeJob = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; workerId: string; at: string }>) =>
  joinable(
    db
      .updateTable('jobs')
      .set({ state: 'done', leaseUntil: null, leasedBy: null, finishedAt: p.at, updatedAt: p.at })
      .where('id', '=', p.id)
      .where('leasedBy', '=', p.workerId),
  ),
);

/**
 * The row of a finished job `finished` made the row of the next one (completeAs), a new id
 * included: whatever still names the finished job (its run's settle after the commit, a worker
 * that took its lease over) finds no row.
 */
const continueJob = queryTemplate((db: Kysely<Database>, row: Params<JobRow & { finished: string }>) =>
  // Deferrable: an update by key, its result unused; joinable: the finished job was the caller's (postgres/write-combining.ts).
  joinable(
    db
      .updateTable('jobs')
      .set({ ...jobColumns(row), lastError: null, finishedAt: null })
      .where('id', '=', row.finished),
  ),
);

// Job states in a WHERE are literals (sql.lit) throughout: a bound value compared with the condition
// of a partial index (jobs_due, jobs_leased, ...) makes SQLite prepare the statement again at every
// run, to check the new value against it; a literal is checked once (see findWithPrimaryOperation).
const deferJob = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; workerId: string; runAt: string; at: string }>) =>
  db
    .updateTable('jobs')
    .set((eb) => ({ state: 'queued', runAt: p.runAt, attempts: eb('attempts', '-', 1), leaseUntil: null, leasedBy: null, updatedAt: p.at }))
    .where('id', '=', p.id)
    .where('leasedBy', '=', p.workerId)
    .where('state', '=', sql.lit('running')),
);

// Its result unused: held on PostgreSQL and sent with the commit (postgres/write-combining.ts).
// Joinable: the job is the safety net of the operation whose answer (checked) cancels it.
const cancelQueuedJob = queryTemplate((db: Kysely<Database>, p: Params<{ dedupeKey: string; at: string }>) =>
  joinable(
    db
      .updateTable('jobs')
      .set({ state: 'done', finishedAt: p.at, updatedAt: p.at })
      .where('dedupeKey', '=', p.dedupeKey)
      .where('state', '=', sql.lit('queued')),
  ),
);

/**
 * The claim (see claim), compiled once per dialect and set of kinds (query-template.ts): `kind:<i>`
 * the kinds, `lease:<i>` each kind's lease end and `otherLease` (or one `lease` for all).
 */
function claimStatement(postgres: boolean) {
  return keyedTemplates((db: Kysely<Database>, p: Params<Record<string, unknown>>) => {
    const kinds: unknown[] = [];
    const leases: unknown[] = [];
    for (const key of Object.keys(p)) {
      if (key.startsWith('kind:')) kinds.push(p[key]);
      else if (key.startsWith('lease:')) leases.push(p[key]);
    }
    // Parameters inside CASE have no type of their own on PostgreSQL.
    const typed = (value: unknown) => (postgres ? sql`cast(${value} as timestamptz)` : sql`${value}`);
    // Two index range scans in one statement, instead of one scan under an OR (which sorted every
    // queued job per claim): leases that ran out (jobs_leased, rare: up to `limit` more), then due
    // jobs in run order (jobs_due), stopping after `limit`. The rows are then found by id, from the
    // two lists united: `id IN (…) OR id IN (…)` made PostgreSQL scan the whole table for them (a
    // hashed subplan tested against every row, done jobs kept for 7 days included): 21 ms per claim
    // with 200 000 done jobs, against 0.3 ms this way.
    const candidates = (expired: boolean) => {
      const q = db
        .selectFrom('jobs')
        .select('id')
        .where('kind', 'in', kinds as string[]);
      // The states are literals: SQLite uses a partial index only when the query names its condition.
      const picked = expired
        ? q
            .where('state', '=', sql.lit('running'))
            .where('leaseUntil', '<', p.wallNow as string)
            .orderBy('leaseUntil')
            .limit(p.limit as number)
        : q
            .where('state', '=', sql.lit('queued'))
            .where('runAt', '<=', p.now as string)
            .orderBy('runAt')
            .orderBy('id')
            .limit(p.limit as number);
      return postgres ? picked.forUpdate().skipLocked() : picked;
    };
    return db
      .with('expired', () => candidates(true))
      .with('due', () => candidates(false))
      .updateTable('jobs')
      .set((eb) => ({
        state: 'running',
        leasedBy: p.workerId as string,
        // Each kind's own lease: a crashed worker's short jobs (callbacks) come back soon, long ones (settlement) stay safe.
        leaseUntil:
          'lease' in p
            ? (p.lease as string)
            : sql<string>`case ${sql.join(
                kinds.map((kind, i) => sql`when ${sql.ref('kind')} = ${kind} then ${typed(leases[i])}`),
                sql` `,
              )} else ${typed(p.otherLease)} end`,
        attempts: eb('attempts', '+', 1),
        updatedAt: p.now as string,
      }))
      .where('id', 'in', (eb) => eb.selectFrom('expired').select('id').unionAll(eb.selectFrom('due').select('id')))
      .returningAll();
  });
}
const claimJobs = { sqlite: claimStatement(false), postgres: claimStatement(true) };

type LeaseMs = number | Readonly<Record<string, number>>;

/** The claim statement's parameters (claimStatement's keys). */
function claimParams(workerId: string, at: ClaimTimes, leaseMs: LeaseMs, limit: number, kinds: string[]): Record<string, unknown> {
  const leaseOf = (kind: string) => iso(at.wallNow + (typeof leaseMs === 'number' ? leaseMs : (leaseMs[kind] ?? 30_000)));
  const params: Record<string, unknown> = { workerId, now: iso(at.now), wallNow: iso(at.wallNow), limit };
  kinds.forEach((kind, i) => (params[`kind:${i}`] = kind));
  // One lease for every kind claimed (as the catalogue's are today): no CASE over the kinds, which
  // cost about 15 µs of each claim on SQLite.
  const leases = kinds.map(leaseOf);
  if (leases.every((lease) => lease === leases[0])) params.lease = leases[0] ?? leaseOf('');
  else {
    leases.forEach((lease, i) => (params[`lease:${i}`] = lease));
    params.otherLease = leaseOf('');
  }
  return params;
}

/** The claim as KyselyJobStore.claim sends it, compiled (tests read its query plan). */
export function compileClaim(
  db: Kysely<Database>,
  dialect: Dialect,
  workerId: string,
  at: ClaimTimes,
  leaseMs: LeaseMs,
  limit: number,
  kinds: string[],
): CompiledQuery {
  const { template, params } = claimJobs[dialect].template(claimParams(workerId, at, leaseMs, limit, kinds));
  return template.compile(db, params);
}

export class KyselyJobStore implements JobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly now: () => number,
    /** Told, per kind, when the first queued job comes due, after the commit (a transaction's repositories) or at once. */
    private readonly onEnqueue: EnqueueNotice = () => undefined,
    private readonly placer: JobPlacer = queueEveryJob,
  ) {}

  async enqueue(job: NewJob): Promise<void> {
    await this.enqueueMany([job]);
  }

  async enqueueMany(jobs: NewJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.now();
    const { rows, queued } = placeJobs(this.placer, jobs, now);
    if (rows.length === 1) await insertJobRow.execute(this.db, rows[0]!);
    else await this.insertRows(rows);
    // Jobs handed to this process's runner start after the commit; the others wait for a claim.
    noticeQueued(queued, this.onEnqueue);
  }

  private async insertRows(rows: JobRow[]): Promise<void> {
    await insertRows(this.db, 'jobs', rows, 'dedupeKey');
  }

  async claim(workerId: string, at: ClaimTimes, leaseMs: LeaseMs, limit: number, kinds: string[]): Promise<Job[]> {
    if (kinds.length === 0 || limit <= 0) return [];
    const rows = await claimJobs[this.dialect].execute(this.db, claimParams(workerId, at, leaseMs, limit, kinds));
    return rows.map(toJob);
  }

  async extendLeases(workerId: string, ids: string[], leaseUntil: number): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db
      .updateTable('jobs')
      .set({ leaseUntil: iso(leaseUntil) })
      .where('id', 'in', ids)
      .where('leasedBy', '=', workerId)
      .where('state', '=', sql.lit('running'))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async complete(id: string, workerId: string, nowMs: number): Promise<void> {
    const at = iso(nowMs);
    await completeJob.execute(this.db, { id, workerId, at });
  }

  async completeAs(id: string, nowMs: number, next: NewJob): Promise<void> {
    const { row, handed } = this.placer.place(next, nowMs);
    // By id alone, not by lease: the caller's commit guards that its work is applied once.
    await continueJob.execute(this.db, { ...row, finished: id });
    if (!handed) this.onEnqueue(next.runAt ?? nowMs, next.kind);
  }

  async cancelQueued(dedupeKey: string, nowMs: number): Promise<void> {
    await cancelQueuedJob.execute(this.db, { dedupeKey, at: iso(nowMs) });
  }

  async defer(id: string, workerId: string, runAt: number): Promise<void> {
    // attempts - 1: the claim counted an attempt that did not happen (the 25-attempt limit counts real ones).
    await deferJob.execute(this.db, { id, workerId, runAt: iso(runAt), at: iso(this.now()) });
  }

  async fail(id: string, workerId: string, nowMs: number, error: string, retryAt: number | null): Promise<void> {
    await deferrable(
      this.db
        .updateTable('jobs')
        .set({
          state: retryAt === null ? 'dead' : 'queued',
          runAt: retryAt === null ? iso(nowMs) : iso(retryAt),
          lastError: error,
          leaseUntil: null,
          leasedBy: null,
          updatedAt: iso(nowMs),
          finishedAt: retryAt === null ? iso(nowMs) : null,
        })
        .where('id', '=', id)
        .where('leasedBy', '=', workerId),
    ).execute();
  }

  async releaseLeases(workerId: string, nowMs: number): Promise<number> {
    const result = await this.db
      .updateTable('jobs')
      .set((eb) => ({ state: 'queued', leaseUntil: null, leasedBy: null, attempts: eb('attempts', '-', 1), updatedAt: iso(nowMs) }))
      .where('leasedBy', '=', workerId)
      .where('state', '=', sql.lit('running'))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async nextDueAt(kinds: string[]): Promise<number | null> {
    if (kinds.length === 0) return null;
    const row = await this.db
      .selectFrom('jobs')
      .select('runAt')
      .where('state', '=', sql.lit('queued'))
      .where('kind', 'in', kinds)
      .orderBy('runAt')
      .limit(1)
      .executeTakeFirst();
    return row ? Date.parse(row.runAt) : null;
  }

  async countsByState(): Promise<Array<{ kind: string; state: string; count: number }>> {
    // One query per open state, each on its partial index (finished jobs are kept for 7 days: never scanned).
    const perState = await Promise.all(
      (['queued', 'running', 'dead'] as const).map((state) =>
        this.db
          .selectFrom('jobs')
          .select(['kind', sql<number>`count(*)`.as('count')])
          .where('state', '=', sql.lit(state))
          .groupBy('kind')
          .execute()
          .then((rows) => rows.map((r) => ({ kind: r.kind, state, count: Number(r.count) }))),
      ),
    );
    return perState.flat();
  }

  async countBacklog(nowMs: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    // One statement, two bounded index range scans (the states are literals, so that SQLite uses
    // the partial indexes jobs_due and jobs_leased): it reads at most `limit` entries of each.
    const { rows } = await sql<{ queued: number | string; running: number | string }>`select
        (select count(*) from (select 1 from jobs where state = 'queued' and run_at <= ${iso(nowMs)} limit ${limit}) as due) as queued,
        (select count(*) from (select 1 from jobs where state = 'running' limit ${limit}) as held) as running`.execute(this.db);
    const row = rows[0];
    return row ? Math.min(limit, Number(row.queued) + Number(row.running)) : 0;
  }

  async listDead(limit: number): Promise<Job[]> {
    const rows = await this.db.selectFrom('jobs').selectAll().where('state', '=', sql.lit('dead')).orderBy('updatedAt', 'desc').limit(limit).execute();
    return rows.map(toJob);
  }

  async retryDead(id: string, nowMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set({ state: 'queued', attempts: 0, runAt: iso(nowMs), finishedAt: null, updatedAt: iso(nowMs) })
      .where('id', '=', id)
      .where('state', '=', sql.lit('dead'))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async purgeFinished(beforeMs: number, limit: number): Promise<number> {
    const ids = this.db.selectFrom('jobs').select('id').where('state', '=', sql.lit('done')).where('finishedAt', '<', iso(beforeMs)).limit(limit);
    const result = await this.db.deleteFrom('jobs').where('id', 'in', ids).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
