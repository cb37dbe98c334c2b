/** The operator's payments in doubt (INTERFACE §12.4): list them, and resolve each after checking with the acquirer. */
import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { PipelineRepos } from '../transactions/payment-engine.js';
import { InDoubtListResponse, InDoubtParams, InDoubtQuery, inDoubtWire, ResolveInDoubtBody, ResolveInDoubtResponse } from './in-doubt.schemas.js';
import type { InDoubtService } from './in-doubt.service.js';

export function inDoubtRoutes<R extends PipelineRepos>(service: InDoubtService<R>): RouteDef[] {
  const partner = { auth: 'operator' as const, tags: ['Partner'] };
  return [
    defineRoute({
      ...partner,
      method: 'GET',
      url: '/partner/payments-in-doubt',
      summary: 'List payments in doubt',
      description:
        'A request to an acquirer without idempotency (Clearhaus) that may have reached it and got no answer is never sent again: ' +
        'the operation stays PROCESSING, holding its amount, until an operator checks with the acquirer and resolves it. Oldest first.',
      schema: { querystring: InDoubtQuery, response: { 200: InDoubtListResponse } },
      handler: async ({ query }) => ({ items: (await service.list(query.limit ?? 100, query.accountId)).map(inDoubtWire) }),
    }),
    defineRoute({
      ...partner,
      method: 'POST',
      url: '/partner/payments-in-doubt/:operationId/resolve',
      summary: 'Resolve an operation in doubt as succeeded or failed',
      description:
        'Applies what the acquirer says happened as its answer would have been: the operation and transaction become final, ' +
        'the amounts move (or the reservation is released) and the merchant gets its callback and events. 404 when the operation is not in doubt.',
      idempotent: true,
      schema: { params: InDoubtParams, body: ResolveInDoubtBody, response: { 200: ResolveInDoubtResponse } },
      handler: async ({ params, body }) => {
        const { operation, transaction } = await service.resolve(params.operationId, body.outcome);
        return {
          operationId: operation.id,
          transactionId: operation.transactionId,
          state: operation.state === 'SUCCESS' ? ('SUCCESS' as const) : ('FAILED' as const),
          transactionState: transaction?.state ?? 'PROCESSING',
        };
      },
    }),
  ];
}
