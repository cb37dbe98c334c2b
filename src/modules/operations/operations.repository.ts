/**
 * The storage port of the lifecycle operations. Every method that changes amounts is a single
 * conditional UPDATE on the transaction row, so that the invariants
 *   captured + voided + pending ≤ authorized        (captures and voids in flight: `pending`)
 *   refunded + pendingRefund ≤ captured             (refunds in flight: `pendingRefund`)
 * hold under any concurrency, on SQLite and PostgreSQL alike (on PostgreSQL the UPDATE also
 * takes the row lock, which serializes what follows it in the same database transaction).
 */
import type { Operation, OperationState, OperationType, ExternalStatusCodes } from '../transactions/transaction.js';

export interface ReservationAmounts {
  authorized: number;
  captured: number;
  refunded: number;
  voided: number;
  /** Captures and voids in flight. */
  pending: number;
  /** Refunds in flight. */
  pendingRefund: number;
}

export interface RefundableCapture {
  operation: Operation;
  /** The capture's amount minus its SUCCESS and PROCESSING refunds. */
  refundable: number;
}

export interface OperationOutcome {
  state: OperationState;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  finalizedAt: string;
}

export interface LifecycleRepository {
  /** Reserves `amount` of the uncaptured authorization for a capture or void; false when it does not fit. */
  reserveUncaptured(transactionId: string, amount: number, now: string): Promise<boolean>;
  /** Reserves everything of the uncaptured authorization not yet reserved; returns the amount (0: nothing left). */
  reserveAllUncaptured(transactionId: string, now: string): Promise<number>;
  /** Reserves `amount` of the captured, not yet refunded funds; false when it does not fit. */
  reserveRefund(transactionId: string, amount: number, now: string): Promise<boolean>;
  /** Touches the row while it is SUCCESS with an uncaptured balance (renew's guard); false otherwise. */
  lockIfUncaptured(transactionId: string, now: string): Promise<boolean>;
  amounts(transactionId: string): Promise<ReservationAmounts | null>;
  /** SUCCESS captures (and sales) with what each still has to refund, newest first. */
  refundableCaptures(transactionId: string): Promise<RefundableCapture[]>;
  findOperation(id: string): Promise<Operation | null>;
  /** PROCESSING → outcome.state, only while still PROCESSING (exactly one finalizer wins). */
  finalizeOperation(id: string, outcome: OperationOutcome): Promise<boolean>;
  /** Moves a finalized operation's reservation into the settled aggregate (approved) or releases it. */
  settle(transactionId: string, type: OperationType, amount: number, approved: boolean, now: string): Promise<void>;
}
