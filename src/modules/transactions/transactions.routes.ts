import { cursorEnvelope, decodeCursor, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { FieldErrorCollector } from '../../shared/errors.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { TransactionFilter } from './transactions.repository.js';
import {
  OperationListQuery,
  OperationListResponse,
  operationWire,
  TransactionDetailResponse,
  transactionDetailWire,
  TransactionListQuery,
  TransactionParams,
  TimelineQuery,
  TimelineResponse,
  TransactionListResponse,
  TransactionResponse,
  transactionWire,
} from './transactions.schemas.js';
import type { TransactionsService } from './transactions.service.js';
import type { TimelineService } from './timeline.js';
import type { Static } from '@sinclair/typebox';

type ListQuery = Static<typeof TransactionListQuery>;

/** Query → filter; the paired parameters (amountMode/amount, feeMode/fee) must come together. */
export function toFilter(q: ListQuery): TransactionFilter {
  const errors = new FieldErrorCollector();
  for (const [mode, value] of [
    ['amountMode', 'amount'],
    ['feeMode', 'fee'],
  ] as const) {
    if (q[mode] !== undefined && q[value] === undefined) errors.add(value, 'required', `is required when ${mode} is given`);
    if (q[value] !== undefined && q[mode] === undefined) errors.add(mode, 'required', `is required when ${value} is given`);
  }
  if (q.referenceMode !== undefined && q.reference === undefined) errors.add('reference', 'required', 'is required when referenceMode is given');
  if (q.createdAfter && q.createdBefore && Date.parse(q.createdAfter) > Date.parse(q.createdBefore)) {
    errors.add('createdAfter', 'date', 'must not be after createdBefore');
  }
  errors.throwIfAny();
  const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(v).toISOString());
  return {
    sessionId: q.sessionId,
    terminalId: q.terminalId,
    pointOfSaleId: q.pointOfSaleId,
    subscriptionId: q.subscriptionId,
    billingAgreementChargeId: q.billingAgreementChargeId,
    reference: q.reference,
    referenceMode: q.referenceMode,
    createdBefore: iso(q.createdBefore),
    createdAfter: iso(q.createdAfter),
    customerId: q.customerId,
    currency: q.currency,
    state: q.state,
    type: q.type,
    errorCode: q.errorCode,
    paymentMethodType: q.paymentMethodType,
    paymentMethodSubType: q.paymentMethodSubType,
    amount: q.amountMode !== undefined && q.amount !== undefined ? { mode: q.amountMode, value: q.amount } : undefined,
    fee: q.feeMode !== undefined && q.fee !== undefined ? { mode: q.feeMode, value: q.fee } : undefined,
  };
}

export function transactionsRoutes(service: TransactionsService, timeline?: TimelineService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Transactions'] };
  return [
    ...(timeline ? [timelineRoute(timeline)] : []),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/transactions',
      summary: 'List transactions',
      description:
        "The account's transactions, newest first (`createdAt` desc, then id desc), in the cursor envelope: pass `nextOffset` as " +
        '`offset` for the next page until `hasMore` is false. The cursor is stable under concurrent inserts, so walking every page ' +
        'returns each transaction exactly once. Filters combine (AND): ids (`sessionId`, `terminalId`, `pointOfSaleId`, ' +
        '`subscriptionId`, `billingAgreementChargeId`), `reference` (EXACT or PREFIX with `referenceMode`), `createdAfter`/`createdBefore` ' +
        '(inclusive), `customerId`, `currency`, `state`, `type`, `errorCode`, payment method, and `amount`/`fee` with their ' +
        '`amountMode`/`feeMode` (`EQUAL`, `LESS_THAN`, `GREATER_THAN`) — a mode without its value, or a value without its mode, is a 422. ' +
        'Rate limited as a list endpoint (1 per 5 s, burst 30).',
      rateLimit: 'list',
      schema: { querystring: TransactionListQuery, response: { 200: TransactionListResponse } },
      handler: async ({ query, accountId }) => {
        const filter = toFilter(query);
        const after = decodeCursor(query.offset);
        const rows = await service.list(accountId, filter, after, query.perPage + 1);
        const envelope = cursorEnvelope(query.offset, query.perPage, rows, (tx) => tx);
        return { ...envelope, items: envelope.items.map((tx) => ({ transaction: transactionWire(tx) })) };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/transactions/operations',
      summary: 'List transaction operations',
      description:
        'Operations (AUTHORIZATION, SALE, CAPTURE, REFUND, VOID, RENEW, PAYOUT) of every transaction of the account that reached a ' +
        'final state (`SUCCESS` or `FAILED`; operations still PROCESSING are left out), in the page envelope. Filter by ' +
        '`finalizedAfter`/`finalizedBefore` (RFC 3339) and by one or more `pointOfSaleId` (repeat the parameter). Useful for ' +
        'reconciling what moved in a period. Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: OperationListQuery, response: { 200: OperationListResponse } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(v).toISOString());
        const page = await service.listOperations(
          accountId,
          { finalizedAfter: iso(query.finalizedAfter), finalizedBefore: iso(query.finalizedBefore), pointOfSaleIds: query.pointOfSaleId },
          pageOffset(query.page, query.perPage),
          query.perPage,
        );
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(operationWire), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/transactions/:transactionId',
      summary: 'Get a transaction',
      description:
        'One transaction with its `aggregates` (authorized, captured, refunded, voided, remaining, paidOut — minor units), its ' +
        'operations oldest first, and the acquirer agreement (`acquirer`, `mcc`) that authorized it. `state` is PENDING or PROCESSING ' +
        'until the acquirer answered, then SUCCESS or FAILED (with `errorCode` and the raw `externalStatusCodes`). Use it after a ' +
        "callback, or to poll an asynchronous payment. Another account's transaction is a 404.",
      schema: { params: TransactionParams, response: { 200: TransactionDetailResponse } },
      handler: async ({ params, accountId }) => transactionDetailWire(await service.detail(accountId, params.transactionId)),
    }),
  ];
}

/** GET /transactions/{transactionId}/events: the ordered timeline (issue 12), page envelope. */
function timelineRoute(timeline: TimelineService): RouteDef {
  return defineRoute({
    auth: 'merchant',
    tags: ['Transactions'],
    method: 'GET',
    url: '/transactions/:transactionId/events',
    summary: 'Get the timeline of a transaction',
    description:
      'Everything that happened to one transaction, oldest first, in the page envelope: its creation and state changes, each ' +
      "operation started and finished with the acquirer's raw codes and reference, 3-D Secure steps, the events it emitted, and every " +
      "callback and webhook delivery attempt with the receiver's HTTP status, duration and an excerpt of what went wrong. " +
      'The tool for answering "why did my callback not arrive?".',
    schema: { params: TransactionParams, querystring: TimelineQuery, response: { 200: TimelineResponse } },
    handler: async ({ params, query, accountId, baseUrl, path, rawQuery }) => {
      const entries = await timeline.of(accountId, params.transactionId);
      const offset = pageOffset(query.page, query.perPage);
      return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, entries.slice(offset, offset + query.perPage), entries.length);
    },
  });
}

export { TransactionResponse };
