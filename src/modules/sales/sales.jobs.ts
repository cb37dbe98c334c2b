/** Jobs of in-person sales: dispatch to the terminal, expiry of an untapped sale (service clock). */
import { defineJob } from '../../jobs/catalogue.js';
import { type JobDefinition, RetryLater } from '../../jobs/job.js';
import { SALE_DISPATCH_JOB, SALE_EXPIRE_JOB, type SaleRepos, type SalesService } from './sales.service.js';

interface SaleJobPayload {
  transactionId: string;
}

export function saleJobs<R extends SaleRepos>(service: SalesService<R>): JobDefinition<SaleJobPayload>[] {
  return [
    defineJob(SALE_DISPATCH_JOB, (payload) => service.dispatch(payload.transactionId)),
    defineJob(SALE_EXPIRE_JOB, async (payload) => {
      const again = await service.expire(payload.transactionId);
      if (again !== null) throw new RetryLater('the sale is not due to expire yet', again);
    }),
  ];
}
