/** HTTP adapter of settlements: the merchant's reads and the sandbox run (INTERFACE §7, §9). */
import { cursorEnvelope, decodeCursor } from '../../shared/pagination.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { SANDBOX_PREFIX } from '../sandbox/sandbox.routes.js';
import {
  SettlementListQuery,
  SettlementRunBody,
  SettlementRunResponse,
  SettlementTransactionList,
  SettlementTransferList,
  SettlementTransferResponse,
  settlementItemWire,
  settlementTransferWire,
  TransferParams,
} from './settlements.schemas.js';
import type { SettlementsService } from './settlements.service.js';

export function settlementsRoutes(service: SettlementsService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Settlements'] };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/settlements/transfers',
      summary: 'List settlement transfers (cursor pagination, newest first)',
      rateLimit: 'list',
      schema: { querystring: SettlementListQuery, response: { 200: SettlementTransferList } },
      handler: async ({ query, accountId }) => {
        const rows = await service.listTransfers(accountId, decodeCursor(query.offset), query.perPage + 1);
        const envelope = cursorEnvelope(query.offset, query.perPage, rows, (t) => ({ createdAt: t.createdAt!, id: t.id }));
        return { ...envelope, items: envelope.items.map((t) => ({ settlementTransfer: settlementTransferWire(t) })) };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/settlements/transfers/:transferId',
      summary: 'Get a settlement transfer',
      schema: { params: TransferParams, response: { 200: SettlementTransferResponse } },
      handler: async ({ params, accountId }) => ({ settlementTransfer: settlementTransferWire(await service.getTransfer(accountId, params.transferId)) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/settlements/transfers/:transferId/transactions',
      summary: "List a transfer's settlement transactions with their transactions (cursor pagination, newest first)",
      rateLimit: 'list',
      schema: { params: TransferParams, querystring: SettlementListQuery, response: { 200: SettlementTransactionList } },
      handler: async ({ params, query, accountId }) => {
        const rows = await service.listTransactions(accountId, params.transferId, decodeCursor(query.offset), query.perPage + 1);
        const envelope = cursorEnvelope(query.offset, query.perPage, rows, (r) => r.settlementTransaction);
        return { ...envelope, items: envelope.items.map((item) => settlementItemWire(item, service.feeDescriptions)) };
      },
    }),
  ];
}

export function settlementsSandboxRoutes(service: SettlementsService): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      url: `${SANDBOX_PREFIX}/settlements/run`,
      auth: 'sandbox',
      root: true,
      tags: ['Sandbox'],
      summary: 'Settle every capture, sale, refund and payout not yet settled: one transfer per merchant and currency',
      schema: { body: SettlementRunBody, response: { 200: SettlementRunResponse } },
      handler: async ({ body }) => {
        const { transfers } = await service.run({ postingDate: body?.postingDate });
        return { settlementTransfers: transfers.map((t) => ({ settlementTransfer: settlementTransferWire(t) })) };
      },
    }),
  ];
}
