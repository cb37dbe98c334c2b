import { defineRoute, type RouteDef } from '../../shared/route.js';
import { MotoBody, MotoResponse } from './moto.schemas.js';
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
      summary: 'Create a MOTO payment',
      description:
        'Authorizes a mail or telephone order with the card details the merchant took down (`card.number`, `expiryMonth`, ' +
        '`expiryYear`, `cvc`). Needs the `moto` capability, granted by the operator once the merchant has documented PCI-DSS ' +
        'compliance. The card number must pass the Luhn check and the expiry must not be past (422 on the `card` field).\n\n' +
        'Synchronous: the answer is the NotificationWebhook of the result — `transaction.state` `SUCCESS` (authorized; also captured ' +
        'with `instantCapture` `VOID` or `NO_VOID`) or `FAILED` with `errorCode` (e.g. `DECLINED_BY_ISSUER_OR_SCHEME`, ' +
        '`INSUFFICIENT_FUNDS`). An authorized MOTO is then captured, voided and refunded like any payment. With a `notificationUrl` ' +
        'the same document is also POSTed there. The card number is never ' +
        'returned, logged or stored in the clear.',
      schema: { body: MotoBody, response: { 200: MotoResponse } },
      handler: async ({ body, accountId, effect }) => service.authorize(accountId, body, effect),
    }),
  ];
}
