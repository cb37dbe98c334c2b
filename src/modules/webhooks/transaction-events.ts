/**
 * The outcome events of the payment pipeline (INTERFACE §8): `transaction.success.v1` and
 * `transaction.failed.v1`, appended to the outbox inside the commit in which a transaction
 * reaches its final state — so exactly one per transaction, and only once that state is committed.
 * Registered with the pipeline's result hook (services.ts).
 */
import type { EventOutbox } from '../events/event-outbox.js';
import { aggregatesOf, type Transaction } from '../transactions/transaction.js';
import { transactionWire } from '../transactions/transactions.schemas.js';

export async function appendTransactionOutcome(events: EventOutbox, transaction: Transaction, becameFinal: boolean): Promise<void> {
  if (!becameFinal) return;
  const event = transaction.state === 'SUCCESS' ? 'transaction.success.v1' : transaction.state === 'FAILED' ? 'transaction.failed.v1' : null;
  if (!event) return;
  await events.append(transaction.accountId, event, { transaction: transactionWire(transaction), aggregates: aggregatesOf(transaction) });
}
