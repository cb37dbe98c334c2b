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
      description:
        'A billing plan is the price list entry of automatic billing: `amount` (≥ 1, minor units) in `currency` every `interval` ' +
        '(`{period: DAY|WEEK|MONTH|YEAR, frequency: 1–31}`), and `maxAttempts` (1–31): how often a declined charge is tried before ' +
        'the period ends. Optional `instantCapture`, `color` and `emoji` (for the dashboard). Attach it to a subscription with ' +
        '`POST /subscriptions/billing/agreements`. Plans cannot be changed; create a new one.',
      idempotent: true,
      schema: { body: CreateBillingPlanBody, response: { 200: BillingPlanResponse } },
      handler: async ({ body, accountId }) => billingPlanWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/billing/plans',
      summary: 'List billing plans',
      description: "The account's billing plans, newest first, in the page envelope. Rate limited as a list endpoint.",
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
      description: "One billing plan of the account. An id that is not one of the account's plans is a 404.",
      schema: { params: BillingPlanParams, response: { 200: BillingPlanResponse } },
      handler: async ({ params, accountId }) => billingPlanWire(await service.get(accountId, params.planId)),
    }),
  ];
}
