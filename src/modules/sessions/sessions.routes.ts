/**
 * Sessions group: POST /cit and GET /sessions/{id} (merchant), the hosted payment window at
 * /pay/{key} (public, server-rendered) with its embed script, and the sandbox control
 * POST /sandbox/v1/sessions/{id}/complete, which takes the same `pay` path as the page.
 */
import { Type } from '@sinclair/typebox';
import { AppError } from '../../shared/errors.js';
import { defineRoute, type HtmlResult, type RouteDef } from '../../shared/route.js';
import {
  checkoutScript,
  type CardField,
  declineMessage,
  notFoundPage,
  paymentDone,
  paymentFailed,
  paymentForm,
  paymentProcessing,
  type StatusView,
} from '../../pages/payment-window.js';
import type { CardInput } from '../payment-methods/card.js';
import type { WalletType } from '../payment-methods/payment-methods.service.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Session } from './session.js';
import {
  CompleteSessionBody,
  CompleteSessionResponse,
  CreateCitBody,
  CreateCitResponse,
  SessionParams,
  SessionResponse,
  sessionWire,
} from './sessions.schemas.js';
import type { SessionsService } from './sessions.service.js';

export const PAY_PATH = '/pay';
export const SANDBOX_PREFIX = '/sandbox/v1';

export const paymentWindowUrl = (baseUrl: string, session: Pick<Session, 'clientKey'>) => `${baseUrl}${PAY_PATH}/${session.clientKey}`;

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 128 }) });
/** The form as the browser posts it: every value a string; checked by the card rules, not here. */
const PaymentForm = Type.Object({
  number: Type.Optional(Type.String({ maxLength: 64 })),
  expiryMonth: Type.Optional(Type.String({ maxLength: 8 })),
  expiryYear: Type.Optional(Type.String({ maxLength: 8 })),
  cvc: Type.Optional(Type.String({ maxLength: 8 })),
  holderName: Type.Optional(Type.String({ maxLength: 128 })),
});

/** Page headers: the window may be framed only by the shop's approved domain, and posts only to itself and the shop. */
function pageHeaders(pointOfSale: PointOfSale | null, session: Session | null): Record<string, string> {
  const domain = pointOfSale?.domain;
  const shop = domain ? [`http://${domain}:*`, `https://${domain}:*`, `http://*.${domain}:*`, `https://*.${domain}:*`].join(' ') : '';
  const redirects = [session?.successUrl, session?.failureUrl]
    .filter((u): u is string => Boolean(u))
    .map((u) => new URL(u).origin)
    .join(' ');
  return {
    'content-security-policy':
      `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'self' ${redirects}; frame-ancestors 'self' ${shop}`.replace(
        /\s+;/g,
        ';',
      ),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

function toCard(form: Record<string, string | undefined>): CardInput {
  const int = (v: string | undefined) => (v !== undefined && /^\s*\d{1,4}\s*$/.test(v) ? Number.parseInt(v, 10) : Number.NaN);
  let expiryYear = int(form.expiryYear);
  // A two-digit year on the form means this century.
  if (Number.isInteger(expiryYear) && expiryYear < 100) expiryYear += 2000;
  return {
    number: (form.number ?? '').replace(/[\s-]/g, ''),
    expiryMonth: int(form.expiryMonth),
    expiryYear,
    cvc: (form.cvc ?? '').trim(),
    holderName: form.holderName?.trim() || null,
  };
}

export function sessionsRoutes(service: SessionsService, options: { sandbox: boolean }): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Sessions'] };

  async function render(
    session: Session,
    baseUrl: string,
    form?: { decline?: string | null; fieldErrors?: Partial<Record<CardField, string>>; values?: Record<string, string | undefined> },
  ): Promise<HtmlResult> {
    const pointOfSale = await service.pointOfSaleOf(session);
    const merchant = pointOfSale.descriptor ?? pointOfSale.name;
    const headers = pageHeaders(pointOfSale, session);
    const status: StatusView = { merchant, amount: session.amount, currency: session.currency, next: null, message: null };
    switch (session.state) {
      case 'COMPLETED':
        return { html: paymentDone({ ...status, next: session.successUrl }), headers };
      case 'EXPIRED':
        return {
          html: paymentFailed({
            ...status,
            next: session.failureUrl,
            message: session.errorCode === 'EXPIRED' ? 'The time for this payment ran out. No money has been taken.' : declineMessage(session.errorCode),
          }),
          headers,
        };
      case 'PROCESSING':
        return { html: paymentProcessing(status), headers };
      default: {
        const fieldErrors = form?.fieldErrors ?? {};
        return {
          status: Object.keys(fieldErrors).length ? 422 : 200,
          headers,
          html: paymentForm({
            merchant,
            amount: session.amount,
            currency: session.currency,
            action: paymentWindowUrl(baseUrl, session),
            attemptsLeft: Math.max(1, session.maxAttempts - session.attempts),
            decline: form?.decline ?? (session.attempts > 0 && session.errorCode ? declineMessage(session.errorCode) : null),
            fieldErrors,
            values: { expiryMonth: form?.values?.expiryMonth, expiryYear: form?.values?.expiryYear, holderName: form?.values?.holderName },
          }),
        };
      }
    }
  }

  const routes: RouteDef[] = [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/cit',
      summary: 'Create a CIT payment session (hosted payment window)',
      idempotent: true,
      schema: { body: CreateCitBody, response: { 200: CreateCitResponse } },
      handler: async ({ body, accountId, baseUrl }) => {
        const session = await service.create(accountId, body);
        return {
          paymentWindowUrl: paymentWindowUrl(baseUrl, session),
          javascript: `${baseUrl}${PAY_PATH}/checkout.js`,
          key: session.clientKey,
          session: sessionWire(session),
        };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/sessions/:sessionId',
      summary: 'Get a CIT session',
      schema: { params: SessionParams, response: { 200: SessionResponse } },
      handler: async ({ params, accountId }) => ({ session: sessionWire(await service.get(accountId, params.sessionId)) }),
    }),
    defineRoute({
      auth: 'public',
      root: true,
      hidden: true,
      tags: ['Sessions'],
      method: 'GET',
      url: `${PAY_PATH}/checkout.js`,
      summary: 'Payment window embed script',
      schema: {},
      handler: async ({ baseUrl }) => ({
        html: checkoutScript(baseUrl),
        contentType: 'application/javascript; charset=utf-8',
        headers: { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' },
      }),
    }),
    defineRoute({
      auth: 'public',
      root: true,
      hidden: true,
      tags: ['Sessions'],
      method: 'GET',
      url: `${PAY_PATH}/:key`,
      summary: 'Hosted payment window',
      schema: { params: KeyParams },
      handler: async ({ params, baseUrl }) => {
        const session = await service.byClientKey(params.key);
        if (!session) return { status: 404, html: notFoundPage(), headers: pageHeaders(null, null) };
        return render(session, baseUrl);
      },
    }),
    defineRoute({
      auth: 'public',
      root: true,
      hidden: true,
      acceptsForm: true,
      tags: ['Sessions'],
      method: 'POST',
      url: `${PAY_PATH}/:key`,
      summary: 'Pay in the hosted payment window',
      schema: { params: KeyParams, body: PaymentForm },
      handler: async ({ params, body, baseUrl, clientIp }) => {
        const session = await service.byClientKey(params.key);
        if (!session) return { status: 404, html: notFoundPage(), headers: pageHeaders(null, null) };
        if (session.state !== 'PENDING') return render(session, baseUrl);
        const form = body as Record<string, string | undefined>;
        try {
          const { session: after } = await service.pay(session, { card: toCard(form) }, clientIp);
          const pointOfSale = await service.pointOfSaleOf(after);
          const redirect =
            after.state === 'COMPLETED'
              ? after.successUrl
              : after.state === 'EXPIRED'
                ? after.failureUrl
                : after.state === 'PROCESSING'
                  ? paymentWindowUrl(baseUrl, after)
                  : null;
          if (redirect) return { status: 303, html: '', headers: { ...pageHeaders(pointOfSale, after), location: redirect } };
          return render(after, baseUrl, { values: form });
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          if (err.code === 'VALIDATION_ERROR' && err.errors) {
            const fieldErrors: Partial<Record<CardField, string>> = {};
            for (const [path, messages] of Object.entries(err.errors)) {
              const field = path.replace(/^card\./, '') as CardField;
              fieldErrors[field] = (messages[0] ?? '').replace(/^\[[^\]]*\]:\s*/, '');
            }
            return render(session, baseUrl, { fieldErrors, values: form });
          }
          // Paid or expired meanwhile (another tab): show where the session stands now.
          return render((await service.byClientKey(params.key)) ?? session, baseUrl);
        }
      },
    }),
  ];

  if (options.sandbox) {
    routes.push(
      defineRoute({
        auth: 'sandbox',
        root: true,
        tags: ['Sandbox'],
        method: 'POST',
        url: `${SANDBOX_PREFIX}/sessions/:sessionId/complete`,
        summary: 'The customer pays in the payment window (card or wallet)',
        schema: { params: SessionParams, body: CompleteSessionBody, response: { 200: CompleteSessionResponse } },
        handler: async ({ params, body, clientIp }) => {
          const session = await service.byIdAnyAccount(params.sessionId);
          if (!session) throw new AppError('NOT_FOUND', 'The session does not exist.');
          let input: { card: CardInput } | { wallet: WalletType };
          if (body.card) input = { card: body.card };
          else if (body.paymentMethodType && body.paymentMethodType !== 'CARD') input = { wallet: body.paymentMethodType };
          else
            throw new AppError('VALIDATION_ERROR', 'Give a card or a wallet paymentMethodType.', {
              card: ['[required]: a card, or a paymentMethodType other than CARD, is required'],
            });
          const { session: after, transaction } = await service.pay(session, input, clientIp);
          return {
            session: sessionWire(after),
            transaction: transaction ? { id: transaction.id, state: transaction.state, errorCode: transaction.errorCode } : null,
          };
        },
      }),
    );
  }
  return routes;
}
