/**
 * Payments in doubt (INTERFACE §12.4): a capture, refund or payout whose request may have reached
 * an acquirer that takes no request twice, and whose answer never came. The engine never sends it
 * again; the operator checks with the acquirer and says what happened, which the engine applies
 * as the acquirer's answer would have been (final state, callback, events, in one commit).
 */
import { notFound } from '../../shared/errors.js';
import type { AcquirerRequest, InDoubtResolution } from '../transactions/acquirer-requests.repository.js';
import type { PaymentEngine, PipelineRepos } from '../transactions/payment-engine.js';
import type { Operation, Transaction } from '../transactions/transaction.js';

export class InDoubtService<R extends PipelineRepos> {
  constructor(private readonly deps: { payments: PaymentEngine<R> }) {}

  /** Oldest first, at most `limit`; of one account when given. */
  list(limit: number, accountId?: string): Promise<AcquirerRequest[]> {
    return this.deps.payments.listInDoubt(limit, accountId);
  }

  /** Applies the operator's finding; 404 when the operation is not (or no longer) in doubt. */
  async resolve(operationId: string, resolution: InDoubtResolution): Promise<{ operation: Operation; transaction: Transaction | null }> {
    const result = await this.deps.payments.resolveInDoubt(operationId, resolution);
    if (result.outcome !== 'answered') throw notFound('operation in doubt');
    return { operation: result.operation, transaction: result.transaction };
  }
}
