import { defineRoute, type RouteDef } from '../../shared/route.js';
import { NotificationWebhookRecord } from '../transactions/notification.js';
import { transactionWire } from '../transactions/transactions.schemas.js';
import { PayoutBody, PayoutResponse, SyncPayoutBody } from './payouts.schemas.js';
import type { PayoutsService } from './payouts.service.js';

export function payoutsRoutes(service: PayoutsService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Payouts'], idempotent: true };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payout',
      summary: 'Payout to a stored card (asynchronous; outcome to notificationUrl)',
      refusedWhenOverloaded: true,
      schema: { body: PayoutBody, response: { 200: PayoutResponse } },
      handler: async ({ body, accountId, effect }) => ({ transaction: transactionWire(await service.payout(accountId, body, effect)) }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payout-sync',
      capability: 'syncPayout',
      summary: 'Payout to a stored card (synchronous; needs the syncPayout approval)',
      schema: { body: SyncPayoutBody, response: { 200: NotificationWebhookRecord } },
      handler: async ({ body, accountId, effect }) => service.payoutSync(accountId, body, effect),
    }),
  ];
}
