/** Payment Links group: create (body of POST /cit), get, list, cancel. No decisions here. */
import { qrPng } from '../../pages/multi-link.js';
import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
import { paymentWindowUrl } from '../sessions/sessions.routes.js';
import type { PaymentLink } from './payment-link.js';
import {
  CreatePaymentLinkBody,
  CreatePaymentLinkResponse,
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
      summary: 'Create a payment link (a CIT session behind a shareable URL): {id, sessionId, url, qrCode}',
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
      summary: 'List payment links (page pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: PaymentLinkListQuery, response: { 200: PageEnvelope(PaymentLinkResponse) } },
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
      schema: { params: PaymentLinkParams, response: { 200: PaymentLinkResponse } },
      handler: async ({ params, accountId, baseUrl }) => wrap(await service.get(accountId, params.paymentLinkId), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/payment-links/:paymentLinkId',
      summary: 'Cancel an ACTIVE payment link (200, empty body)',
      idempotent: true,
      schema: { params: PaymentLinkParams },
      handler: async ({ params, accountId }) => {
        await service.cancel(accountId, params.paymentLinkId);
        return EMPTY_BODY;
      },
    }),
  ];
}
