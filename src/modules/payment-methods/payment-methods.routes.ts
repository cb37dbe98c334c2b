import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, errorExample, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import { SANDBOX_PREFIX } from '../sandbox/sandbox.routes.js';
import {
  AccountUpdateBody,
  AccountUpdateResponse,
  AccountUpdatesBody,
  AccountUpdatesResponse,
  PaymentMethodDetailResponse,
  PaymentMethodList,
  paymentMethodDetailWire,
  PaymentMethodListQuery,
  PaymentMethodParams,
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
      summary: 'List stored payment methods',
      description:
        'The payment methods customers stored with the merchant (cards saved in CIT sessions with a `customerId` or a ' +
        '`subscription`), in the page envelope; `customerId` narrows it to one customer — the cards to offer at checkout. Deleted ' +
        'payment methods are left out. Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: PaymentMethodListQuery, response: { 200: PaymentMethodList } },
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
      summary: 'Get a stored payment method',
      description:
        'One stored payment method with its masked `card` (first 8 and last 4 digits, two-digit expiry, issuer, scheme, country, ' +
        'segment, funding); `card` is null for other payment methods. The card number is never returned.',
      schema: { params: PaymentMethodParams, response: { 200: PaymentMethodDetailResponse } },
      handler: async ({ params, accountId }) => paymentMethodDetailWire(await service.get(accountId, params.paymentMethodId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payment-methods/:paymentMethodId/account-updates',
      summary: 'Enrol a card in the account updater',
      description:
        'With `enabled: true` the stored card takes part in the account updater: when the issuer reissues the card or extends its ' +
        'expiry, the stored payment method takes the new details at once and later MITs use them, so subscriptions keep working. ' +
        '`enabled: false` withdraws it. Answers the payment method with `accountUpdatesEnabled`; setting the current value again ' +
        'changes nothing. Cards only: another payment method is a 422 on `enabled`.',
      errorExamples: {
        422: [fieldErrorExample('Not a card', 'enabled', 'in:CARD', 'account updates apply to card payment methods only, not KLARNA')],
      },
      idempotent: true,
      schema: { params: PaymentMethodParams, body: AccountUpdatesBody, response: { 200: AccountUpdatesResponse } },
      handler: async ({ params, body, accountId }) => paymentMethodDetailWire(await service.setAccountUpdates(accountId, params.paymentMethodId, body.enabled)),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/payment-methods/:paymentMethodId',
      summary: 'Delete a stored payment method',
      description:
        'Deletes a stored payment method: it is no longer listed or usable, and a subscription on it can no longer be charged (MIT ' +
        'answers 422 on `subscriptionId`). Answers 200 with an empty body.',
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
      summary: 'Simulate an account update from the issuer',
      description:
        'Sandbox only (operator key): the issuer sends a new expiry (`{expiryMonth, expiryYear}`) or a reissued card (`{card}`). A ' +
        'payment method enrolled in account updates takes it at once (later MITs use it) and is answered with its new details; one ' +
        'not enrolled keeps its old card and is answered 409 `CONFLICT`.',
      errorExamples: {
        409: [
          errorExample(
            'The payment method is not enrolled',
            'CONFLICT',
            'The payment method is not enrolled in account updates; it keeps its card. Enable them with POST /payment-methods/{id}/account-updates.',
          ),
        ],
      },
      schema: { params: PaymentMethodParams, body: AccountUpdateBody, response: { 200: AccountUpdateResponse } },
      handler: async ({ params, body }) => paymentMethodDetailWire(await service.applyAccountUpdate(params.paymentMethodId, body)),
    }),
  ];
}
