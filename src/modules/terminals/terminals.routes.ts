import { PageEnvelope, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { pointOfSaleWire } from '../points-of-sale/points-of-sale.routes.js';
import { PointOfSaleParams } from '../points-of-sale/points-of-sale.schemas.js';
import { CreateTerminalBody, TerminalListQuery, TerminalParams, TerminalResponse } from './terminals.schemas.js';
import type { TerminalView, TerminalsService } from './terminals.service.js';

const wire = ({ terminal: { accountId: _a, ...terminal }, pointOfSale, device }: TerminalView) => ({
  terminal,
  pointOfSale: pointOfSaleWire(pointOfSale).pointOfSale,
  device,
});

export function terminalsRoutes(service: TerminalsService): RouteDef[] {
  return [
    defineRoute({
      auth: 'merchant',
      tags: ['Management'],
      method: 'POST',
      url: '/management/point-of-sales/:pointOfSaleId/terminals',
      summary: 'Add a terminal to a PHYSICAL point of sale',
      idempotent: true,
      schema: { params: PointOfSaleParams, body: CreateTerminalBody, response: { 200: TerminalResponse } },
      handler: async ({ params, body, accountId }) => wire(await service.create(accountId, params.pointOfSaleId, body ?? {})),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Terminals'],
      method: 'GET',
      url: '/terminals',
      summary: 'List terminals (filters pointOfSaleId and deviceId, combinable)',
      rateLimit: 'list',
      schema: { querystring: TerminalListQuery, response: { 200: PageEnvelope(TerminalResponse) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const filter = { pointOfSaleId: query.pointOfSaleId ?? null, deviceId: query.deviceId ?? null };
        const page = await service.list(accountId, filter, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(wire), page.total);
      },
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Terminals'],
      method: 'GET',
      url: '/terminals/:terminalId',
      summary: 'Get a terminal',
      schema: { params: TerminalParams, response: { 200: TerminalResponse } },
      handler: async ({ params, accountId }) => wire(await service.get(accountId, params.terminalId)),
    }),
  ];
}
