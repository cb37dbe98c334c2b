import type { AcquirerAgreement, NewAcquirerAgreement } from './acquirer-agreement.js';

/** Storage port of acquirer agreements (implemented in src/storage/repositories/acquirer-agreements.ts). */
export interface AcquirerAgreementsRepository {
  /** The account's current agreement (removedAt null), or null. */
  current(accountId: string): Promise<AcquirerAgreement | null>;
  /** Any row by id, removed ones included (a transaction's captures and refunds use the row that authorized it). */
  findById(id: string): Promise<AcquirerAgreement | null>;
  /**
   * Marks the current row removed at `at` and writes `row` as the new current one, keeping the
   * current row's createdAt (else `at`). Two statements (three on PostgreSQL, which locks the
   * account row first so that two PUTs of one account follow each other): call it inside one
   * store transaction so that they commit together. Returns the new row.
   */
  replace(accountId: string, row: NewAcquirerAgreement, at: string): Promise<AcquirerAgreement>;
  /** Marks the current row removed at `at` (one statement); returns it, or null when the account had none. */
  remove(accountId: string, at: string): Promise<AcquirerAgreement | null>;
}
