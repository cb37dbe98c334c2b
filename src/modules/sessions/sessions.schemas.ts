import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, DateOnly, DateTime, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { WALLET_TYPES } from '../payment-methods/payment-methods.service.js';
import { SUBSCRIPTION_TYPES } from '../subscriptions/subscription.js';
import { IntervalSchema } from '../subscriptions/subscriptions.schemas.js';
import { EXEMPTIONS, INSTANT_CAPTURE_MODES, SCA_MODES } from '../transactions/transaction.js';
import { type Session, SESSION_STATES } from './session.js';

const NullableString = Nullable(Type.String());

/** An order line as returned (OrderLine of session.ts): a session's, and the multi-link's it was copied from. */
export const OrderLineRecord = Type.Object({
  description: Type.String(),
  imageUrl: NullableString,
  quantity: Type.Integer(),
  unitPrice: Type.Integer(),
  totalAmount: Type.Integer(),
  type: Type.String(),
});

const Opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));

export const BillingAgreementInput = Type.Object({
  billingPlanId: Uuid,
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  nextChargeAt: Opt(Type.String({ minLength: 10, maxLength: 40, description: 'Date-time, or a date meaning 00:00 UTC that day.' })),
});

export const CitSubscriptionInput = Type.Object({
  id: Opt({
    ...Uuid,
    description:
      "An existing ACTIVE subscription of the merchant: when the session succeeds its payment method is replaced by the new one (type and the rest are the subscription's own).",
  }),
  amount: Opt({ ...Amount, description: 'The expected recurring amount (minor units, ≥ 0), recorded with the session (and on the subscription when ≥ 1).' }),
  type: Type.Optional(StringEnum(SUBSCRIPTION_TYPES, { description: 'Required unless `id` names an existing subscription.' })),
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  expiryDate: Opt(DateOnly),
  interval: Opt(IntervalSchema),
  billingAgreement: Opt(BillingAgreementInput),
});

/** `reference` of POST /cit, payment links and multi-links (INTERFACE §11.2). */
export const REFERENCE_PATTERN = '^[A-Za-z0-9-]{1,36}$';

/** `paymentMethodType` values of INTERFACE §7: what `allowedPaymentMethods` may name. */
export const PAYMENT_METHOD_TYPES = ['CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA'] as const;
/** What the window and the sandbox control can pay with: a card or a wallet the payment methods module stores. */
export const PAYABLE_TYPES = ['CARD', ...WALLET_TYPES] as const;

/** The window asks the customer to verify their age (the sandbox simulates the Danish eID with a date of birth). */
export const AgeVerificationInput = Type.Object({
  minimumAge: Type.Integer({ minimum: 0, maximum: 99 }),
  country: StringEnum(['DK'] as const),
});

/** EUR 25.00 for order-1042; the card is stored for later MITs (an UNSCHEDULED subscription). */
const CIT_REQUEST_EXAMPLE = {
  pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
  amount: 2500,
  currency: 'EUR',
  reference: 'order-1042',
  customerId: 'customer-81',
  notificationUrl: 'https://shop.example.com/payments/callback',
  successUrl: 'https://shop.example.com/checkout/success',
  failureUrl: 'https://shop.example.com/checkout/failure',
  subscription: { type: 'UNSCHEDULED', reference: 'customer-81-card' },
};

/** POST /cit (INTERFACE §7, §11.2). Omitted options take the point of sale's hostedConfiguration. */
export const CreateCitBody = Type.Object(
  {
    pointOfSaleId: Uuid,
    amount: Amount,
    currency: Currency,
    reference: Opt(Type.String({ pattern: REFERENCE_PATTERN, description: '1–36 letters, digits and hyphens.' })),
    scaMode: Opt(StringEnum(SCA_MODES)),
    timeout: Opt(Type.Integer({ minimum: 1, maximum: 120, description: "Minutes until the session expires (default: the point of sale's, else 30)." })),
    instantCapture: Opt(StringEnum(INSTANT_CAPTURE_MODES)),
    exemptions: Opt(Type.Array(StringEnum(EXEMPTIONS), { maxItems: 2 })),
    textOnStatement: Opt(Type.String({ minLength: 1, maxLength: 39 })),
    attributes: Opt(Attributes),
    customerId: Opt(Type.String({ minLength: 1, maxLength: 255 })),
    maxAttempts: Opt(Type.Integer({ minimum: 1, maximum: 10 })),
    notificationUrl: Opt(Url),
    successUrl: Opt(Url),
    failureUrl: Opt(Url),
    reportFailure: Opt(Type.Boolean()),
    subscription: Opt(CitSubscriptionInput),
    allowedPaymentMethods: Opt(
      Type.Array(StringEnum(PAYMENT_METHOD_TYPES), {
        maxItems: PAYMENT_METHOD_TYPES.length,
        description: 'The payment method types the window offers; null or empty: all.',
      }),
    ),
    dynamicAmount: Opt(Type.Boolean({ description: 'The customer enters the amount in the window; `amount` is the default.' })),
    preAuthUrl: Opt({
      ...Url,
      description:
        "POSTed {session, transaction} (transaction PROCESSING) with the point of sale's Authorization value before each authorization; a 2xx within 5 s lets it proceed, anything else ends the attempt FAILED with REJECTED_BY_MERCHANT.",
    }),
    retryUrl: Opt({ ...Url, description: 'Where the customer goes after a failed attempt while attempts remain (null: failureUrl).' }),
    returnUrl: Opt({ ...Url, description: 'Where a cancelled redirect-based method returns (null: failureUrl).' }),
    reportExpired: Opt(Type.Boolean({ description: 'A NotificationWebhook with session.state EXPIRED goes to notificationUrl when the session expires.' })),
    ageVerification: Opt(AgeVerificationInput),
    processor: Type.Optional(Type.Unknown({ description: 'Accepted and ignored (deprecated).' })),
  },
  { examples: [CIT_REQUEST_EXAMPLE] },
);

const SubscriptionRequestRecord = Type.Object({
  id: NullableString,
  amount: Nullable(Type.Integer()),
  type: StringEnum(SUBSCRIPTION_TYPES),
  reference: NullableString,
  expiryDate: NullableString,
  interval: Nullable(IntervalSchema),
  billingAgreement: Nullable(Type.Object({ billingPlanId: Type.String(), reference: NullableString, nextChargeAt: NullableString })),
});

export const SessionRecord = Type.Object({
  id: Uuid,
  state: StringEnum(SESSION_STATES),
  expiresAt: DateTime,
  pointOfSaleId: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  reference: NullableString,
  customerId: NullableString,
  scaMode: Type.String(),
  instantCapture: Type.String(),
  exemptions: Type.Array(Type.String()),
  textOnStatement: NullableString,
  attributes: Nullable(Type.Record(Type.String(), Type.String())),
  timeout: Type.Integer(),
  maxAttempts: Type.Integer(),
  attempts: Type.Integer(),
  notificationUrl: NullableString,
  successUrl: NullableString,
  failureUrl: NullableString,
  reportFailure: Type.Boolean(),
  subscription: Nullable(SubscriptionRequestRecord),
  orderLines: Nullable(Type.Array(OrderLineRecord, { description: 'Shown in the payment window (a session started by a multi-link); null otherwise.' })),
  allowedPaymentMethods: Nullable(Type.Array(Type.String())),
  dynamicAmount: Type.Boolean(),
  minimumAge: Nullable(Type.Integer()),
  ageVerified: Type.Boolean(),
  preAuthUrl: NullableString,
  retryUrl: NullableString,
  returnUrl: NullableString,
  reportExpired: Type.Boolean(),
  transactionId: NullableString,
  subscriptionId: Nullable(Type.String({ description: 'The subscription created (or, with subscription.id, updated) by the session.' })),
  paymentMethodId: NullableString,
  errorCode: NullableString,
  createdAt: DateTime,
});

/** A new session as POST /cit answers it: EUR 25.00 for order-1042, the card to be stored for later MITs. */
const SESSION_EXAMPLE = {
  id: '55c75b55-c752-4e79-8175-d58f891d1538',
  state: 'PENDING',
  expiresAt: '2026-11-25T13:59:04.695Z',
  pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
  amount: 2500,
  currency: 'EUR',
  reference: 'order-1042',
  customerId: 'customer-81',
  scaMode: 'SKIP',
  instantCapture: 'OFF',
  exemptions: [],
  textOnStatement: null,
  attributes: null,
  timeout: 30,
  maxAttempts: 3,
  attempts: 0,
  notificationUrl: 'https://shop.example.com/payments/callback',
  successUrl: 'https://shop.example.com/checkout/success',
  failureUrl: 'https://shop.example.com/checkout/failure',
  reportFailure: false,
  subscription: { id: null, amount: null, type: 'UNSCHEDULED', reference: 'customer-81-card', expiryDate: null, interval: null, billingAgreement: null },
  orderLines: null,
  allowedPaymentMethods: null,
  dynamicAmount: false,
  minimumAge: null,
  ageVerified: false,
  preAuthUrl: null,
  retryUrl: null,
  returnUrl: null,
  reportExpired: false,
  transactionId: null,
  subscriptionId: null,
  paymentMethodId: null,
  errorCode: null,
  createdAt: '2026-11-25T13:29:04.695Z',
};

/** The same session once the customer paid with the sandbox card 4111111111111111. */
const COMPLETED_SESSION_EXAMPLE = {
  ...SESSION_EXAMPLE,
  state: 'COMPLETED',
  attempts: 1,
  transactionId: '59JXY3CGEZ0',
  subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235',
  paymentMethodId: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
};

export const SessionResponse = Type.Object({ session: SessionRecord }, { examples: [{ session: COMPLETED_SESSION_EXAMPLE }] });

export const CreateCitResponse = Type.Object(
  {
    paymentWindowUrl: Type.String({ description: 'The hosted payment window where the customer pays.' }),
    javascript: Type.String({ description: 'URL of the script that opens the payment window embedded in the merchant page.' }),
    key: Type.String({ description: "The session's public client key, used by the script." }),
    session: SessionRecord,
  },
  {
    examples: [
      {
        paymentWindowUrl: 'https://payments.example.com/pay/pk_C53M1JjNCXpVXn6vJiwyYhZJuODjDLNg',
        javascript: 'https://payments.example.com/pay/checkout.js',
        key: 'pk_C53M1JjNCXpVXn6vJiwyYhZJuODjDLNg',
        session: SESSION_EXAMPLE,
      },
    ],
  },
);
export const SessionParams = Type.Object({ sessionId: Uuid });

/** POST /sandbox/v1/sessions/{id}/complete: the customer pays with a card or a wallet. */
export const CompleteSessionBody = Type.Object(
  {
    card: Type.Optional(CardInputSchema),
    paymentMethodType: Type.Optional(StringEnum(PAYABLE_TYPES)),
    amount: Type.Optional({ ...Amount, description: 'With dynamicAmount: the amount the customer entered (1–999999999); default the session amount.' }),
    ageVerification: Type.Optional(
      Type.Object(
        { dateOfBirth: Nullable(DateOnly) },
        { description: 'The simulated eID step of a session with ageVerification: a date of birth, or null when the customer did not verify.' },
      ),
    ),
  },
  {
    examples: [
      { card: { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' } },
      { card: { number: '4000000000009995', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' } },
    ],
  },
);

export const CompleteSessionResponse = Type.Object(
  {
    session: SessionRecord,
    transaction: Nullable(Type.Object({ id: Type.String(), state: Type.String(), errorCode: NullableString })),
  },
  {
    examples: [
      { session: COMPLETED_SESSION_EXAMPLE, transaction: { id: '59JXY3CGEZ0', state: 'SUCCESS', errorCode: null } },
      {
        session: { ...SESSION_EXAMPLE, state: 'PENDING', attempts: 1, errorCode: 'INSUFFICIENT_FUNDS' },
        transaction: { id: '59JXY3D8K2P', state: 'FAILED', errorCode: 'INSUFFICIENT_FUNDS' },
      },
    ],
  },
);

/** Entity → wire record (no account id, no client key). */
export function sessionWire(s: Session) {
  return {
    id: s.id,
    state: s.state,
    expiresAt: s.expiresAt,
    pointOfSaleId: s.pointOfSaleId,
    amount: s.amount,
    currency: s.currency,
    reference: s.reference,
    customerId: s.customerId,
    scaMode: s.scaMode,
    instantCapture: s.instantCapture,
    exemptions: s.exemptions,
    textOnStatement: s.textOnStatement,
    attributes: s.attributes,
    timeout: s.timeoutMinutes,
    maxAttempts: s.maxAttempts,
    attempts: s.attempts,
    notificationUrl: s.notificationUrl,
    successUrl: s.successUrl,
    failureUrl: s.failureUrl,
    reportFailure: s.reportFailure,
    subscription: s.subscriptionRequest && { ...s.subscriptionRequest, id: s.subscriptionRequest.id ?? null, amount: s.subscriptionRequest.amount ?? null },
    orderLines: s.orderLines ?? null,
    allowedPaymentMethods: s.allowedPaymentMethods ?? null,
    dynamicAmount: s.dynamicAmount ?? false,
    minimumAge: s.minimumAge ?? null,
    ageVerified: s.ageVerified ?? false,
    preAuthUrl: s.preAuthUrl ?? null,
    retryUrl: s.retryUrl ?? null,
    returnUrl: s.returnUrl ?? null,
    reportExpired: s.reportExpired ?? false,
    transactionId: s.transactionId,
    subscriptionId: s.subscriptionId,
    paymentMethodId: s.paymentMethodId,
    errorCode: s.errorCode,
    createdAt: s.createdAt,
  };
}
