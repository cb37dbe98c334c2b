import { pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import { pointOfSaleWire } from '../points-of-sale/points-of-sale.routes.js';
import { PointOfSaleParams } from '../points-of-sale/points-of-sale.schemas.js';
import { CreateTerminalBody, TerminalList, TerminalListQuery, TerminalParams, TerminalResponse } from './terminals.schemas.js';
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
      summary: 'Add a card terminal',
      description:
        'Adds a card terminal to a PHYSICAL point of sale (422 on `pointOfSaleId` for an ONLINE one); in the sandbox it runs on a ' +
        'simulated device. A point of sale has at most one fallback terminal — the one `POST /sale` uses when no `terminal.id` is ' +
        'given: the first terminal, unless another is created with `fallback: true`. Answers the terminal, its point of sale and its ' +
        'device.',
      errorExamples: {
        422: [fieldErrorExample('The point of sale is ONLINE', 'pointOfSaleId', 'in:PHYSICAL', 'terminals can only be added to a PHYSICAL point of sale')],
      },
      idempotent: true,
      schema: { params: PointOfSaleParams, body: CreateTerminalBody, response: { 200: TerminalResponse } },
      handler: async ({ params, body, accountId }) => wire(await service.create(accountId, params.pointOfSaleId, body ?? {})),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Terminals'],
      method: 'GET',
      url: '/terminals',
      summary: 'List terminals',
      description:
        "The account's card terminals with their points of sale and devices, in the page envelope; filter by `pointOfSaleId` and " +
        '`deviceId` (combinable). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: TerminalListQuery, response: { 200: TerminalList } },
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
      description: 'One card terminal with its point of sale and its device (null when none is attached).',
      schema: { params: TerminalParams, response: { 200: TerminalResponse } },
      handler: async ({ params, accountId }) => wire(await service.get(accountId, params.terminalId)),
    }),
  ];
}
