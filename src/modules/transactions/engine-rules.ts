/**
 * The payment engine's rules as plain functions of the records (no I/O), one per question the
 * commit that applies an acquirer answer asks:
 *   settlementDelta  what the answer does to the aggregate columns (reservation ends, money moves in);
 *   reservationDelta what an operation holds while it is in flight;
 *   followUpOf       which operation the answer starts (instant capture, its void, a capture's rest);
 *   eventsOf         which outbox events the commit writes;
 *   callbackDue      whether the commit writes the merchant's callback.
 */
import { aggregatesOf, isFinal, type Operation, type OperationChain, type OperationType, type Transaction } from './transaction.js';
import { operationWire, transactionWire } from './transactions.schemas.js';
import type { AggregateDelta, TransactionResultPatch } from './transactions.repository.js';

/** The operations that decide a transaction's state; the others act on a final (SUCCESS) transaction. */
export const PRIMARY_OPERATIONS = ['AUTHORIZATION', 'SALE', 'PAYOUT'] as const;
export type PrimaryOperation = (typeof PRIMARY_OPERATIONS)[number];
export const isPrimary = (type: OperationType): type is PrimaryOperation => (PRIMARY_OPERATIONS as readonly string[]).includes(type);

/** Events appended to the outbox when an operation of the type succeeds (INTERFACE §8). */
export const SUCCESS_EVENTS: Partial<Record<OperationType, string>> = {
  CAPTURE: 'transaction.captured.v1',
  REFUND: 'transaction.refunded.v1',
  VOID: 'transaction.voided.v1',
  RENEW: 'transaction.renewed.v1',
};

/** The amount an operation reserves while in flight: captures and voids from the uncaptured authorization, refunds from the captured funds. */
export function reservationDelta(type: OperationType, amount: number): AggregateDelta {
  if (type === 'CAPTURE' || type === 'VOID') return { pending: amount };
  if (type === 'REFUND') return { pendingRefund: amount };
  return {};
}

/** The answer to an operation: its reservation ends either way; approved, its money moves into the settled aggregate. */
export function settlementDelta(type: OperationType, amount: number, approved: boolean): AggregateDelta {
  const gain = approved ? amount : 0;
  switch (type) {
    case 'AUTHORIZATION':
      return { authorized: gain };
    case 'SALE':
      return { authorized: gain, captured: gain };
    case 'PAYOUT':
      return { paidOut: gain };
    case 'CAPTURE':
      return { pending: -amount, captured: gain };
    case 'VOID':
      return { pending: -amount, voided: gain };
    case 'REFUND':
      return { pendingRefund: -amount, refunded: gain };
    case 'RENEW':
      return {};
  }
}

/** Two deltas as one statement's. */
export function combined(a: AggregateDelta, b: AggregateDelta): AggregateDelta {
  const out: AggregateDelta = { ...a };
  for (const [key, value] of Object.entries(b) as Array<[keyof AggregateDelta, number]>) out[key] = (out[key] ?? 0) + value;
  return out;
}

/** `tx` as an update with `patch` and `delta` leaves it (what the answer's commit predicts, not reads back). */
export function afterChange(tx: Transaction, patch: TransactionResultPatch, delta: AggregateDelta): Transaction {
  return {
    ...tx,
    ...patch,
    authorizedAmount: tx.authorizedAmount + (delta.authorized ?? 0),
    capturedAmount: tx.capturedAmount + (delta.captured ?? 0),
    voidedAmount: tx.voidedAmount + (delta.voided ?? 0),
    paidOutAmount: tx.paidOutAmount + (delta.paidOut ?? 0),
    refundedAmount: tx.refundedAmount + (delta.refunded ?? 0),
    pendingAmount: tx.pendingAmount + (delta.pending ?? 0),
  };
}

/** The operation an answer starts: a capture of the whole authorization, or a void of what is left uncaptured (`REST`). */
export type FollowUp = { type: 'CAPTURE'; amount: number; chain: OperationChain } | { type: 'VOID'; amount: 'REST'; chain: OperationChain | null } | null;

export function followUpOf(tx: Pick<Transaction, 'instantCapture'>, op: Pick<Operation, 'type' | 'amount' | 'chain'>, approved: boolean): FollowUp {
  // instantCapture VOID / NO_VOID: an approved authorization is captured in full at once.
  if (op.type === 'AUTHORIZATION' && approved && (tx.instantCapture === 'VOID' || tx.instantCapture === 'NO_VOID')) {
    return { type: 'CAPTURE', amount: op.amount, chain: 'INSTANT_CAPTURE' };
  }
  if (op.type !== 'CAPTURE') return null;
  // instantCapture VOID: nothing stays authorized when the capture is declined.
  if (!approved && op.chain === 'INSTANT_CAPTURE' && tx.instantCapture === 'VOID') return { type: 'VOID', amount: 'REST', chain: 'INSTANT_CAPTURE' };
  // A capture with voidRemaining releases the uncaptured rest once it succeeded.
  if (approved && op.chain === 'VOID_REMAINING') return { type: 'VOID', amount: 'REST', chain: null };
  return null;
}

export interface OutboxEvent {
  name: string;
  payload: Record<string, unknown>;
}

/**
 * transaction.success.v1 / failed.v1 in the commit in which a transaction reaches its final state
 * (exactly one per transaction); captured / refunded / voided / renewed when such an operation
 * succeeds, the instant capture's included.
 */
export function eventsOf(after: Transaction, op: Operation, becameFinal: boolean): OutboxEvent[] {
  const events: OutboxEvent[] = [];
  const name = op.state === 'SUCCESS' ? SUCCESS_EVENTS[op.type] : undefined;
  if (name) events.push({ name, payload: { transaction: transactionWire(after), aggregates: aggregatesOf(after), operation: operationWire(op) } });
  if (becameFinal) events.push(finalEvent(after)!);
  return events;
}

/** The event of a transaction's final state (null while it is not final). */
export function finalEvent(tx: Transaction): OutboxEvent | null {
  const name = tx.state === 'SUCCESS' ? 'transaction.success.v1' : tx.state === 'FAILED' ? 'transaction.failed.v1' : null;
  return name ? { name, payload: { transaction: transactionWire(tx), aggregates: aggregatesOf(tx) } } : null;
}

/**
 * The callback goes once per final state, when nothing the answer started is still in flight: when
 * the transaction became final, or when the instant-capture chain that followed it ended.
 */
export function callbackDue(after: Transaction, op: Pick<Operation, 'chain'>, becameFinal: boolean, followed: boolean): boolean {
  if (followed || !after.notificationUrl || !isFinal(after.state)) return false;
  return becameFinal || op.chain === 'INSTANT_CAPTURE';
}
