import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { transactionWire } from '../transactions/transactions.schemas.js';
import { BillingChargeDetailResponse, BillingChargeListQuery, BillingChargePage, BillingChargeParams, billingChargeWire } from './charges.schemas.js';
import type { BillingChargesService } from './charges.service.js';

export function billingChargesRoutes(service: BillingChargesService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Subscription Billing'] };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/billing/charges',
      summary: 'List billing agreement charges',
      description:
        'The charges of every billing agreement of the account (or of one, with `billingAgreementId`), newest first, in the page ' +
        'envelope. A charge is `PROCESSING` while attempts remain (`nextAttemptAt` says when the next one runs), then `SUCCESS` or ' +
        '`FAILED` (after `maxAttempts` declined attempts, all before `deadlineAt`). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: BillingChargeListQuery, response: { 200: BillingChargePage } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, { billingAgreementId: query.billingAgreementId }, pageOffset(query.page, query.perPage), query.perPage);
        const items = page.items.map((v) => billingChargeWire(v.charge, v.transactionIds));
        return pageEnvelope({ page: query.page, perPage: query.perPage, url: baseUrl + path, query: rawQuery }, items, page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/billing/charges/:billingAgreementChargeId',
      summary: 'Get a billing agreement charge',
      description:
        'One charge with the transactions of its attempts, oldest first (each carries `billingAgreementChargeId`). Use it to see why ' +
        'a charge failed: each declined attempt has its `errorCode`.',
      schema: { params: BillingChargeParams, response: { 200: BillingChargeDetailResponse } },
      handler: async ({ params, accountId }) => {
        const view = await service.get(accountId, params.billingAgreementChargeId);
        return { ...billingChargeWire(view.charge, view.transactionIds), transactions: view.transactions.map((t) => ({ transaction: transactionWire(t) })) };
      },
    }),
  ];
}
