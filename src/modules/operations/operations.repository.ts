/**
 * The storage port of the lifecycle flow: what it reads to decide (refundable captures, its
 * operations) and renew's guard. Reservations and their settlement are the payment engine's
 * (one conditional update of the transaction row: transactions.repository.ts, AggregateDelta).
 */
import type { Operation } from '../transactions/transaction.js';

export interface RefundableCapture {
  operation: Operation;
  /** The capture's amount minus its SUCCESS and PROCESSING refunds. */
  refundable: number;
}

export interface LifecycleRepository {
  /** Touches the row while it is SUCCESS with an uncaptured balance (renew's guard); false otherwise. */
  lockIfUncaptured(transactionId: string, now: string): Promise<boolean>;
  /** SUCCESS captures (and sales) with what each still has to refund, newest first. */
  refundableCaptures(transactionId: string): Promise<RefundableCapture[]>;
}
