import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, errorExample, fieldErrorExample, type RouteDef } from '../../shared/route.js';
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
      summary: 'Create a billing agreement',
      description:
        "Puts an ACTIVE subscription on a billing plan: the service then charges the plan's amount automatically every interval, " +
        'from `nextChargeAt` (default: today plus one plan interval; a date means 00:00 UTC). The agreement starts `ACTIVE`. Each ' +
        "charge is a billing agreement charge whose attempts are MIT transactions; a declined charge is retried up to the plan's " +
        '`maxAttempts` before the next period starts, then ends `FAILED`. Plan and subscription must have the same currency. ' +
        'A subscription that is not ACTIVE is a 422 on `subscriptionId`; an unknown plan a 422 on `billingPlanId`.',
      errorExamples: {
        422: [
          fieldErrorExample(
            'The subscription is not ACTIVE',
            'subscriptionId',
            'in:ACTIVE',
            'the subscription is DISABLED; only an ACTIVE subscription can be charged',
          ),
          fieldErrorExample('Plan and subscription currencies differ', 'billingPlanId', 'in:EUR', 'the plan is in DKK but the subscription is in EUR'),
        ],
      },
      idempotent: true,
      schema: { body: CreateBillingAgreementBody, response: { 200: BillingAgreementResponse } },
      handler: async ({ body, accountId }) => billingAgreementWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: base,
      summary: 'List billing agreements',
      description: "The account's billing agreements (every state), newest first, in the page envelope. Rate limited as a list endpoint.",
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
      description:
        'One billing agreement: its plan and subscription, `state` (PENDING while it waits on a CIT session, ACTIVE, STOPPED), ' +
        '`nextChargeAt` and `lastChargeAt`, and `desiredDate` (the day of the month MONTH plans aim for).',
      schema: { params: BillingAgreementParams, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, accountId }) => billingAgreementWire(await service.get(accountId, params.agreementId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${base}/:agreementId/stop`,
      summary: 'Stop a billing agreement',
      description:
        'Stops automatic charging: the agreement becomes `STOPPED` with `nextChargeAt` null, and no charge is created until it is ' +
        'resumed. A PENDING agreement can be stopped too; stopping a STOPPED agreement changes nothing. The subscription stays ' +
        'ACTIVE (MIT still works). Emits `subscription-billing.agreement-stopped.v1`.',
      errorExamples: {
        409: [errorExample('Changed by another request meanwhile', 'CONFLICT', 'The billing agreement was changed concurrently; retry the request.')],
      },
      idempotent: true,
      schema: { params: BillingAgreementParams, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, accountId }) => billingAgreementWire(await service.stop(accountId, params.agreementId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${base}/:agreementId/resume`,
      summary: 'Resume a billing agreement',
      description:
        'Resumes a STOPPED agreement: it becomes `ACTIVE` again and the first charge after resuming is made at `nextChargeAt` ' +
        '(not before today; a date means 00:00 UTC). `desiredDate` is kept. An agreement that is not STOPPED is a 409 `CONFLICT`.',
      errorExamples: {
        409: [errorExample('The agreement is ACTIVE already', 'CONFLICT', 'The billing agreement is ACTIVE; it cannot resume.')],
        422: [fieldErrorExample('nextChargeAt is in the past', 'nextChargeAt', 'date', 'must not be before today (2026-11-25)')],
      },
      idempotent: true,
      schema: { params: BillingAgreementParams, body: ResumeBillingAgreementBody, response: { 200: BillingAgreementResponse } },
      handler: async ({ params, body, accountId }) => billingAgreementWire(await service.resume(accountId, params.agreementId, body.nextChargeAt)),
    }),
  ];
}
