/**
 * The events of the payment pipeline (INTERFACE §8), appended to the outbox inside the commit of
 * the change: `transaction.success.v1` / `transaction.failed.v1` in the commit in which a
 * transaction reaches its final state (exactly one per transaction), and `transaction.captured.v1`
 * / `transaction.voided.v1` for the capture (and void) an instant capture drives — the same events
 * the lifecycle endpoints write. Registered with the pipeline's result hook (services.ts).
 */
import type { EventOutbox } from '../events/event-outbox.js';
import { SUCCESS_EVENTS } from '../operations/lifecycle.js';
import { aggregatesOf, type Operation, type Transaction } from '../transactions/transaction.js';
import { operationWire, transactionWire } from '../transactions/transactions.schemas.js';

export async function appendTransactionOutcome(
  events: EventOutbox,
  transaction: Transaction,
  becameFinal: boolean,
  operation: Operation | null = null,
): Promise<void> {
  if (operation?.state === 'SUCCESS' && (operation.type === 'CAPTURE' || operation.type === 'VOID')) {
    await events.append(transaction.accountId, SUCCESS_EVENTS[operation.type]!, {
      transaction: transactionWire(transaction),
      aggregates: aggregatesOf(transaction),
      operation: operationWire(operation),
    });
  }
  if (!becameFinal) return;
  const event = transaction.state === 'SUCCESS' ? 'transaction.success.v1' : transaction.state === 'FAILED' ? 'transaction.failed.v1' : null;
  if (!event) return;
  await events.append(transaction.accountId, event, { transaction: transactionWire(transaction), aggregates: aggregatesOf(transaction) });
}
