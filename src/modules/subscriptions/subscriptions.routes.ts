import type { Static } from '@sinclair/typebox';
import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { FieldErrorCollector } from '../../shared/errors.js';
import { defineRoute, EMPTY_BODY, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import type { SubscriptionFilter } from './subscriptions.repository.js';
import { SubscriptionListQuery, SubscriptionListResponse, SubscriptionParams, SubscriptionResponse, UpdateSubscriptionBody } from './subscriptions.schemas.js';
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
      summary: 'List subscriptions',
      description:
        "The account's subscriptions with their payment methods, newest first, in the page envelope. Filters combine: " +
        '`createdAfter`/`createdBefore` (inclusive; fix `createdBefore` when importing, so that new rows do not shift the pages), ' +
        '`customerId`, `reference` (exact), `currency`, `state` (PENDING, ACTIVE, INVALID, DISABLED), `paymentMethodId`, ' +
        '`pointOfSaleId`, `type` (SCHEDULED, UNSCHEDULED). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: SubscriptionListQuery, response: { 200: SubscriptionListResponse } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, toFilter(query), pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items, page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/subscriptions/:subscriptionId',
      summary: 'Get a subscription',
      description:
        'A subscription — the link between the merchant and a card the customer stored through a CIT session with `subscription` — ' +
        'with its payment method (null once that was deleted). Only an ACTIVE subscription can be charged with `POST /mit` or ' +
        'carry a billing agreement; `statusReason` says why one is not.',
      schema: { params: SubscriptionParams, response: { 200: SubscriptionResponse } },
      handler: async ({ params, accountId }) => service.view(accountId, params.subscriptionId),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      url: '/subscriptions/:subscriptionId',
      summary: 'Update a subscription',
      description:
        'Changes the metadata of an ACTIVE subscription: the expected recurring `amount` (≥ 1), `type` (SCHEDULED needs an ' +
        '`interval` {period DAY|WEEK|MONTH|YEAR, frequency 1–31}), `expiryDate` and `interval` (null clears them). The card is not ' +
        'touched. Answers the updated subscription. A subscription in another state is a 422 on `subscriptionId`.',
      errorExamples: {
        422: [
          fieldErrorExample(
            'The subscription is not ACTIVE',
            'subscriptionId',
            'in:ACTIVE',
            'the subscription is DISABLED; update needs an ACTIVE subscription',
          ),
          fieldErrorExample('SCHEDULED without an interval', 'interval', 'required', 'is required for a SCHEDULED subscription'),
        ],
      },
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
      summary: 'Disable a subscription',
      description:
        'Disables a subscription (PENDING, ACTIVE or INVALID): state `DISABLED` (statusReason `DISABLED_BY_MERCHANT`); no new MIT or ' +
        'billing charge can be created for it, while its existing transactions can still be captured, voided and refunded. Emits ' +
        '`subscription.disabled.v1`. Answers 200 with an empty body; disabling a DISABLED subscription again is a no-op.',
      idempotent: true,
      schema: { params: SubscriptionParams },
      handler: async ({ params, accountId }) => {
        await service.disable(accountId, params.subscriptionId);
        return EMPTY_BODY;
      },
    }),
  ];
}
