import type { Keyset } from '../../shared/pagination.js';
import type { Transaction } from '../transactions/transaction.js';
import type { SettleableOperation, SettlementTransaction, SettlementTransfer, StoredAdjustment, TransferDelta } from './settlement.js';

/** Position in a merchant's settleable operations, oldest finalized first. */
export interface ScanPosition {
  finalizedAt: string;
  id: string;
}

export type NewTransfer = Pick<
  SettlementTransfer,
  'id' | 'accountId' | 'currency' | 'acquirer' | 'settlementName' | 'settlementIds' | 'postingDate' | 'acquirerReference' | 'openedAt' | 'updatedAt'
>;

export interface SettlementsRepository {
  // --- the engine's reads (outside any write transaction) ---
  /** Account ids in id order after `after`, every status: a closed account's money still settles. */
  accountIdsAfter(after: string | null, limit: number): Promise<string[]>;
  /**
   * SUCCESS CAPTURE/SALE/REFUND/PAYOUT operations of one account finalized in [from, to], strictly
   * after `after` in (finalizedAt, id) order; `limit` rows at most. Settled ones included: a plain
   * index range scan, whose cost never depends on the planner's idea of the settled table's size
   * (an anti-join planned while that table looked empty turns quadratic as a run fills it).
   */
  settleable(accountId: string, window: { from: string | null; to: string }, after: ScanPosition | null, limit: number): Promise<SettleableOperation[]>;
  /** Which of these operations already have a settlement transaction. */
  settledAmong(operationIds: string[]): Promise<Set<string>>;
  /** Ids of the account's OPEN transfers (left by this run, a concurrent one, or a crashed one). */
  openTransferIds(accountId: string): Promise<string[]>;

  // --- the engine's writes (on the repositories of one store.transaction) ---
  /**
   * Finds and row-locks the account's OPEN transfer in `currency`, creating it from `create()`
   * when there is none (at most one exists: a partial unique index). Concurrent runs share it.
   */
  lockOpenTransfer(accountId: string, currency: string, now: string, create: () => NewTransfer): Promise<SettlementTransfer>;
  /** Row-locks one transfer if it is still OPEN; null when it is READY or gone. */
  lockTransfer(id: string, now: string): Promise<SettlementTransfer | null>;
  /** Inserts the rows whose operation is not settled yet (the claim); returns those inserted. */
  insertTransactions(rows: SettlementTransaction[]): Promise<SettlementTransaction[]>;
  /** Adds sums to a transfer locked in the same transaction. */
  addToTransfer(id: string, delta: TransferDelta, now: string): Promise<void>;
  /** Count and sums of a transfer's rows, from the rows themselves (checked against the running totals). */
  sumTransactions(transferId: string): Promise<TransferDelta>;
  /** OPEN → READY with its transfer-level adjustments and final net; the caller holds the lock. */
  completeTransfer(id: string, patch: { adjustments: StoredAdjustment[]; netAmount: number; createdAt: string }): Promise<SettlementTransfer>;
  /** Deletes an OPEN transfer that has no transactions; the caller holds the lock. */
  deleteEmptyTransfer(id: string): Promise<void>;

  // --- the merchant's reads: READY transfers only ---
  findTransfer(accountId: string, id: string): Promise<SettlementTransfer | null>;
  /** Newest first (createdAt desc, id desc), strictly after `after`. */
  listTransfers(accountId: string, after: Keyset | null, limit: number): Promise<SettlementTransfer[]>;
  /** A transfer's settlement transactions, newest first, each with its transaction. */
  listTransactions(
    transferId: string,
    after: Keyset | null,
    limit: number,
  ): Promise<Array<{ settlementTransaction: SettlementTransaction; transaction: Transaction }>>;
}
