/**
 * The planner statistics of the job queue's and the payment tables on PostgreSQL, kept fresh by the
 * service itself.
 *
 * The claim (repositories/jobs.ts) must walk `jobs_due` in order and stop at its limit. With
 * statistics taken while the table was small — or never: autovacuum may be off, and it comes round
 * once a minute at best while a burst (a fan-out, a billing run, batches) queues thousands of jobs
 * a second — PostgreSQL expects a handful of due jobs, and plans a bitmap scan of every one of them
 * and a sort instead. Measured with 91 000 queued webhook deliveries: 190 ms per claim (the sort
 * spilling to disk) against 6 ms once the table was analyzed.
 *
 * The payment tables likewise: with statistics taken before a day of payments, a capture's read
 * (the transaction with its SUCCESS authorization, selectWithPrimaryOperation) is planned as a
 * bitmap of operations_transaction AND'ed with one of operations_final — every final operation of
 * every account, read at each capture. Measured with the capture's own three statements replayed
 * at 10 connections after 3 000 captures: 771 captures/s, 916/s once analyzed (the read 0.52 →
 * 0.08 ms in the server).
 *
 * So every CHECK_INTERVAL_MS one catalogue read compares, for each table of KEPT_TABLES, the rows
 * changed since its last ANALYZE with its size, as autovacuum would (a threshold plus a share of the
 * rows), and analyzes the tables past it. ANALYZE reads a sample (30 000 rows at most) and does not
 * block writes. The timer does not keep the process alive, and one check runs at a time. Its
 * statements are not counted (statement-counter.ts: UNCOUNTED).
 */
import { UNCOUNTED } from '../statement-counter.js';

const KEPT_TABLES = ['jobs', 'operations', 'transactions'];

const CHECK_INTERVAL_MS = 10_000;
/** Rows changed since the last ANALYZE, beyond ANALYZE_SCALE × the table's rows, that call for another. */
export const ANALYZE_THRESHOLD = 1_000;
const ANALYZE_SCALE = 0.1;

/** What the keeper needs of a connection pool: one query at a time, in the service's schema. */
export type Query = (sql: string, parameters: unknown[]) => Promise<{ rows: unknown[] }>;

interface TableChanges {
  table: string;
  changed: number;
  /** Estimated rows; -1 when the table was never analyzed or vacuumed. */
  rows: number;
}

/** Whether `t` changed enough since its last ANALYZE to need another (autovacuum's rule). */
export function needsAnalyze(t: TableChanges): boolean {
  return t.changed > ANALYZE_THRESHOLD + ANALYZE_SCALE * Math.max(t.rows, 0);
}

export class PgStatisticsKeeper {
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<string[]> | null = null;

  constructor(private readonly query: Query) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => undefined), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the timer and waits for a check under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking?.catch(() => undefined);
  }

  /** One check (or the one under way): the tables it analyzed. A table not created yet is skipped. */
  check(): Promise<string[]> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkOnce(): Promise<string[]> {
    const { rows } = await this.query(
      `${UNCOUNTED}select c.relname as "table", s.n_mod_since_analyze::float8 as changed, c.reltuples::float8 as rows
       from unnest($1::text[]) as t(name)
       join pg_class c on c.oid = to_regclass(t.name)
       join pg_stat_user_tables s on s.relid = c.oid`,
      [KEPT_TABLES],
    );
    const analyzed: string[] = [];
    for (const table of rows as TableChanges[]) {
      if (!needsAnalyze(table)) continue;
      // A name of KEPT_TABLES: an identifier of ours.
      await this.query(`${UNCOUNTED}analyze "${table.table}"`, []);
      analyzed.push(table.table);
    }
    return analyzed;
  }
}
