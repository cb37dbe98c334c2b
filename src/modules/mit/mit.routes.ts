import { defineRoute, type RouteDef } from '../../shared/route.js';
import { transactionWire } from '../transactions/transactions.schemas.js';
import { MitBatchBody, MitBatchResponse, MitBody, MitRateLimitedResponse, MitResponse } from './mit.schemas.js';
import type { MitService } from './mit.service.js';

export function mitRoutes(service: Pick<MitService, 'create' | 'batch'>): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Transactions'], idempotent: true };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/mit',
      summary: 'Merchant-initiated authorization on an ACTIVE subscription (asynchronous; at most 300 a minute per merchant by default)',
      rateLimit: 'mit',
      refusedWhenOverloaded: true,
      schema: { body: MitBody, response: { 200: MitResponse, 429: MitRateLimitedResponse } },
      handler: async ({ body, accountId, clientIp, effect }) => ({ transaction: transactionWire(await service.create(accountId, body, clientIp, effect)) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/mit/batch',
      summary: 'Up to 500 MIT authorizations; one result per entry, in order (at most 30 000 accepted entries a minute per merchant by default)',
      rateLimit: 'mitBatch',
      refusedWhenOverloaded: true,
      schema: { body: MitBatchBody, response: { 200: MitBatchResponse, 429: MitRateLimitedResponse } },
      handler: async ({ body, accountId, clientIp, effect }) => {
        const results = await service.batch(accountId, body.transactions, clientIp, effect);
        return {
          transactions: results.map((r) => ({ transaction: r.transaction ? transactionWire(r.transaction) : null, error: r.error, reference: r.reference })),
        };
      },
    }),
  ];
}
