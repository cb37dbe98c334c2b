import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
import { PaymentMethodListQuery, PaymentMethodParams, PaymentMethodResponse, paymentMethodWire } from './payment-methods.schemas.js';
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
      summary: 'Get a stored payment method (masked)',
      schema: { params: PaymentMethodParams, response: { 200: PaymentMethodResponse } },
      handler: async ({ params, accountId }) => ({ paymentMethod: paymentMethodWire(await service.get(accountId, params.paymentMethodId)) }),
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
