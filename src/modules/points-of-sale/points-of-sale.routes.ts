import { PageEnvelope, PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { PointOfSale } from './point-of-sale.js';
import { CreatePointOfSaleBody, PointOfSaleParams, PointOfSaleResponse } from './points-of-sale.schemas.js';
import type { PointsOfSaleService } from './points-of-sale.service.js';

export const pointOfSaleWire = ({ hostedConfiguration, accountId: _accountId, ...pointOfSale }: PointOfSale) => ({ pointOfSale, hostedConfiguration });

export function pointsOfSaleRoutes(service: PointsOfSaleService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Management'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/management/point-of-sales',
      summary: 'Create a point of sale',
      idempotent: true,
      schema: { body: CreatePointOfSaleBody, response: { 200: PointOfSaleResponse } },
      handler: async ({ body, accountId }) => pointOfSaleWire(await service.create(accountId, body)),
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
      summary: 'Get a point of sale',
      schema: { params: PointOfSaleParams, response: { 200: PointOfSaleResponse } },
      handler: async ({ params, accountId }) => pointOfSaleWire(await service.get(accountId, params.pointOfSaleId)),
    }),
  ];
}
