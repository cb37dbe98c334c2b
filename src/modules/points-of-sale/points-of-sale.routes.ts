import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { PointOfSale, PointOfSaleDetail } from './point-of-sale.js';
import { CreatePointOfSaleBody, PointOfSaleDetailResponse, PointOfSaleList, PointOfSaleParams } from './points-of-sale.schemas.js';
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
      description:
        'A point of sale is where payments happen: an `ONLINE` shop (CIT sessions, payment links, MIT, MOTO) or a `PHYSICAL` store ' +
        'whose card terminals take in-person sales (default `ONLINE`). `domain` becomes an approved domain: every callback, webhook ' +
        'and redirect URL of the merchant must be on it or a sub-domain. `webhookAuthentication` is the literal `Authorization` ' +
        'value sent with each callback, and the answer also shows the `signingSecret` that signs them (Standard Webhooks headers). ' +
        '`hostedConfiguration` sets the defaults a CIT session takes for what it leaves out.',
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
      description:
        "The account's points of sale with their hosted configuration, in the page envelope (without callback credentials: read " +
        'one point of sale for those). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: PointOfSaleList } },
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
      description:
        'One point of sale with its hosted configuration, the `webhookAuthentication` value of its callbacks and their current ' + '`signingSecret`.',
      schema: { params: PointOfSaleParams, response: { 200: PointOfSaleDetailResponse } },
      handler: async ({ params, accountId }) => pointOfSaleDetailWire(await service.detail(accountId, params.pointOfSaleId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/management/point-of-sales/:pointOfSaleId/signing-secret',
      summary: 'Rotate the signing secret of a point of sale',
      description:
        "Replaces the `signingSecret` that signs this point of sale's callbacks and answers the point of sale with the new one. " +
        'For 24 hours the old secret keeps signing too (a second signature in `webhook-signature`), so receivers can switch without ' +
        'losing a callback.',
      idempotent: true,
      secretResponse: true,
      schema: { params: PointOfSaleParams, response: { 200: PointOfSaleDetailResponse } },
      handler: async ({ params, accountId }) => pointOfSaleDetailWire(await service.rotateSigningSecret(accountId, params.pointOfSaleId)),
    }),
  ];
}
