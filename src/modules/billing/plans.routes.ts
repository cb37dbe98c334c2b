import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { BillingPlanPage, BillingPlanParams, BillingPlanResponse, billingPlanWire, CreateBillingPlanBody } from './plans.schemas.js';
import type { BillingPlansService } from './plans.service.js';

export function billingPlansRoutes(service: BillingPlansService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Subscription Billing'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/subscriptions/billing/plans',
      summary: 'Create a billing plan',
      idempotent: true,
      schema: { body: CreateBillingPlanBody, response: { 200: BillingPlanResponse } },
      handler: async ({ body, accountId }) => billingPlanWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/billing/plans',
      summary: 'List billing plans (page pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: BillingPlanPage } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(billingPlanWire), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/billing/plans/:planId',
      summary: 'Get a billing plan',
      schema: { params: BillingPlanParams, response: { 200: BillingPlanResponse } },
      handler: async ({ params, accountId }) => billingPlanWire(await service.get(accountId, params.planId)),
    }),
  ];
}
