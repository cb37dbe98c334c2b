/** HTTP adapter of in-person sales: the merchant API, the sandbox device control and the virtual terminal page. */
import { Type } from '@sinclair/typebox';
import { AppError } from '../../shared/errors.js';
import { toDecimalString } from '../../shared/money.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
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
      summary: 'Physical sale on a card terminal (confirms creation only; the outcome goes to notificationUrl)',
      schema: { body: SaleBody, response: { 200: SaleResponse, 422: ValidationErrorResponse } },
      handler: async ({ body, accountId, effect }) => ({ transaction: transactionWire(await service.create(accountId, body, effect)) }),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Transactions'],
      method: 'POST',
      url: '/transactions/:transactionId/abort',
      idempotent: true,
      summary: 'Abort an unpaid card terminal transaction before the card is tapped (200 with an empty body)',
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
      summary: 'A customer presents a card on the terminal (pays the sale waiting there)',
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
