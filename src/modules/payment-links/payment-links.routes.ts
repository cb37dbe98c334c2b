/** Payment Links group: create (body of POST /cit), get, list, cancel. No decisions here. */
import { qrPng } from '../../pages/multi-link.js';
import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, errorExample, type RouteDef } from '../../shared/route.js';
import { paymentWindowUrl } from '../sessions/sessions.routes.js';
import type { PaymentLink } from './payment-link.js';
import {
  CreatePaymentLinkBody,
  CreatePaymentLinkResponse,
  PaymentLinkList,
  PaymentLinkListQuery,
  PaymentLinkParams,
  PaymentLinkResponse,
  paymentLinkWire,
} from './payment-links.schemas.js';
import type { PaymentLinksService } from './payment-links.service.js';

export function paymentLinksRoutes(service: PaymentLinksService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Payment Links'] };
  const wrap = (link: PaymentLink, baseUrl: string) => ({ paymentLink: paymentLinkWire(link, paymentWindowUrl(baseUrl, link)) });
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/payment-links',
      summary: 'Create a payment link',
      description:
        'A CIT session behind a shareable URL — send it by e-mail or SMS, print its QR code on an invoice. The body is that of ' +
        '`POST /cit` (`timeout` up to 86,400 minutes, default 60 days). The answer is flat: `id` (transaction-id format), the ' +
        '`sessionId`, the customer-facing `url` and `qrCode` (base64 PNG, no `data:` prefix). The link is `ACTIVE` until paid ' +
        '(`PAID`, with `transactionId`), cancelled (`CANCELLED`) or expired (`EXPIRED`); the outcome goes to `notificationUrl`.',
      idempotent: true,
      schema: { body: CreatePaymentLinkBody, response: { 200: CreatePaymentLinkResponse } },
      handler: async ({ body, accountId, baseUrl }) => {
        const link = await service.create(accountId, body);
        const url = paymentWindowUrl(baseUrl, link);
        return { id: link.id, sessionId: link.sessionId, url, qrCode: (await qrPng(url)).toString('base64') };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/payment-links',
      summary: 'List payment links',
      description: "The account's payment links, newest first, in the page envelope; see the query parameters for filters. Rate limited as a list endpoint.",
      rateLimit: 'list',
      schema: { querystring: PaymentLinkListQuery, response: { 200: PaymentLinkList } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, { state: query.state, reference: query.reference }, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope(
          { ...query, url: baseUrl + path, query: rawQuery },
          page.items.map((link) => wrap(link, baseUrl)),
          page.total,
        );
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/payment-links/:paymentLinkId',
      summary: 'Get a payment link',
      description: 'One payment link with its `state` (ACTIVE, PAID, CANCELLED, EXPIRED) and, once paid, its `transactionId`.',
      schema: { params: PaymentLinkParams, response: { 200: PaymentLinkResponse } },
      handler: async ({ params, accountId, baseUrl }) => wrap(await service.get(accountId, params.paymentLinkId), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/payment-links/:paymentLinkId',
      summary: 'Cancel a payment link',
      description:
        'Cancels an ACTIVE payment link: state `CANCELLED`, and its session can no longer be paid. A link that is PAID, EXPIRED or ' +
        'CANCELLED already is a 409 `CONFLICT`. Answers 200 with an empty body.',
      errorExamples: {
        409: [errorExample('The link was paid already', 'CONFLICT', 'The payment link is PAID; only an ACTIVE payment link can be cancelled.')],
      },
      idempotent: true,
      schema: { params: PaymentLinkParams },
      handler: async ({ params, accountId }) => {
        await service.cancel(accountId, params.paymentLinkId);
        return EMPTY_BODY;
      },
    }),
  ];
}
