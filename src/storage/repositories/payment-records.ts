/**
 * Writes new operations (with their new transactions) and their drive jobs — the engine's record
 * step — in as few statements as the database allows: on PostgreSQL one statement (data-modifying
 * CTEs: one round trip instead of three), on SQLite one per table (statements cost no round trip
 * there). Run inside the caller's transaction, with the flow's own writes.
 */
import type { Kysely } from 'kysely';
import { keyedTemplates, type Params } from '../query-template.js';
import type { NewJob } from '../../jobs/job.js';
import type { Operation } from '../../modules/transactions/transaction.js';
import type { NewTransaction, PaymentRecords } from '../../modules/transactions/transactions.repository.js';
import type { Dialect } from '../connect.js';
import type { Database } from '../schema.js';
import { insertJobRow, type JobPlacer, placeJobs, queueEveryJob } from './jobs.js';
import { insertOperationRow, insertTransactionRow, operationRow, transactionRow } from './transactions.js';

/** Rows per statement: within SQLite's parameter limit for the widest table (transactions). */
const CHUNK = 200;

/** The columns of `p` named `<prefix><column>`, as a row. */
function rowOf(p: Readonly<Record<string, unknown>>, prefix: string): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const key of Object.keys(p)) if (key.startsWith(prefix)) row[key.slice(prefix.length)] = p[key];
  return row;
}

/**
 * PostgreSQL, one payment: its operation (`o:` columns), its transaction if new (`t:`) and its job
 * (`j:`) in one statement, compiled once per set of columns (query-template.ts).
 */
const recordOne = keyedTemplates((db: Kysely<Database>, p: Params<Record<string, unknown>>) => {
  const withOperations = db.with('recorded_operations', (d) => d.insertInto('operations').values(rowOf(p, 'o:') as never));
  const withRows = (
    't:id' in p ? withOperations.with('recorded_transactions', (d) => d.insertInto('transactions').values(rowOf(p, 't:') as never)) : withOperations
  ) as typeof withOperations;
  return withRows
    .insertInto('jobs')
    .values(rowOf(p, 'j:') as never)
    .onConflict((oc) => oc.column('dedupeKey').doNothing());
});

/** recordOne's parameters. */
function prefixed(rows: Array<[string, object | undefined]>): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const [prefix, row] of rows) if (row) for (const [key, value] of Object.entries(row)) p[prefix + key] = value;
  return p;
}

export class KyselyPaymentRecords implements PaymentRecords {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly now: () => number,
    private readonly onEnqueue: (firstDueAt: number) => void,
    private readonly placer: JobPlacer = queueEveryJob,
  ) {}

  async record(transactions: NewTransaction[], operations: Operation[], jobs: NewJob[]): Promise<void> {
    const now = this.now();
    const { rows: jobRows, firstQueuedAt } = placeJobs(this.placer, jobs, now);
    if (this.dialect === 'postgres' && transactions.length <= 1 && operations.length === 1 && jobs.length === 1) {
      const tx = transactions[0];
      await recordOne.execute(
        this.db,
        prefixed([
          ['o:', operationRow(operations[0]!)],
          ['t:', tx && transactionRow(tx)],
          ['j:', jobRows[0]],
        ]),
      );
    } else if (this.dialect === 'postgres' && transactions.length <= CHUNK && operations.length <= CHUNK && jobs.length <= CHUNK && operations.length > 0) {
      // Foreign keys are checked at the end of the statement: the operations may name the transactions inserted with them.
      const withOperations = this.db.with('recorded_operations', (db) => db.insertInto('operations').values(operations.map(operationRow)));
      if (transactions.length > 0) {
        await withOperations
          .with('recorded_transactions', (db) => db.insertInto('transactions').values(transactions.map(transactionRow)))
          .insertInto('jobs')
          .values(jobRows)
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      } else {
        await withOperations
          .insertInto('jobs')
          .values(jobRows)
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      }
    } else if (transactions.length <= 1 && operations.length <= 1 && jobs.length <= 1) {
      // One payment (an MIT, a capture): statements compiled once (query-template.ts).
      if (transactions[0]) await insertTransactionRow.execute(this.db, transactionRow(transactions[0]));
      if (operations[0]) await insertOperationRow.execute(this.db, operationRow(operations[0]));
      if (jobRows[0]) await insertJobRow.execute(this.db, jobRows[0]);
    } else {
      for (let i = 0; i < transactions.length; i += CHUNK)
        await this.db
          .insertInto('transactions')
          .values(transactions.slice(i, i + CHUNK).map(transactionRow))
          .execute();
      for (let i = 0; i < operations.length; i += CHUNK)
        await this.db
          .insertInto('operations')
          .values(operations.slice(i, i + CHUNK).map(operationRow))
          .execute();
      for (let i = 0; i < jobs.length; i += CHUNK) {
        await this.db
          .insertInto('jobs')
          .values(jobRows.slice(i, i + CHUNK))
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      }
    }
    // Drive jobs handed to this process's runner start after the commit; the others wait for a claim.
    if (firstQueuedAt !== null) this.onEnqueue(firstQueuedAt);
  }
}
