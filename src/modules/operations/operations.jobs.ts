/**
 * The resolver of PROCESSING lifecycle operations (acquirer timeout, `pending` answer such as a
 * deferred renew, or a process that stopped between the acquirer call and the final commit).
 * Enqueued in the commit that records the operation; a no-op once the operation is final.
 */
import { exponentialBackoff, type JobDefinition, RetryLater, JOB_LEASE_MS } from '../../jobs/job.js';
import { RESOLVE_OPERATION_JOB, RESOLVE_MAX_ATTEMPTS, type OperationsService } from './operations.service.js';

export function resolveOperationJob(service: OperationsService): JobDefinition<{ operationId: string }> {
  return {
    kind: RESOLVE_OPERATION_JOB,
    maxAttempts: RESOLVE_MAX_ATTEMPTS,
    leaseMs: JOB_LEASE_MS,
    backoff: exponentialBackoff(30_000, 3_600_000),
    async handle(payload, ctx) {
      // The synchronous request was attempt 1 at the acquirer; each resolver run asks again.
      if (!(await service.resolve(payload.operationId, ctx.attempt + 1))) {
        throw new RetryLater(`operation ${payload.operationId} still has no final answer from the acquirer`);
      }
    },
  };
}
