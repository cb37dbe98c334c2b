/**
 * The dashboard's payment list (issue 46): GET /transactions's use case, filters and cursor, with
 * each transaction's aggregates beside it — what the list needs to show a payment as captured,
 * refunded or voided (INTERFACE §6 keeps the public list items `{transaction}`, and one detail
 * read per row would spend the list rate limit 25 times). Merchant tier, through the session
 * bridge; outside the public API (hidden from OpenAPI), under /dashboard/api/.
 */
import { Type } from '@sinclair/typebox';
import { aggregatesOf } from '../modules/transactions/transaction.js';
import { toFilter } from '../modules/transactions/transactions.routes.js';
import { AggregatesRecord, TransactionListQuery, TransactionRecord, transactionWire } from '../modules/transactions/transactions.schemas.js';
import type { TransactionsService } from '../modules/transactions/transactions.service.js';
import { CursorEnvelope, cursorEnvelope, decodeCursor } from '../shared/pagination.js';
import { defineRoute, type RouteDef } from '../shared/route.js';

export const DASHBOARD_PAYMENTS_PATH = '/dashboard/api/payments';

const PaymentItem = Type.Object({ transaction: TransactionRecord, aggregates: AggregatesRecord });

export function dashboardPaymentsRoutes(service: Pick<TransactionsService, 'list'>): RouteDef[] {
  return [
    defineRoute({
      auth: 'merchant',
      tags: ['Dashboard'],
      root: true,
      hidden: true,
      method: 'GET',
      url: DASHBOARD_PAYMENTS_PATH,
      summary: 'The payment list with each payment’s aggregates (the filters and cursor of GET /transactions)',
      rateLimit: 'list',
      schema: { querystring: TransactionListQuery, response: { 200: CursorEnvelope(PaymentItem) } },
      handler: async ({ query, accountId }) => {
        const rows = await service.list(accountId, toFilter(query), decodeCursor(query.offset), query.perPage + 1);
        const envelope = cursorEnvelope(query.offset, query.perPage, rows, (tx) => tx);
        return {
          ...envelope,
          items: envelope.items.map((tx) => ({ transaction: transactionWire(tx), aggregates: aggregatesOf(tx) })),
        };
      },
    }),
  ];
}
