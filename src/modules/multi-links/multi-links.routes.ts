/**
 * Payment Links group, multi-links (INTERFACE §11.3): create, list, get, deactivate (merchant),
 * and the link's public pages — the visit (a new session, 303 to its payment window; 410 once
 * deactivated) and its QR code (PNG). No decisions here.
 */
import { type Static, Type } from '@sinclair/typebox';
import { linkGonePage, LINK_PAGE_HEADERS, linkNotFoundPage, linkUnavailablePage, qrPng } from '../../pages/multi-link.js';
import { FieldErrorCollector } from '../../shared/errors.js';
import { TRANSACTION_ID_PATTERN } from '../../shared/ids.js';
import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type HtmlResult, type RouteDef } from '../../shared/route.js';
import { paymentWindowUrl } from '../sessions/sessions.routes.js';
import type { MultiLink } from './multi-link.js';
import type { MultiLinkFilter } from './multi-links.repository.js';
import { CreateMultiLinkBody, MultiLinkListQuery, MultiLinkParams, MultiLinkResponse, multiLinkWire } from './multi-links.schemas.js';
import type { MultiLinksService } from './multi-links.service.js';

/** Where a multi-link's public pages live (outside the API prefix, like the payment window). */
export const MULTI_LINK_PATH = '/ml';

export const multiLinkUrl = (baseUrl: string, id: string) => `${baseUrl}${MULTI_LINK_PATH}/${id}`;
export const multiLinkQrUrl = (baseUrl: string, id: string) => `${multiLinkUrl(baseUrl, id)}/qr.png`;

/** The public pages take any string and answer a 404 page for what is not a link id. */
const PageParams = Type.Object({ multiLinkId: Type.String({ minLength: 1, maxLength: 64 }) });
const LINK_ID = new RegExp(TRANSACTION_ID_PATTERN);
const isLinkId = (id: string) => LINK_ID.test(id);

function toFilter(q: Static<typeof MultiLinkListQuery>): MultiLinkFilter {
  const errors = new FieldErrorCollector();
  if (q.createdAfter && q.createdBefore && Date.parse(q.createdAfter) > Date.parse(q.createdBefore)) {
    errors.add('createdAfter', 'date', 'must not be after createdBefore');
  }
  errors.throwIfAny();
  const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(v).toISOString());
  return { pointOfSaleId: q.pointOfSaleId, state: q.state, createdAfter: iso(q.createdAfter), createdBefore: iso(q.createdBefore) };
}

const notFound = (): HtmlResult => ({ status: 404, html: linkNotFoundPage(), headers: LINK_PAGE_HEADERS });
const gone = (): HtmlResult => ({ status: 410, html: linkGonePage(), headers: LINK_PAGE_HEADERS });

export function multiLinksRoutes(service: MultiLinksService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Payment Links'] };
  const wrap = (link: MultiLink, baseUrl: string) => ({
    multiLink: multiLinkWire(link),
    url: multiLinkUrl(baseUrl, link.id),
    qrUrl: multiLinkQrUrl(baseUrl, link.id),
  });
  const page = { auth: 'public' as const, root: true, hidden: true, tags: ['Payment Links'], method: 'GET' as const };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/multi-links',
      summary: 'Create a multi-link (a reusable link: every visit starts a new CIT session)',
      idempotent: true,
      schema: { body: CreateMultiLinkBody, response: { 200: MultiLinkResponse } },
      handler: async ({ body, accountId, baseUrl, effect }) => wrap(await service.create(accountId, body, effect), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/multi-links',
      summary: 'List multi-links (page pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: MultiLinkListQuery, response: { 200: PageEnvelope(MultiLinkResponse) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const result = await service.list(accountId, toFilter(query), pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope(
          { ...query, url: baseUrl + path, query: rawQuery },
          result.items.map((link) => wrap(link, baseUrl)),
          result.total,
        );
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/multi-links/:multiLinkId',
      summary: 'Get a multi-link',
      schema: { params: MultiLinkParams, response: { 200: MultiLinkResponse } },
      handler: async ({ params, accountId, baseUrl }) => wrap(await service.get(accountId, params.multiLinkId), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/multi-links/:multiLinkId',
      summary: 'Deactivate a multi-link (200 with the record; idempotent; sessions already started are not affected)',
      idempotent: true,
      schema: { params: MultiLinkParams, response: { 200: MultiLinkResponse } },
      handler: async ({ params, accountId, baseUrl }) => wrap(await service.deactivate(accountId, params.multiLinkId), baseUrl),
    }),
    defineRoute({
      ...page,
      url: `${MULTI_LINK_PATH}/:multiLinkId`,
      summary: 'Multi-link visit: starts a new session and forwards (303) to its payment window',
      schema: { params: PageParams },
      handler: async ({ params, baseUrl }): Promise<HtmlResult> => {
        if (!isLinkId(params.multiLinkId)) return notFound();
        const visit = await service.visit(params.multiLinkId);
        switch (visit.kind) {
          case 'started':
            return { status: 303, html: '', headers: { ...LINK_PAGE_HEADERS, location: paymentWindowUrl(baseUrl, visit.session) } };
          case 'gone':
            return gone();
          case 'unavailable':
            return { status: 409, html: linkUnavailablePage(), headers: LINK_PAGE_HEADERS };
          default:
            return notFound();
        }
      },
    }),
    defineRoute({
      ...page,
      url: `${MULTI_LINK_PATH}/:multiLinkId/qr.png`,
      summary: "Multi-link QR code: a PNG of the link's url",
      schema: { params: PageParams },
      handler: async ({ params, baseUrl }): Promise<HtmlResult> => {
        const link = isLinkId(params.multiLinkId) ? await service.publicView(params.multiLinkId) : null;
        if (!link) return notFound();
        if (link.state !== 'ACTIVE') return gone();
        return {
          html: await qrPng(multiLinkUrl(baseUrl, link.id)),
          contentType: 'image/png',
          headers: { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
        };
      },
    }),
  ];
}
