import { EXISTING } from '../../shared/errors.js';
import { defineRoute, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import { transactionWire } from '../transactions/transactions.schemas.js';
import { PayoutBody, PayoutResponse, SyncPayoutBody, SyncPayoutResponse } from './payouts.schemas.js';
import type { PayoutsService } from './payouts.service.js';

export function payoutsRoutes(service: PayoutsService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Payouts'], idempotent: true };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payout',
      summary: 'Create a payout',
      description:
        'Sends `amount` (minor units) to a card the customer stored (`paymentMethodId`, type CARD) — winnings, cash-back, a refund ' +
        'without an original payment. Asynchronous: the answer is the transaction (`type: PAYOUT`) in state `PENDING`; it becomes ' +
        '`SUCCESS` or `FAILED` and the outcome is POSTed to `notificationUrl`. An unknown or non-card `paymentMethodId` is a 422 on ' +
        'that field. A payout has no capture, void or refund. Send an `Idempotency-Key`: a retry never pays twice.',
      errorExamples: {
        422: [
          fieldErrorExample('The payment method is not one of this account', 'paymentMethodId', EXISTING, 'is not a stored payment method of this account'),
        ],
      },
      refusedWhenOverloaded: true,
      schema: { body: PayoutBody, response: { 200: PayoutResponse } },
      handler: async ({ body, accountId, effect }) => ({ transaction: transactionWire(await service.payout(accountId, body, effect)) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payout-sync',
      capability: 'syncPayout',
      summary: 'Create a synchronous payout',
      description:
        'The synchronous form of `POST /payout` (no `notificationUrl`): the answer is the NotificationWebhook of the finished payout, ' +
        '`transaction.state` `SUCCESS` (`aggregates.paidOut` = `amount`) or `FAILED` with `errorCode`. Needs the `syncPayout` ' +
        'capability, which the operator grants after explicit approval.',
      errorExamples: {
        422: [
          fieldErrorExample('The payment method is not one of this account', 'paymentMethodId', EXISTING, 'is not a stored payment method of this account'),
        ],
      },
      schema: { body: SyncPayoutBody, response: { 200: SyncPayoutResponse } },
      handler: async ({ body, accountId, effect }) => service.payoutSync(accountId, body, effect),
    }),
  ];
}
