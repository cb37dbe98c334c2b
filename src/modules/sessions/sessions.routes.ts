/**
 * Sessions group: POST /cit and GET /sessions/{id} (merchant), the hosted payment window at
 * /pay/{key} (public, server-rendered) with its embed script, and the sandbox control
 * POST /sandbox/v1/sessions/{id}/complete, which takes the same `pay` path as the page.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { challengeDonePage, challengePage, methodDonePage, methodPage } from '../../pages/three-d-secure.js';
import { METHOD_WAIT_MS } from '../three-d-secure/three-ds-attempt.js';
import type { Authenticated, FlowUrls, ThreeDSecureService } from '../three-d-secure/three-d-secure.service.js';
import { AppError } from '../../shared/errors.js';
import { defineRoute, errorExample, fieldErrorExample, type HtmlResult, type RouteDef } from '../../shared/route.js';
import {
  ageStep,
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
import { fromDecimalString, MAX_AMOUNT, toDecimalString } from '../../shared/money.js';
import type { CardInput } from '../payment-methods/card.js';
import type { WalletType } from '../payment-methods/payment-methods.service.js';
import { approvedDomainRule, type PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Session } from './session.js';
import {
  CompleteSessionBody,
  CompleteSessionResponse,
  CreateCitBody,
  CreateCitResponse,
  SessionParams,
  PAYABLE_TYPES,
  SessionResponse,
  sessionWire,
} from './sessions.schemas.js';
import type { PaymentExtras, PaymentInput, SessionsService } from './sessions.service.js';

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
  /** The button pressed: CARD (the card form) or a wallet. */
  paymentMethodType: Type.Optional(Type.String({ maxLength: 32 })),
  /** dynamicAmount: the amount as typed, in major units ("12.50"). */
  amount: Type.Optional(Type.String({ maxLength: 32 })),
});
const AgeForm = Type.Object({
  dateOfBirth: Type.Optional(Type.String({ maxLength: 32 })),
  verify: Type.Optional(Type.String({ maxLength: 8 })),
});

/** What the window offers: the payable types the session allows (all when it names none). */
function offered(session: Session): { card: boolean; wallets: string[] } {
  const allowed = session.allowedPaymentMethods;
  const types = PAYABLE_TYPES.filter((t) => !allowed || allowed.includes(t));
  return { card: types.includes('CARD'), wallets: types.filter((t) => t !== 'CARD') };
}

/** "12.50" (major units, as typed) → minor units; null when it is not an amount. */
function typedAmount(text: string, currency: string): number | null {
  try {
    const minor = fromDecimalString(text.trim().replace(/\s/g, ''), currency);
    return minor > 0n && minor <= BigInt(MAX_AMOUNT) ? Number(minor) : null;
  } catch {
    return null;
  }
}

/** After an attempt in the window: where the browser goes (null: show the window again). */
function nextLocation(after: Session, baseUrl: string): string | null {
  switch (after.state) {
    case 'COMPLETED':
      return after.successUrl;
    case 'EXPIRED':
      return after.failureUrl;
    case 'PROCESSING':
      return paymentWindowUrl(baseUrl, after);
    default:
      // A failed attempt with attempts left: the shop's retry page, else the window again.
      return after.attempts > 0 && after.errorCode ? (after.retryUrl ?? null) : null;
  }
}

/**
 * Page headers: the window may be framed only by the shop's approved domain, and posts only to itself
 * and the shop. A 3-D Secure step's page (`script`) also runs its inline script by its nonce, and
 * frames and posts to the ACS's origin and to this service (the ACS's page posts back here).
 */
function pageHeaders(pointOfSale: PointOfSale | null, session: Session | null, script?: { nonce: string; acsUrl: string | null }): Record<string, string> {
  const domain = pointOfSale?.domain;
  const shop = domain ? [`http://${domain}:*`, `https://${domain}:*`, `http://*.${domain}:*`, `https://*.${domain}:*`].join(' ') : '';
  const acs = script?.acsUrl ? new URL(script.acsUrl).origin : '';
  const redirects = [session?.successUrl, session?.failureUrl, session?.retryUrl, session?.returnUrl]
    .filter((u): u is string => Boolean(u))
    .map((u) => new URL(u).origin)
    .join(' ');
  const scripts = script ? `script-src 'nonce-${script.nonce}'; frame-src 'self' ${acs};` : '';
  return {
    'content-security-policy':
      `default-src 'none'; ${scripts} style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'self' ${acs} ${redirects}; frame-ancestors 'self' ${shop}`
        .replace(/\s+;/g, ';')
        .replace(/\s{2,}/g, ' '),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

/** A fresh nonce for one page's inline script. */
const newNonce = (): string => randomBytes(16).toString('base64');

/** The payment window's pages: public, at the root, kept out of the API document. */
const WINDOW_PAGE = { auth: 'public' as const, root: true, hidden: true, tags: ['Sessions'] };

/** The answer of a payment-window page whose key matches no session. */
function notFound(): HtmlResult {
  return { status: 404, html: notFoundPage(), headers: pageHeaders(null, null) };
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

export function sessionsRoutes(service: SessionsService, options: { sandbox: boolean; threeDS?: ThreeDSecureService | null }): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Sessions'] };
  const threeDS = options.threeDS ?? null;

  /** One attempt in the window, and where the browser goes after it (a redirect, or the window again). */
  async function payInWindow(
    session: Session,
    input: PaymentInput,
    clientIp: string,
    extras: PaymentExtras,
    baseUrl: string,
    values: Record<string, string | undefined>,
    paid?: (transactionId: string) => Promise<void>,
  ): Promise<HtmlResult> {
    try {
      const { session: after, transaction } = await service.pay(session, input, clientIp, extras);
      if (transaction && paid) await paid(transaction.id);
      const pointOfSale = await service.pointOfSaleOf(after);
      const redirect = nextLocation(after, baseUrl);
      if (redirect) return { status: 303, html: '', headers: { ...pageHeaders(pointOfSale, after), location: redirect } };
      return render(after, baseUrl, { values });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'VALIDATION_ERROR' && err.errors) {
        const fieldErrors: Partial<Record<CardField, string>> = {};
        for (const [path, messages] of Object.entries(err.errors)) {
          const field = path.replace(/^card\./, '') as CardField;
          fieldErrors[field] = (messages[0] ?? '').replace(/^\[[^\]]*\]:\s*/, '');
        }
        return render(session, baseUrl, { fieldErrors, values });
      }
      // Paid or expired meanwhile (another tab): show where the session stands now.
      return render((await service.byClientKey(session.clientKey)) ?? session, baseUrl);
    }
  }

  /** The URLs the 3DS Server and the ACS are given (PAYMENTS_PUBLIC_URL). */
  const flowUrls = (baseUrl: string, pointOfSale: PointOfSale): FlowUrls => ({
    methodNotification: (attemptId) => `${baseUrl}${PAY_PATH}/3ds/method/${attemptId}`,
    challengeNotification: `${baseUrl}${PAY_PATH}/3ds/challenge`,
    requestor: pointOfSale.domain ? `https://${pointOfSale.domain}` : baseUrl,
  });

  async function render(
    session: Session,
    baseUrl: string,
    form?: { decline?: string | null; fieldErrors?: Partial<Record<CardField, string>>; values?: Record<string, string | undefined>; ageError?: string | null },
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
        const decline = form?.decline ?? (session.attempts > 0 && session.errorCode ? declineMessage(session.errorCode) : null);
        const attemptsLeft = Math.max(1, session.maxAttempts - session.attempts);
        if ((session.minimumAge ?? null) !== null && !session.ageVerified) {
          return {
            status: form?.ageError ? 422 : 200,
            headers,
            html: ageStep({
              merchant,
              amount: session.dynamicAmount ? -1 : session.amount,
              currency: session.currency,
              action: `${paymentWindowUrl(baseUrl, session)}/age`,
              minimumAge: session.minimumAge!,
              attemptsLeft,
              decline,
              fieldError: form?.ageError ?? null,
            }),
          };
        }
        const fieldErrors = form?.fieldErrors ?? {};
        return {
          status: Object.keys(fieldErrors).length ? 422 : 200,
          headers,
          html: paymentForm({
            merchant,
            amount: session.amount,
            currency: session.currency,
            action: paymentWindowUrl(baseUrl, session),
            attemptsLeft,
            decline,
            fieldErrors,
            values: {
              expiryMonth: form?.values?.expiryMonth,
              expiryYear: form?.values?.expiryYear,
              holderName: form?.values?.holderName,
              amount: form?.values?.amount,
            },
            orderLines: session.orderLines ?? null,
            dynamicAmount: session.dynamicAmount ?? false,
            ...offered(session),
          }),
        };
      }
    }
  }

  /** The payment window's 3-D Secure steps (INTERFACE §13). */
  function threeDSRoutes(flow: ThreeDSecureService): RouteDef[] {
    const AttemptParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 128 }), attemptId: Type.String({ minLength: 1, maxLength: 64 }) });
    const BrowserForm = Type.Record(Type.String(), Type.String({ maxLength: 2048 }));
    const frameHeaders = (nonce: string) => ({
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'self'`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    });
    /** The window after a decided 3-D Secure step: the payment, and where the browser goes. */
    const payDecided = async (session: Session, decided: Extract<Authenticated, { kind: 'decided' }>, clientIp: string, baseUrl: string) => {
      const extras: PaymentExtras = { threeDS: decided.decision };
      if (session.dynamicAmount) extras.amount = decided.amount;
      // The payment's timeline shows the steps that led to it.
      return payInWindow(session, { card: decided.card }, clientIp, extras, baseUrl, {}, (transactionId) =>
        flow.linkTransaction(decided.attemptId, transactionId),
      );
    };
    return [
      defineRoute({
        ...WINDOW_PAGE,
        acceptsForm: true,
        method: 'POST',
        url: `${PAY_PATH}/3ds/method/:attemptId`,
        summary: "3-D Secure: the ACS's 3DS Method notification (threeDSMethodNotificationURL)",
        schema: {
          params: Type.Object({ attemptId: Type.String({ minLength: 1, maxLength: 64 }) }),
          body: Type.Record(Type.String(), Type.String({ maxLength: 4096 })),
        },
        handler: async ({ params }) => {
          await flow.methodCompleted(params.attemptId);
          const nonce = newNonce();
          return { html: methodDonePage(nonce), headers: frameHeaders(nonce) };
        },
      }),
      defineRoute({
        ...WINDOW_PAGE,
        acceptsForm: true,
        method: 'POST',
        url: `${PAY_PATH}/:key/3ds/:attemptId`,
        summary: "3-D Secure: the browser's fields, then the AReq",
        schema: { params: AttemptParams, body: BrowserForm },
        handler: async ({ params, body, headers, baseUrl, clientIp }) => {
          const session = await service.byClientKey(params.key);
          if (!session) return notFound();
          if (session.state !== 'PENDING') return render(session, baseUrl);
          const header = (name: string) => {
            const value = headers[name];
            return (Array.isArray(value) ? value[0] : value) ?? '';
          };
          const pointOfSale = await service.pointOfSaleOf(session);
          const result = await flow.authenticate(
            params.attemptId,
            session.id,
            session.scaMode,
            session.currency,
            {
              acceptHeader: header('accept'),
              userAgent: header('user-agent'),
              ip: clientIp,
              javascriptEnabled: body.javascriptEnabled === 'true',
              language: body.language || null,
              javaEnabled: body.javaEnabled === undefined ? null : body.javaEnabled === 'true',
              colorDepth: body.colorDepth || null,
              screenHeight: body.screenHeight || null,
              screenWidth: body.screenWidth || null,
              timezoneOffset: body.timezoneOffset || null,
            },
            flowUrls(baseUrl, pointOfSale),
          );
          if (result.kind === 'gone') return render(session, baseUrl);
          if (result.kind === 'decided') return payDecided(session, result, clientIp, baseUrl);
          const nonce = newNonce();
          return {
            headers: pageHeaders(pointOfSale, session, { nonce, acsUrl: result.acsUrl }),
            html: challengePage({
              merchant: pointOfSale.descriptor ?? pointOfSale.name,
              amount: session.amount,
              currency: session.currency,
              acsUrl: result.acsUrl,
              creq: result.creq,
              sessionData: result.sessionData,
              nonce,
            }),
          };
        },
      }),
      defineRoute({
        ...WINDOW_PAGE,
        acceptsForm: true,
        method: 'POST',
        url: `${PAY_PATH}/3ds/challenge`,
        summary: "3-D Secure: the challenge's CRes (notificationURL)",
        schema: { body: Type.Record(Type.String(), Type.String({ maxLength: 8192 })) },
        handler: async ({ body, baseUrl, clientIp }) => {
          const result = await flow.challengeCompleted(body.cres, async (sessionId) => (await service.byIdAnyAccount(sessionId))?.scaMode ?? null);
          const nonce = newNonce();
          if (result.kind !== 'decided') return { status: 404, html: notFoundPage(), headers: frameHeaders(nonce) };
          const session = await service.byIdAnyAccount(result.sessionId);
          if (!session) return { status: 404, html: notFoundPage(), headers: frameHeaders(nonce) };
          const answered = await payDecided(session, result, clientIp, baseUrl);
          const next = answered.headers?.location ?? paymentWindowUrl(baseUrl, session);
          return { html: challengeDonePage(next, nonce), headers: frameHeaders(nonce) };
        },
      }),
    ];
  }

  const routes: RouteDef[] = [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/cit',
      summary: 'Create a CIT payment session',
      description:
        'Starts a customer-initiated payment: the answer holds `paymentWindowUrl`, the hosted payment window where the customer ' +
        "pays (redirect to it, or embed it with the `javascript` script and the session's public `key`). Settings left out are taken " +
        "from the point of sale's `hostedConfiguration`; URLs must be on its approved domain (else 422 on that field).\n\n" +
        '- `amount: 0` stores the card only; `customerId` links the stored card to the customer;\n' +
        '- `subscription` (`type` SCHEDULED with an `interval`, or UNSCHEDULED) creates an ACTIVE subscription when the session ' +
        'completes, for later `POST /mit`; with `subscription.billingAgreement` the agreement on that plan is created too;\n' +
        '- `scaMode` (SKIP, NORMAL, FORCE) decides 3-D Secure; `instantCapture` captures at once.\n\n' +
        'The session is `PENDING` until the customer submits, `PROCESSING` while a payment runs, then `COMPLETED` (paid; ' +
        '`transactionId` set) or `EXPIRED` after `timeout` minutes; a failed attempt leaves it open while `maxAttempts` allow. The ' +
        'outcome goes to `notificationUrl`, and the customer to `successUrl` or `failureUrl`.',
      errorExamples: {
        422: [fieldErrorExample('notificationUrl is off the approved domain', 'notificationUrl', 'url', approvedDomainRule('shop.example.com'))],
      },
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
      description:
        'One CIT session: `state` (PENDING, PROCESSING, COMPLETED, EXPIRED), `attempts`, and once known the `transactionId`, ' +
        '`subscriptionId` and `paymentMethodId` it produced. Poll it when the callback has not arrived, or to find the subscription ' +
        'a card-storing session created.',
      schema: { params: SessionParams, response: { 200: SessionResponse } },
      handler: async ({ params, accountId }) => ({ session: sessionWire(await service.get(accountId, params.sessionId)) }),
    }),
    defineRoute({
      ...WINDOW_PAGE,
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
      ...WINDOW_PAGE,
      method: 'GET',
      url: `${PAY_PATH}/:key`,
      summary: 'Hosted payment window',
      schema: { params: KeyParams },
      handler: async ({ params, baseUrl }) => {
        const session = await service.byClientKey(params.key);
        if (!session) return notFound();
        return render(session, baseUrl);
      },
    }),
    defineRoute({
      ...WINDOW_PAGE,
      acceptsForm: true,
      method: 'POST',
      url: `${PAY_PATH}/:key`,
      summary: 'Pay in the hosted payment window',
      schema: { params: KeyParams, body: PaymentForm },
      handler: async ({ params, body, baseUrl, clientIp }) => {
        const session = await service.byClientKey(params.key);
        if (!session) return notFound();
        if (session.state !== 'PENDING') return render(session, baseUrl);
        const form = body as Record<string, string | undefined>;
        const type = form.paymentMethodType ?? 'CARD';
        if (!(PAYABLE_TYPES as readonly string[]).includes(type))
          return render(session, baseUrl, { fieldErrors: { paymentMethodType: 'Choose a payment method shown on this page.' }, values: form });
        const extras: PaymentExtras = {};
        if (session.dynamicAmount) {
          const amount = typedAmount(form.amount ?? '', session.currency);
          if (amount === null) {
            return render(session, baseUrl, {
              fieldErrors: { amount: `Enter an amount greater than 0, for example ${toDecimalString(1250, session.currency)}.` },
              values: form,
            });
          }
          extras.amount = amount;
        }
        const input: PaymentInput = type === 'CARD' ? { card: toCard(form) } : { wallet: type as WalletType };
        if (threeDS && 'card' in input) {
          // 3-D Secure first (INTERFACE §13): the card is checked as the payment would check it.
          let amount: number;
          try {
            amount = service.validatePayment(input, session, extras);
          } catch {
            return payInWindow(session, input, clientIp, extras, baseUrl, form); // its refusal, shown as any other
          }
          const pointOfSale = await service.pointOfSaleOf(session);
          const started = await threeDS.start(
            { accountId: session.accountId, sessionId: session.id, scaMode: session.scaMode, amount, currency: session.currency, card: input.card },
            flowUrls(baseUrl, pointOfSale),
          );
          if (started.kind === 'decided') extras.threeDS = started.decision;
          if (started.kind === 'method') {
            const nonce = newNonce();
            const method = started.attempt.methodUrl && started.methodData ? { url: started.attempt.methodUrl, data: started.methodData } : null;
            return {
              headers: pageHeaders(pointOfSale, session, { nonce, acsUrl: method?.url ?? null }),
              html: methodPage({
                merchant: pointOfSale.descriptor ?? pointOfSale.name,
                amount,
                currency: session.currency,
                method,
                action: `${paymentWindowUrl(baseUrl, session)}/3ds/${started.attempt.id}`,
                nonce,
                waitMs: METHOD_WAIT_MS,
              }),
            };
          }
        }
        return payInWindow(session, input, clientIp, extras, baseUrl, form);
      },
    }),
    defineRoute({
      ...WINDOW_PAGE,
      acceptsForm: true,
      method: 'POST',
      url: `${PAY_PATH}/:key/age`,
      summary: 'The age step of the hosted payment window (sandbox eID: a date of birth)',
      schema: { params: KeyParams, body: AgeForm },
      handler: async ({ params, body, baseUrl, clientIp }) => {
        const session = await service.byClientKey(params.key);
        if (!session) return notFound();
        if (session.state !== 'PENDING') return render(session, baseUrl);
        const verified = body.verify !== '0';
        const dateOfBirth = body.dateOfBirth?.trim() ?? '';
        if (verified && !/^\d{4}-\d{2}-\d{2}$/.test(dateOfBirth)) return render(session, baseUrl, { ageError: 'Enter your date of birth (YYYY-MM-DD).' });
        try {
          const { session: after, transaction } = await service.verifyAge(session, verified ? dateOfBirth : null, clientIp);
          // Verified: on to the payment form; a failed attempt goes where any failed attempt goes.
          const redirect = (transaction ? nextLocation(after, baseUrl) : null) ?? paymentWindowUrl(baseUrl, after);
          return { status: 303, html: '', headers: { ...pageHeaders(await service.pointOfSaleOf(after), after), location: redirect } };
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          return render((await service.byClientKey(params.key)) ?? session, baseUrl);
        }
      },
    }),
    ...(threeDS ? threeDSRoutes(threeDS) : []),
  ];

  if (options.sandbox) {
    routes.push(
      defineRoute({
        auth: 'sandbox',
        root: true,
        tags: ['Sandbox'],
        method: 'POST',
        url: `${SANDBOX_PREFIX}/sessions/:sessionId/complete`,
        summary: 'Pay a session in the sandbox',
        description:
          'Sandbox only (operator key): does what the customer does in the payment window — pays with `card` (the sandbox test ' +
          'cards decide the outcome: approval, each decline code, a 3-D Secure challenge; see Sandbox test cards in the introduction) ' +
          'or with a wallet `paymentMethodType` (e.g. `KLARNA`, `VIABILL`). The ' +
          "answer is the session and the attempt's transaction; a declined attempt leaves the session open while attempts remain. " +
          '409 `CONFLICT` when the session is no longer payable (completed, expired, or a payment is running).',
        errorExamples: { 409: [errorExample('The session is paid or expired', 'CONFLICT', 'The session changed meanwhile (paid or expired).')] },
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
          const extras: PaymentExtras = { amount: body.amount };
          if (body.ageVerification) extras.dateOfBirth = body.ageVerification.dateOfBirth;
          const { session: after, transaction } = await service.pay(session, input, clientIp, extras);
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
