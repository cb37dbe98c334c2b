import { defineRoute, fieldErrorExample, type RouteDef } from '../../shared/route.js';
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
      summary: 'Create a merchant-initiated payment (MIT)',
      description:
        'Charges the card stored on an ACTIVE subscription without the customer present — a renewal, an instalment, a usage bill. ' +
        'The card was stored by a CIT session with a `subscription`; a payment the customer starts ' +
        'must be a CIT, never a MIT.\n\n' +
        'Asynchronous: the answer is the transaction in state `PENDING` (accepted, not paid). It moves to `PROCESSING` and then ' +
        '`SUCCESS` or `FAILED` (with `errorCode`, e.g. `INSUFFICIENT_FUNDS`); the outcome is POSTed once to `notificationUrl` ' +
        "(a NotificationWebhook, with the point of sale's `webhookAuthentication` as `Authorization`). `currency` defaults to the " +
        "subscription's; `instantCapture` (`VOID` or `NO_VOID`) captures at once, else capture later. A subscription that is not " +
        'ACTIVE, expired, or whose payment method was deleted is a 422 on `subscriptionId`. Send an `Idempotency-Key`: a retry never ' +
        'charges twice. Rate limits: 5/s (burst 300) and at most 300 MIT a minute per merchant.',
      errorExamples: {
        422: [
          fieldErrorExample(
            'The subscription is not ACTIVE',
            'subscriptionId',
            'in:ACTIVE',
            'the subscription is DISABLED; only an ACTIVE subscription can be charged',
          ),
        ],
      },
      rateLimit: 'mit',
      refusedWhenOverloaded: true,
      schema: { body: MitBody, response: { 200: MitResponse, 429: MitRateLimitedResponse } },
      handler: async ({ body, accountId, clientIp, effect }) => ({ transaction: transactionWire(await service.create(accountId, body, clientIp, effect)) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/mit/batch',
      summary: 'Create up to 500 merchant-initiated payments',
      description:
        'The batch form of `POST /mit`: `transactions` holds 1–500 MIT requests. Each entry is validated on its own, so a batch can ' +
        'partly succeed: the answer has one result per entry, in request order (the array index correlates them), holding either ' +
        "`transaction` (accepted, state `PENDING`) or `error` (`errorCode`, `message`, field `errors`), and the entry's `reference`. " +
        'Each accepted transaction gets its own callback at its `notificationUrl`. A body that is not a list of 1–500 entries is a 422 ' +
        'for the whole batch. Rate limits: 1 request/s (burst 10), at most 30,000 accepted entries a minute per merchant.',
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
