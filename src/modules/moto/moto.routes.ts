import { defineRoute, type RouteDef } from '../../shared/route.js';
import { NotificationWebhookRecord } from '../transactions/notification.js';
import { MotoBody } from './moto.schemas.js';
import type { MotoService } from './moto.service.js';

export function motoRoutes(service: MotoService): RouteDef[] {
  return [
    defineRoute({
      auth: 'merchant',
      tags: ['Transactions'],
      method: 'POST',
      url: '/moto',
      capability: 'moto',
      idempotent: true,
      summary: 'MOTO authorization with raw card data (synchronous; needs the moto capability)',
      schema: { body: MotoBody, response: { 200: NotificationWebhookRecord } },
      handler: async ({ body, accountId, effect }) => service.authorize(accountId, body, effect),
    }),
  ];
}
