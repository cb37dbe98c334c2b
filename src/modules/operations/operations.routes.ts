/** HTTP adapter of the lifecycle operations: validation by schema, decisions in the service. */
import { fieldError } from '../../shared/errors.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { TransactionParams } from '../transactions/transactions.schemas.js';
import { CaptureBody, OperationResponse, RefundBody, RefundResponse, VoidBody } from './operations.schemas.js';
import type { LifecycleOperations } from './operations.service.js';

export function operationsRoutes(service: LifecycleOperations): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Transactions'], idempotent: true, rateLimit: 'operation' as const };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/capture',
      summary: 'Capture (part of) an authorization; voidRemaining voids the uncaptured rest afterwards',
      schema: { params: TransactionParams, body: CaptureBody, response: { 200: OperationResponse } },
      handler: ({ params, body, accountId, effect }) => service.capture(accountId, params.transactionId, body, effect),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/refund',
      summary: 'Refund captured funds, each capture in isolation (newest first)',
      schema: { params: TransactionParams, body: RefundBody, response: { 200: RefundResponse } },
      handler: ({ params, body, accountId, effect }) => service.refund(accountId, params.transactionId, body, effect),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/void',
      summary: 'Release (part of) the uncaptured authorization; amount -1 releases all of it',
      schema: { params: TransactionParams, body: VoidBody, response: { 200: OperationResponse } },
      handler: ({ params, body, accountId, effect }) => {
        if (body.amount === 0) throw fieldError('amount', 'min:1', 'must be at least 1, or -1 for the whole remaining authorization');
        return service.void(accountId, params.transactionId, body, effect);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/renew',
      summary: 'Extend the uncaptured authorization of a KLARNA or VIABILL payment',
      schema: { params: TransactionParams, response: { 200: OperationResponse } },
      handler: ({ params, accountId, effect }) => service.renew(accountId, params.transactionId, effect),
    }),
  ];
}
