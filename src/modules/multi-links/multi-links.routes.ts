/**
 * Payment Links group, multi-links (INTERFACE §11.3): create, list, get, deactivate (merchant),
 * and the link's public pages — the visit (a new session, 303 to its payment window; 410 once
 * deactivated) and its QR code (PNG). No decisions here.
 */
import { type Static, Type } from '@sinclair/typebox';
import { linkGonePage, LINK_PAGE_HEADERS, linkNotFoundPage, linkUnavailablePage, qrPng } from '../../pages/multi-link.js';
import { FieldErrorCollector } from '../../shared/errors.js';
import { TRANSACTION_ID_PATTERN } from '../../shared/ids.js';
import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, fieldErrorExample, type HtmlResult, type RouteDef } from '../../shared/route.js';
import { paymentWindowUrl } from '../sessions/sessions.routes.js';
import type { MultiLink } from './multi-link.js';
import type { MultiLinkFilter } from './multi-links.repository.js';
import {
  CreateMultiLinkBody,
  DeactivatedMultiLinkResponse,
  MultiLinkList,
  MultiLinkListQuery,
  MultiLinkParams,
  MultiLinkResponse,
  multiLinkWire,
} from './multi-links.schemas.js';
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
      summary: 'Create a multi-link',
      description:
        'A reusable payment link for an ONLINE point of sale — a QR code on a market stall, a donation button: every visit of ' +
        "`url` (or scan of `qrUrl`) starts a new, independent CIT session from the link's settings and forwards the customer to its " +
        "payment window. Settings left out (null in the record) are taken from the point of sale's `hostedConfiguration` when a " +
        'session starts, except redirect and notification URLs, which must be on the approved domain. `orderLines` are shown in the ' +
        'window; `subscription` makes each session store the card; `dynamicAmount` lets the customer enter the amount. The link ' +
        'stays `ACTIVE` until deactivated.',
      errorExamples: {
        422: [fieldErrorExample('The point of sale is PHYSICAL', 'pointOfSaleId', 'in:ONLINE', 'must be an ONLINE point of sale')],
      },
      idempotent: true,
      schema: { body: CreateMultiLinkBody, response: { 200: MultiLinkResponse } },
      handler: async ({ body, accountId, baseUrl, effect }) => wrap(await service.create(accountId, body, effect), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/multi-links',
      summary: 'List multi-links',
      description:
        "The account's multi-links, newest first, in the page envelope; filter by `pointOfSaleId`, `state` (ACTIVE, DEACTIVATED) " +
        'and `createdAfter`/`createdBefore` (inclusive). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: MultiLinkListQuery, response: { 200: MultiLinkList } },
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
      description: 'One multi-link with its `url` and `qrUrl`.',
      schema: { params: MultiLinkParams, response: { 200: MultiLinkResponse } },
      handler: async ({ params, accountId, baseUrl }) => wrap(await service.get(accountId, params.multiLinkId), baseUrl),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/multi-links/:multiLinkId',
      summary: 'Deactivate a multi-link',
      description:
        'Deactivates the link: state `DEACTIVATED`, and its `url` shows a "no longer active" page (HTTP 410). Sessions already ' +
        'started from it are not affected. Answers the record; deactivating it again answers the same.',
      idempotent: true,
      schema: { params: MultiLinkParams, response: { 200: DeactivatedMultiLinkResponse } },
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
