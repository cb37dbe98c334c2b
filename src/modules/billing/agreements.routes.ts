import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import {
  BillingAgreementPage,
  BillingAgreementParams,
  BillingAgreementResponse,
  billingAgreementWire,
  CreateBillingAgreementBody,
  ResumeBillingAgreementBody,
} from './agreements.schemas.js';
import type { BillingAgreementsService } from './agreements.service.js';
import type { BillingRepos } from './billing.ports.js';

export function billingAgreementsRoutes<R extends BillingRepos>(service: BillingAgreementsService<R>): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Subscription Billing'] };
  const base = '/subscriptions/billing/agreements';
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: base,
      summary: 'Create a billing agreement on an ACTIVE subscription',
      idempotent: true,
      schema: { body: CreateBillingAgreementBody, response: { 200: BillingAgreementResponse } },
      handler: async ({ body, accountId }) => billingAgreementWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: base,
      summary: 'List billing agreements (page pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: BillingAgreementPage } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(billingAgreementWire), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: `${base}/:agreementId`,
      summary: 'Get a billing agreement',
      schema: { params: BillingAgreementParams, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, accountId }) => billingAgreementWire(await service.get(accountId, params.agreementId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${base}/:agreementId/stop`,
      summary: 'Stop automatic charges (STOPPED, nextChargeAt null)',
      idempotent: true,
      schema: { params: BillingAgreementParams, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, accountId }) => billingAgreementWire(await service.stop(accountId, params.agreementId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${base}/:agreementId/resume`,
      summary: 'Resume a STOPPED agreement; the first charge is made at nextChargeAt',
      idempotent: true,
      schema: { params: BillingAgreementParams, body: ResumeBillingAgreementBody, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, body, accountId }) => billingAgreementWire(await service.resume(accountId, params.agreementId, body.nextChargeAt)),
    }),
  ];
}
