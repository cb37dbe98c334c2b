/** HTTP adapter of the lifecycle operations: validation by schema, decisions in the service. */
import { fieldError } from '../../shared/errors.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { TransactionParams } from '../transactions/transactions.schemas.js';
import { CaptureBody, CaptureResponse, RefundBody, RefundResponse, RenewResponse, VoidBody, VoidResponse } from './operations.schemas.js';
import type { LifecycleOperations } from './operations.service.js';

export function operationsRoutes(service: LifecycleOperations): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Transactions'], idempotent: true, rateLimit: 'operation' as const };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/capture',
      summary: 'Capture an authorized payment',
      description:
        'Moves `amount` (minor units) of an authorized payment to the merchant, synchronously. Capture in one step, or in several ' +
        'partial captures until the authorization is used up; with `voidRemaining: true` the uncaptured rest is released right after a ' +
        'successful capture (a VOID operation). Use it once the goods ship; payments made with `instantCapture` are captured already.\n\n' +
        "A valid request for a transaction of the account is answered HTTP 200: `success: true` with `state: SUCCESS` (the transaction's " +
        '`aggregates.captured` grows), or `success: false` with `state: FAILED` and `errorCode.code`:\n' +
        '- `DECLINED_BY_ISSUER_OR_SCHEME`: the acquirer declined (a FAILED CAPTURE operation is recorded);\n' +
        '- `AMOUNT_EXCEEDS_REMAINING`: more than the uncaptured authorization (nothing recorded, `operationId` null);\n' +
        '- `INVALID_STATE`: the payment is not authorized, failed, voided, a terminal sale or a payout;\n' +
        '- `ACQUIRER_TIMEOUT` with `state: PROCESSING`: no answer came and the outcome is in doubt; the amount stays reserved ' +
        'until the operation is resolved, and it is never sent twice.\n\n' +
        'Send an `Idempotency-Key`: a retry then never captures twice. Rate limited to 5 per minute per transaction.',
      schema: { params: TransactionParams, body: CaptureBody, response: { 200: CaptureResponse } },
      handler: ({ params, body, accountId, effect }) => service.capture(accountId, params.transactionId, body, effect),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/refund',
      summary: 'Refund a captured payment',
      description:
        'Sends `amount` (minor units) of what was captured back to the customer, in full or in part, synchronously. When the payment ' +
        'was captured in several parts, each capture is refunded in isolation, newest first, and the answer lists one operation per ' +
        'capture touched. Physical (terminal) sales cannot be refunded online: use a `PAYOUT` sale on the terminal.\n\n' +
        'HTTP 200 with `success: true` when every part succeeded (`aggregates.refunded` grows). A refusal is `success: false` with one ' +
        'entry whose `errorCode.code` is `AMOUNT_EXCEEDS_REMAINING` (more than captured and not yet refunded), `INVALID_STATE` (nothing ' +
        'captured) or `DECLINED_BY_ISSUER_OR_SCHEME`. Send an `Idempotency-Key`; rate limited to 5 per minute per transaction.',
      schema: { params: TransactionParams, body: RefundBody, response: { 200: RefundResponse } },
      handler: ({ params, body, accountId, effect }) => service.refund(accountId, params.transactionId, body, effect),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/void',
      summary: 'Void an authorization',
      description:
        'Releases `amount` (minor units) of the uncaptured authorization back to the cardholder before capture; `amount: -1` releases ' +
        'all that remains. A payment that is not authorized yet cannot be voided (wait for its callback), and a physical sale is ' +
        'never voidable.\n\n' +
        'HTTP 200 with `success: true` and `state: SUCCESS` (`aggregates.voided` grows; a fully voided payment accepts no further ' +
        'capture), or `success: false` with `errorCode.code` `INVALID_STATE` (nothing left uncaptured, not authorized, a sale or a payout), ' +
        '`AMOUNT_EXCEEDS_REMAINING` or `DECLINED_BY_ISSUER_OR_SCHEME`. `amount: 0` is a 422. Rate limited to 5 per minute per transaction.',
      schema: { params: TransactionParams, body: VoidBody, response: { 200: VoidResponse } },
      handler: ({ params, body, accountId, effect }) => {
        if (body.amount === 0) throw fieldError('amount', 'min:1', 'must be at least 1, or -1 for the whole remaining authorization');
        return service.void(accountId, params.transactionId, body, effect);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/transactions/:transactionId/renew',
      summary: 'Renew a deferred-payment authorization',
      description:
        'Extends the authorization period of the uncaptured part of a `KLARNA` or `VIABILL` payment, so it can still be captured ' +
        'later. No body. The payment must have an uncaptured authorized balance.\n\n' +
        'HTTP 200 with `success: true` and `state` `SUCCESS` (renewed at once) or `PROCESSING` (finalized later), or `success: false` ' +
        'with `errorCode.code` `NOT_SUPPORTED_FOR_PAYMENT_METHOD` (any other payment method, e.g. cards) or `INVALID_STATE` (nothing left ' +
        'uncaptured, or not authorized). Rate limited to 5 per minute per transaction.',
      schema: { params: TransactionParams, response: { 200: RenewResponse } },
      handler: ({ params, accountId, effect }) => service.renew(accountId, params.transactionId, effect),
    }),
  ];
}
