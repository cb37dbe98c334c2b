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
import { jobRow } from './jobs.js';
import { operationRow, transactionRow } from './transactions.js';

/** Rows per statement: within SQLite's parameter limit for the widest table (transactions). */
const CHUNK = 200;

export class KyselyPaymentRecords implements PaymentRecords {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly now: () => number,
    private readonly onEnqueue: () => void,
  ) {}

  async record(transactions: NewTransaction[], operations: Operation[], jobs: NewJob[]): Promise<void> {
    const now = this.now();
    if (this.dialect === 'postgres' && transactions.length <= CHUNK && operations.length <= CHUNK && jobs.length <= CHUNK && operations.length > 0) {
      // Foreign keys are checked at the end of the statement: the operations may name the transactions inserted with them.
      const jobsRows = jobs.map((job) => jobRow(job, now));
      const withOperations = this.db.with('recorded_operations', (db) => db.insertInto('operations').values(operations.map(operationRow)));
      if (transactions.length > 0) {
        await withOperations
          .with('recorded_transactions', (db) => db.insertInto('transactions').values(transactions.map(transactionRow)))
          .insertInto('jobs')
          .values(jobsRows)
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      } else {
        await withOperations
          .insertInto('jobs')
          .values(jobsRows)
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      }
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
          .values(jobs.slice(i, i + CHUNK).map((job) => jobRow(job, now)))
          .onConflict((oc) => oc.column('dedupeKey').doNothing())
          .execute();
      }
    }
    if (jobs.length > 0) this.onEnqueue();
  }
}
