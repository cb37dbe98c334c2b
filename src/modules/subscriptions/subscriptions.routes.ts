import type { Static } from '@sinclair/typebox';
import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { FieldErrorCollector } from '../../shared/errors.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
import type { SubscriptionFilter } from './subscriptions.repository.js';
import { SubscriptionListQuery, SubscriptionParams, SubscriptionResponse, UpdateSubscriptionBody } from './subscriptions.schemas.js';
import type { SubscriptionsService } from './subscriptions.service.js';

function toFilter(q: Static<typeof SubscriptionListQuery>): SubscriptionFilter {
  const errors = new FieldErrorCollector();
  if (q.createdAfter && q.createdBefore && Date.parse(q.createdAfter) > Date.parse(q.createdBefore)) {
    errors.add('createdAfter', 'date', 'must not be after createdBefore');
  }
  errors.throwIfAny();
  const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(v).toISOString());
  return {
    createdAfter: iso(q.createdAfter),
    createdBefore: iso(q.createdBefore),
    customerId: q.customerId,
    reference: q.reference,
    currency: q.currency,
    state: q.state,
    paymentMethodId: q.paymentMethodId,
    pointOfSaleId: q.pointOfSaleId,
    type: q.type,
  };
}

export function subscriptionsRoutes(service: SubscriptionsService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Subscriptions'] };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions',
      summary: 'List subscriptions (page pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: SubscriptionListQuery, response: { 200: PageEnvelope(SubscriptionResponse) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, toFilter(query), pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items, page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/:subscriptionId',
      summary: 'Get a subscription with its payment method',
      schema: { params: SubscriptionParams, response: { 200: SubscriptionResponse } },
      handler: async ({ params, accountId }) => service.view(accountId, params.subscriptionId),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      url: '/subscriptions/:subscriptionId',
      summary: 'Update an ACTIVE subscription (amount, type, expiry, interval)',
      idempotent: true,
      schema: { params: SubscriptionParams, body: UpdateSubscriptionBody, response: { 200: SubscriptionResponse } },
      handler: async ({ params, body, accountId }) => {
        await service.update(accountId, params.subscriptionId, body);
        return service.view(accountId, params.subscriptionId);
      },
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/subscriptions/:subscriptionId',
      summary: 'Disable a subscription (200, empty body)',
      idempotent: true,
      schema: { params: SubscriptionParams },
      handler: async ({ params, accountId }) => {
        await service.disable(accountId, params.subscriptionId);
        return EMPTY_BODY;
      },
    }),
  ];
}
