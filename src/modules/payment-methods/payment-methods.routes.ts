import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
import { SANDBOX_PREFIX } from '../sandbox/sandbox.routes.js';
import {
  AccountUpdateBody,
  AccountUpdatesBody,
  PaymentMethodDetailResponse,
  paymentMethodDetailWire,
  PaymentMethodListQuery,
  PaymentMethodParams,
  PaymentMethodResponse,
  paymentMethodWire,
} from './payment-methods.schemas.js';
import type { PaymentMethodsService } from './payment-methods.service.js';

export function paymentMethodsRoutes(service: PaymentMethodsService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Payment Methods'] };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/payment-methods',
      summary: 'List stored payment methods (optionally of one customer)',
      rateLimit: 'list',
      schema: { querystring: PaymentMethodListQuery, response: { 200: PageEnvelope(PaymentMethodResponse) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, query.customerId ?? null, { offset: pageOffset(query.page, query.perPage), limit: query.perPage });
        const items = page.items.map((pm) => ({ paymentMethod: paymentMethodWire(pm) }));
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, items, page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/payment-methods/:paymentMethodId',
      summary: 'Get a stored payment method with its masked card (card null for other methods)',
      schema: { params: PaymentMethodParams, response: { 200: PaymentMethodDetailResponse } },
      handler: async ({ params, accountId }) => paymentMethodDetailWire(await service.get(accountId, params.paymentMethodId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payment-methods/:paymentMethodId/account-updates',
      summary: "Enrol a stored card in the account updater (or withdraw it): the issuer's new expiry or reissued card replaces the stored one",
      idempotent: true,
      schema: { params: PaymentMethodParams, body: AccountUpdatesBody, response: { 200: PaymentMethodDetailResponse } },
      handler: async ({ params, body, accountId }) => paymentMethodDetailWire(await service.setAccountUpdates(accountId, params.paymentMethodId, body.enabled)),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/payment-methods/:paymentMethodId',
      summary: 'Delete a stored payment method',
      idempotent: true,
      schema: { params: PaymentMethodParams },
      handler: async ({ params, accountId }) => {
        await service.delete(accountId, params.paymentMethodId);
        return EMPTY_BODY;
      },
    }),
  ];
}

/** Sandbox only (INTERFACE §11.4): the simulated issuer's account updater. */
export function paymentMethodsSandboxRoutes(service: PaymentMethodsService): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      url: `${SANDBOX_PREFIX}/payment-methods/:paymentMethodId/account-update`,
      auth: 'sandbox',
      root: true,
      tags: ['Sandbox'],
      summary:
        'Account updater: the issuer sends a new expiry ({expiryMonth, expiryYear}) or a reissued card ({card}); an enrolled payment method takes it at once, one not enrolled answers 409',
      schema: { params: PaymentMethodParams, body: AccountUpdateBody, response: { 200: PaymentMethodDetailResponse } },
      handler: async ({ params, body }) => paymentMethodDetailWire(await service.applyAccountUpdate(params.paymentMethodId, body)),
    }),
  ];
}
