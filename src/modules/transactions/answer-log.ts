/** The `payment.answered` line of an applied acquirer answer (shared/events-log.ts): ids and codes only. */
import type { BusinessEvents } from '../../shared/events-log.js';
import type { Operation, Transaction } from './transaction.js';

export function answeredEvent(transaction: Transaction, operation: Operation, followUp: Operation | null): BusinessEvents['payment.answered'] {
  return {
    transactionId: transaction.id,
    accountId: transaction.accountId,
    operationId: operation.id,
    type: operation.type,
    operationState: operation.state,
    state: transaction.state,
    errorCode: operation.errorCode,
    flow: transaction.flow,
    amount: operation.amount,
    currency: transaction.currency,
    ...(followUp ? { followUpOperationId: followUp.id } : {}),
  };
}
