/** Jobs of in-person sales: dispatch to the terminal, expiry of an untapped sale (service clock). */
import { exponentialBackoff, type JobDefinition, RetryLater, JOB_LEASE_MS } from '../../jobs/job.js';
import { SALE_DISPATCH_JOB, SALE_EXPIRE_JOB, type SaleRepos, type SalesService } from './sales.service.js';

interface SaleJobPayload {
  transactionId: string;
}

export function saleJobs<R extends SaleRepos>(service: SalesService<R>): JobDefinition<SaleJobPayload>[] {
  return [
    {
      kind: SALE_DISPATCH_JOB,
      maxAttempts: 25,
      leaseMs: JOB_LEASE_MS,
      backoff: exponentialBackoff(250, 30_000),
      handle: (payload) => service.dispatch(payload.transactionId),
    },
    {
      kind: SALE_EXPIRE_JOB,
      maxAttempts: 25,
      leaseMs: JOB_LEASE_MS,
      backoff: exponentialBackoff(1_000, 60_000),
      async handle(payload) {
        const again = await service.expire(payload.transactionId);
        if (again !== null) throw new RetryLater('the sale is not due to expire yet', again);
      },
    },
  ];
}
