/**
 * Writes new operations (with their new transactions) and their drive jobs — the engine's record
 * step — in as few statements as the database allows: on PostgreSQL one statement (data-modifying
 * CTEs: one round trip instead of three), on SQLite one per table (statements cost no round trip
 * there). Run inside the caller's transaction, with the flow's own writes.
 */
import type { Kysely } from 'kysely';
import type { NewJob } from '../../jobs/job.js';
import type { Operation } from '../../modules/transactions/transaction.js';
import type { NewTransaction, PaymentRecords } from '../../modules/transactions/transactions.repository.js';
import type { Dialect } from '../connect.js';
import type { Database } from '../schema.js';
import { bulkInsert, insertRows, runBulk } from '../bulk-insert.js';
import { joinableText } from '../postgres/write-combining.js';
import { type EnqueueNotice, insertJobRow, type JobPlacer, type JobRow, noticeQueued, placeJobs, queueEveryJob } from './jobs.js';
import { insertOperationRow, insertTransactionRow, operationRow, transactionRow } from './transactions.js';

/** PostgreSQL's limit of parameters in one statement is 65 535. */
const ONE_STATEMENT_PARAMETERS = 65_535;

/**
 * The statement of data-modifying CTEs made of `parts` (bulk-insert texts, cached per shape and row
 * count, so the same objects come back): built once per combination, so that a payment's record is
 * not a new string to build and hash each time (and its prepared statement is found at once).
 */
const combined = new Map<string, Map<string, Map<string, string>>>();
function recordText(operations: string, transactions: string, jobs: string): string {
  let byTransactions = combined.get(operations);
  if (!byTransactions) {
    if (combined.size >= 64) combined.clear();
    combined.set(operations, (byTransactions = new Map()));
  }
  let byJobs = byTransactions.get(transactions);
  if (!byJobs) byTransactions.set(transactions, (byJobs = new Map()));
  let text = byJobs.get(jobs);
  if (text === undefined) {
    const ctes = [`"recorded_operations" as (${operations})`, ...(transactions ? [`"recorded_transactions" as (${transactions})`] : [])];
    // Held (postgres/write-combining.ts): a record that is its commit's only statement goes without BEGIN
    // and COMMIT, and with the other records of the turn that are theirs (new rows only).
    text = joinableText(`with ${ctes.join(', ')} ${jobs}`);
    if (byJobs.size >= 64) byJobs.clear();
    byJobs.set(jobs, text);
  }
  return text;
}

export class KyselyPaymentRecords implements PaymentRecords {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly now: () => number,
    private readonly onEnqueue: EnqueueNotice,
    private readonly placer: JobPlacer = queueEveryJob,
  ) {}

  async record(transactions: NewTransaction[], operations: Operation[], jobs: NewJob[]): Promise<void> {
    const now = this.now();
    const { rows: jobRows, queued } = placeJobs(this.placer, jobs, now);
    if (this.dialect === 'postgres' && operations.length > 0 && (await this.recordInOneStatement(transactions, operations, jobRows))) {
      // Done: one statement.
    } else if (transactions.length <= 1 && operations.length <= 1 && jobs.length <= 1) {
      // One payment (an MIT, a capture): statements compiled once (query-template.ts).
      if (transactions[0]) await insertTransactionRow.execute(this.db, transactionRow(transactions[0]));
      if (operations[0]) await insertOperationRow.execute(this.db, operationRow(operations[0]));
      if (jobRows[0]) await insertJobRow.execute(this.db, jobRows[0]);
    } else {
      await insertRows(this.db, 'transactions', transactions.map(transactionRow));
      await insertRows(this.db, 'operations', operations.map(operationRow));
      await insertRows(this.db, 'jobs', jobRows, 'dedupeKey');
    }
    // Drive jobs handed to this process's runner start after the commit; the others wait for a claim.
    noticeQueued(queued, this.onEnqueue);
  }

  /**
   * PostgreSQL, one payment or many: operations, transactions and jobs in one statement of data-modifying
   * CTEs (foreign keys are checked at its end: the operations may name the transactions inserted
   * with them). False, with nothing sent, when they do not fit in one statement.
   */
  private async recordInOneStatement(transactions: NewTransaction[], operations: Operation[], jobRows: JobRow[]): Promise<boolean> {
    if (jobRows.length === 0) return false;
    const ops = bulkInsert(this.db, 'operations', operations.map(operationRow));
    if (!ops || ops.parameters.length > ONE_STATEMENT_PARAMETERS) return false;
    let next = ops.parameters.length + 1;
    const txs = transactions.length > 0 ? bulkInsert(this.db, 'transactions', transactions.map(transactionRow), { firstParameter: next }) : null;
    if (transactions.length > 0 && !txs) return false;
    next += txs?.parameters.length ?? 0;
    const jobs = bulkInsert(this.db, 'jobs', jobRows, { conflictColumn: 'dedupeKey', firstParameter: next });
    if (!jobs || next - 1 + jobs.parameters.length > ONE_STATEMENT_PARAMETERS) return false;
    await runBulk(this.db, {
      sql: recordText(ops.sql, txs?.sql ?? '', jobs.sql),
      parameters: txs ? ops.parameters.concat(txs.parameters, jobs.parameters) : ops.parameters.concat(jobs.parameters),
    });
    return true;
  }
}
