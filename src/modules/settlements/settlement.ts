/**
 * Settlement entities. A transfer is OPEN while settlement runs add transactions to it (never
 * visible to the merchant) and READY once completed; READY is final.
 *
 *   OPEN --add batch (totals += batch sums, same commit)--> OPEN
 *   OPEN --complete (≥ 1 transaction; event in the same commit)--> READY
 *   OPEN --complete with 0 transactions--> deleted (a run with nothing new makes no transfer)
 */
import type { TransferAdjustmentType, SettledOperationType } from './fees.js';

export const TRANSFER_STATES = ['OPEN', 'READY'] as const;
export type TransferState = (typeof TRANSFER_STATES)[number];

export const TRANSFER_READY_EVENT = 'settlement.transfer-ready.v1';

export interface StoredAdjustment<T extends string = string> {
  type: T;
  /** Minor units, negative for a deduction. */
  amount: number;
  description: string;
}

export interface SettlementTransfer {
  id: string;
  accountId: string;
  currency: string;
  state: TransferState;
  acquirer: string;
  settlementName: string;
  /** Acquirer merchant ids (agreement ids) of the transfer's transactions. */
  settlementIds: string[];
  postingDate: string;
  acquirerReference: string;
  transactionsCount: number;
  grossAmount: number;
  acquirerFeeAmount: number;
  interchangeFeeAmount: number;
  schemeFeeAmount: number;
  transactionsNetAmount: number;
  adjustments: Array<StoredAdjustment<TransferAdjustmentType>>;
  netAmount: number;
  openedAt: string;
  updatedAt: string;
  /** When it became READY; null while OPEN. */
  createdAt: string | null;
}

export interface SettlementTransaction {
  id: string;
  settlementTransferId: string;
  accountId: string;
  operationId: string;
  operationType: SettledOperationType;
  transactionId: string;
  agreementId: string;
  merchantReference: string | null;
  acquirerReference: string | null;
  postingDate: string;
  currency: string;
  grossAmount: number;
  acquirerFee: number;
  interchangeFee: number;
  schemeFee: number;
  netAmount: number;
  createdAt: string;
}

/** A SUCCESS operation not yet settled, with what its settlement row needs of its transaction. */
export interface SettleableOperation {
  operationId: string;
  accountId: string;
  transactionId: string;
  type: SettledOperationType;
  amount: number;
  currency: string;
  finalizedAt: string;
  acquirerReference: string | null;
  merchantReference: string | null;
}

/** Sums added to a transfer in the commit that adds the transactions they come from. */
export interface TransferDelta {
  count: number;
  gross: bigint;
  acquirerFee: bigint;
  interchangeFee: bigint;
  schemeFee: bigint;
  net: bigint;
}

/** bigint → number for a money column; amounts stay far below 2^53, anything else is a defect. */
export function moneyNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`amount out of range: ${value}`);
  return Number(value);
}
