/** HTTP adapter of in-person sales: the merchant API, the sandbox device control and the virtual terminal page. */
import { Type } from '@sinclair/typebox';
import { AppError } from '../../shared/errors.js';
import { toDecimalString } from '../../shared/money.js';
import { defineRoute, EMPTY_BODY, errorExample, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import { ErrorResponse, ValidationErrorResponse } from '../../shared/wire.js';
import { renderTerminalNotFound, renderVirtualTerminal, terminalMessage, type VirtualTerminalView } from '../../pages/virtual-terminal.js';
import { TransactionParams, transactionWire } from '../transactions/transactions.schemas.js';
import { PageTapBody, SaleBody, SaleResponse, TapBody, TapParams, TapResponse, TerminalStatusResponse } from './sales.schemas.js';
import { VIRTUAL_TERMINAL_CARDS } from './sandbox-cards.js';
import type { SaleRepos, SalesService, TerminalDisplay } from './sales.service.js';

const errors = { 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse };

export function salesRoutes<R extends SaleRepos>(service: SalesService<R>): RouteDef[] {
  return [
    defineRoute({
      auth: 'merchant',
      tags: ['Terminals'],
      method: 'POST',
      url: '/sale',
      idempotent: true,
      summary: 'Start a sale on a card terminal',
      description:
        'Sends an in-person payment to a card terminal of a PHYSICAL point of sale: the terminal named by `terminal.id`, else the ' +
        "point of sale's fallback terminal. The answer confirms creation only — the transaction in state `PENDING` while the " +
        'terminal waits for the card, not that the customer paid. When the card is tapped, the sale (operation `SALE`: authorized ' +
        'and captured in one step, never voidable) ends `SUCCESS` or `FAILED`, and the outcome is POSTed to ' +
        '`transaction.notificationUrl`. `transaction.type: PAYOUT` sends money to the card presented instead: the only way to refund a ' +
        'physical sale.\n\n' +
        'An early rejection answers the final state at once with no callback: `FAILED` with `TERMINAL_BUSY` (another sale is waiting ' +
        'on the terminal) or `TERMINAL_NOT_CONFIGURED`. A point of sale that is not PHYSICAL, or a terminal of another point of sale, is ' +
        'a 422. In the sandbox, pay with `POST /sandbox/v1/terminals/{terminalId}/tap`.',
      errorExamples: {
        422: [
          fieldErrorExample('The point of sale is ONLINE', 'transaction.pointOfSaleId', 'in:PHYSICAL', 'must be a PHYSICAL point of sale'),
          fieldErrorExample(
            'The terminal belongs to another point of sale',
            'terminal.id',
            'in:existing',
            'must be a terminal of the point of sale transaction.pointOfSaleId',
          ),
        ],
      },
      schema: { body: SaleBody, response: { 200: SaleResponse, 422: ValidationErrorResponse } },
      handler: async ({ body, accountId, effect }) => ({ transaction: transactionWire(await service.create(accountId, body, effect)) }),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Transactions'],
      method: 'POST',
      url: '/transactions/:transactionId/abort',
      idempotent: true,
      summary: 'Abort a terminal sale',
      description:
        'Stops a card terminal sale that is waiting for the card, before the customer taps it. The sale ends `FAILED` with ' +
        '`errorCode` `MANUAL_ABORTED` and its callback goes to `notificationUrl`. This is not a void or refund of a paid sale. ' +
        'Answers 200 with an empty body.\n\n' +
        'Refused with 409 `CONFLICT` once a card was presented, when the sale has not reached the terminal yet, or when it is already ' +
        'paid, declined, aborted or expired; 400 `BAD_REQUEST` for a transaction that is not a terminal sale.',
      errorExamples: {
        400: [errorExample('Not a terminal sale', 'BAD_REQUEST', 'Only a card terminal transaction (a physical sale) can be aborted.')],
        409: [
          errorExample('A card was presented already', 'CONFLICT', 'A card has already been presented on the terminal.'),
          errorExample('The sale has not reached the terminal yet', 'CONFLICT', 'The sale has not reached the terminal yet.'),
        ],
      },
      schema: { params: TransactionParams, response: { 200: Type.Null({ description: 'Empty body.' }), ...errors } },
      handler: async ({ params, accountId }) => {
        await service.abort(accountId, params.transactionId);
        return EMPTY_BODY;
      },
    }),
  ];
}

/** Sandbox only: the device side of the terminal. */
export function salesSandboxRoutes<R extends SaleRepos>(service: SalesService<R>): RouteDef[] {
  return [
    defineRoute({
      auth: 'sandbox',
      tags: ['Sandbox'],
      root: true,
      method: 'POST',
      url: '/sandbox/v1/terminals/:terminalId/tap',
      summary: 'Tap a card on a sandbox terminal',
      description:
        'Sandbox only (operator key): the customer presents `card` on the terminal, which pays the sale waiting there. The sandbox test ' +
        "cards decide the outcome (see Sandbox test cards in the introduction). The answer is the sale's transaction in its " +
        'final state (`SUCCESS`, or `FAILED` with `errorCode`); its callback goes to `notificationUrl`. 409 `CONFLICT` when no sale ' +
        'is waiting for a card on the terminal.',
      errorExamples: {
        409: [errorExample('No sale is waiting on this terminal', 'CONFLICT', 'No sale is waiting for a card on this terminal.')],
      },
      schema: { params: TapParams, body: TapBody, response: { 200: TapResponse, ...errors } },
      handler: async ({ params, body }) => ({ transaction: transactionWire(await service.tap(params.terminalId, body.card)) }),
    }),
    // The virtual terminal page. Public like a physical terminal on a counter: whoever has the
    // (unguessable) terminal id may look at it and tap a test card; it accepts test cards only.
    defineRoute({
      auth: 'public',
      tags: ['Sandbox'],
      root: true,
      hidden: true,
      method: 'GET',
      url: '/sandbox/terminals/:terminalId',
      summary: 'Virtual terminal page',
      schema: { params: TapParams },
      handler: async ({ params }) => {
        const display = await service.display(params.terminalId).catch(notFoundAsNull);
        if (!display) return { html: renderTerminalNotFound(), status: 404 };
        return { html: renderVirtualTerminal(pageView(display)) };
      },
    }),
    defineRoute({
      auth: 'public',
      tags: ['Sandbox'],
      root: true,
      hidden: true,
      method: 'GET',
      url: '/sandbox/terminals/:terminalId/status',
      summary: 'What the virtual terminal shows',
      schema: { params: TapParams, response: { 200: TerminalStatusResponse } },
      handler: async ({ params }) => statusOf(await service.display(params.terminalId)),
    }),
    defineRoute({
      auth: 'public',
      tags: ['Sandbox'],
      root: true,
      hidden: true,
      method: 'POST',
      url: '/sandbox/terminals/:terminalId/tap',
      summary: 'Tap a test card on the virtual terminal',
      schema: { params: TapParams, body: PageTapBody, response: { 200: TerminalStatusResponse } },
      handler: async ({ params, body }) => {
        const card = VIRTUAL_TERMINAL_CARDS[body.card];
        const tx = await service.tap(params.terminalId, { number: card.number, expiryMonth: 12, expiryYear: 2099, cvc: '123', holderName: 'Virtual Terminal' });
        const status = statusOf(await service.display(params.terminalId));
        // The tapped sale no longer holds the terminal once final: report its outcome.
        return status.sale
          ? status
          : {
              ...status,
              message: `${tx.type === 'PAYOUT' ? 'Payout' : 'Payment'} ${tx.state === 'SUCCESS' ? 'approved' : `failed${tx.errorCode ? ` (${tx.errorCode})` : ''}`}.`,
            };
      },
    }),
  ];
}

function notFoundAsNull(err: unknown): null {
  if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
  throw err;
}

function saleView(display: TerminalDisplay): VirtualTerminalView['sale'] {
  if (!display.sale) return null;
  const tx = display.sale.transaction;
  return {
    transactionId: tx.id,
    type: tx.type,
    state: tx.state,
    stage: display.sale.stage,
    displayAmount: `${tx.currency} ${toDecimalString(tx.amount, tx.currency)}`,
    reference: tx.reference,
    request: display.sale.request,
  };
}

function pageView(display: TerminalDisplay): VirtualTerminalView {
  return {
    terminalId: display.terminal.id,
    terminalName: display.terminal.name,
    sale: saleView(display),
    cards: Object.entries(VIRTUAL_TERMINAL_CARDS).map(([key, c]) => ({ key, label: c.label })),
  };
}

function statusOf(display: TerminalDisplay) {
  const view = saleView(display);
  const tx = display.sale?.transaction;
  return {
    message: terminalMessage(view),
    terminal: { id: display.terminal.id, name: display.terminal.name },
    sale: view && tx ? { ...view, amount: tx.amount, currency: tx.currency } : null,
  };
}
