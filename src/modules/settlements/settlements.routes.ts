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
      summary: 'List settlement transfers',
      description:
        'The bank transfers the acquirer made to the merchant, newest first, in the cursor envelope. A transfer carries its ' +
        "`netAmount` (decimal string: the sum of its transactions' nets plus its own adjustments), `postingDate`, transfer-level " +
        '`adjustments` (FEE, RESERVE, ADJUSTMENT) and `adjustmentSums` (per fee type, over its transactions). Emitted as ' +
        '`settlement.transfer-ready.v1` when ready. Rate limited as a list endpoint.',
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
      description: "One settlement transfer of the account, with its amounts as exact decimal strings in the currency's exponent.",
      schema: { params: TransferParams, response: { 200: SettlementTransferResponse } },
      handler: async ({ params, accountId }) => ({ settlementTransfer: settlementTransferWire(await service.getTransfer(accountId, params.transferId)) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/settlements/transfers/:transferId/transactions',
      summary: 'List the transactions of a settlement transfer',
      description:
        'The settlement records of one transfer, newest first, in the cursor envelope — one per settled capture, sale, refund and ' +
        'payout — each with the transaction it settles. `settlementNetAmount` = gross + the sum of its `adjustments` ' +
        '(`ACQUIRER_FEE`, `INTERCHANGE_FEE`, `SCHEME_FEE`, negative decimal strings); refunds and payouts have a negative gross. ' +
        'Use it to reconcile the bank statement line by line. Rate limited as a list endpoint.',
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
      summary: 'Run a sandbox settlement',
      description:
        'Sandbox only (operator key): settles every capture, sale, refund and payout not yet settled, for every merchant — one ' +
        'transfer per merchant and currency, dated `postingDate` (default today on the service clock). The sandbox fee schedule ' +
        'puts a negative `ACQUIRER_FEE` (and interchange and scheme fees) on every settled row. A run with nothing new to settle ' +
        'creates no transfer and answers an empty list.',
      schema: { body: SettlementRunBody, response: { 200: SettlementRunResponse } },
      handler: async ({ body }) => {
        const { transfers } = await service.run({ postingDate: body?.postingDate });
        return { settlementTransfers: transfers.map((t) => ({ settlementTransfer: settlementTransferWire(t) })) };
      },
    }),
  ];
}
