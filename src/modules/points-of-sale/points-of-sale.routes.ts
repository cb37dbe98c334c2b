import { PageEnvelope, PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { PointOfSale, PointOfSaleDetail } from './point-of-sale.js';
import { CreatePointOfSaleBody, PointOfSaleDetailResponse, PointOfSaleParams, PointOfSaleResponse } from './points-of-sale.schemas.js';
import type { PointsOfSaleService } from './points-of-sale.service.js';

export const pointOfSaleWire = ({ hostedConfiguration, accountId: _accountId, ...pointOfSale }: PointOfSale) => ({ pointOfSale, hostedConfiguration });

/** The single-resource shape: the record with its callback Authorization value and signing secret. */
export const pointOfSaleDetailWire = ({ webhookAuthentication, signingSecret, ...rest }: PointOfSaleDetail) => {
  const { pointOfSale, hostedConfiguration } = pointOfSaleWire(rest);
  return { pointOfSale: { ...pointOfSale, webhookAuthentication, signingSecret }, hostedConfiguration };
};

export function pointsOfSaleRoutes(service: PointsOfSaleService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Management'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/management/point-of-sales',
      summary: 'Create a point of sale',
      idempotent: true,
      // The answer carries the callback credentials: a replay's stored copy is sealed.
      secretResponse: true,
      schema: { body: CreatePointOfSaleBody, response: { 200: PointOfSaleDetailResponse } },
      handler: async ({ body, accountId }) => pointOfSaleDetailWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/management/point-of-sales',
      summary: 'List points of sale',
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: PageEnvelope(PointOfSaleResponse) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(pointOfSaleWire), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/management/point-of-sales/:pointOfSaleId',
      summary: 'Get a point of sale, with the Authorization value and signing secret of its callbacks',
      schema: { params: PointOfSaleParams, response: { 200: PointOfSaleDetailResponse } },
      handler: async ({ params, accountId }) => pointOfSaleDetailWire(await service.detail(accountId, params.pointOfSaleId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/management/point-of-sales/:pointOfSaleId/signing-secret',
      summary: 'Rotate the signing secret of its callbacks; the old one keeps signing (a second signature) for 24 hours',
      idempotent: true,
      secretResponse: true,
      schema: { params: PointOfSaleParams, response: { 200: PointOfSaleDetailResponse } },
      handler: async ({ params, accountId }) => pointOfSaleDetailWire(await service.rotateSigningSecret(accountId, params.pointOfSaleId)),
    }),
  ];
}
