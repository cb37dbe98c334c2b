import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { Amount, Attributes, Currency, DateOnly, DateTime, Nullable, StringEnum, TransactionId, Url, Uuid } from '../../shared/wire.js';
import { OrderLineRecord } from '../sessions/sessions.schemas.js';
import { SUBSCRIPTION_TYPES } from '../subscriptions/subscription.js';
import { IntervalSchema } from '../subscriptions/subscriptions.schemas.js';
import { INSTANT_CAPTURE_MODES, SCA_MODES } from '../transactions/transaction.js';
import { ALLOWED_PAYMENT_METHOD_TYPES, type MultiLink, MULTI_LINK_STATES, ORDER_LINE_TYPES } from './multi-link.js';

const Opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));
const NullableString = Nullable(Type.String());
const NullableBoolean = Nullable(Type.Boolean());

/** Order line amounts (INTERFACE §11.3): minor units, at most 200,000,000. */
const MAX_ORDER_LINE_AMOUNT = 200_000_000;
/** How many order lines a link may carry (the window lists them all). */
export const MAX_ORDER_LINES = 100;

export const OrderLineInput = Type.Object({
  description: Type.String({ minLength: 1, maxLength: 255 }),
  imageUrl: Opt(Url),
  quantity: Type.Integer({ minimum: 0, maximum: 999_999_999 }),
  unitPrice: Type.Integer({ minimum: 0, maximum: MAX_ORDER_LINE_AMOUNT, description: 'Minor units.' }),
  totalAmount: Type.Integer({ minimum: 0, maximum: MAX_ORDER_LINE_AMOUNT, description: 'Minor units.' }),
  type: StringEnum(ORDER_LINE_TYPES),
});

export const MultiLinkSubscriptionInput = Type.Object({
  type: StringEnum(SUBSCRIPTION_TYPES),
  amount: Opt(Amount),
  expiryDate: Opt(DateOnly),
  interval: Opt(IntervalSchema),
  billingAgreement: Opt(
    Type.Object({
      billingPlanId: Uuid,
      nextChargeAt: Opt(Type.String({ minLength: 10, maxLength: 40, description: 'Date-time, or a date meaning 00:00 UTC that day.' })),
    }),
  ),
});

export const AgeVerificationInput = Type.Object({
  minimumAge: Type.Integer({ minimum: 0, maximum: 99 }),
  country: StringEnum(['DK'] as const),
});

/** POST /multi-links (INTERFACE §11.3). Settings left out come from the point of sale when a session starts. */
export const CreateMultiLinkBody = Type.Object(
  {
    pointOfSaleId: Uuid,
    amount: Amount,
    currency: Currency,
    reference: Opt(Type.String({ pattern: '^[A-Za-z0-9-]{1,36}$', description: 'Copied to every session the link starts.' })),
    scaMode: Opt(StringEnum(SCA_MODES)),
    timeout: Opt(Type.Integer({ minimum: 1, maximum: 120, description: 'Minutes each started session lives.' })),
    instantCapture: Opt(StringEnum(INSTANT_CAPTURE_MODES)),
    textOnStatement: Opt(Type.String({ minLength: 1, maxLength: 39 })),
    attributes: Opt(Attributes),
    reportFailure: Opt(Type.Boolean()),
    reportExpired: Opt(Type.Boolean()),
    dynamicAmount: Opt(Type.Boolean()),
    notificationUrl: Opt(Url),
    successUrl: Opt(Url),
    failureUrl: Opt(Url),
    retryUrl: Opt(Url),
    returnUrl: Opt(Url),
    allowedPaymentMethods: Opt(Type.Array(StringEnum(ALLOWED_PAYMENT_METHOD_TYPES), { maxItems: ALLOWED_PAYMENT_METHOD_TYPES.length })),
    ageVerification: Opt(AgeVerificationInput),
    orderLines: Opt(Type.Array(OrderLineInput, { maxItems: MAX_ORDER_LINES })),
    subscription: Opt(MultiLinkSubscriptionInput),
  },
  {
    examples: [
      {
        pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
        amount: 4500,
        currency: 'EUR',
        reference: 'market-stall-qr',
        timeout: 15,
        successUrl: 'https://shop.example.com/checkout/success',
        notificationUrl: 'https://shop.example.com/payments/callback',
        orderLines: [
          { description: 'Coffee beans, 1 kg', quantity: 1, unitPrice: 3900, totalAmount: 3900, type: 'PHYSICAL' },
          { description: 'Shipping', quantity: 1, unitPrice: 600, totalAmount: 600, type: 'SHIPPING_FEE' },
        ],
      },
    ],
  },
);

const SubscriptionRecord = Type.Object({
  type: StringEnum(SUBSCRIPTION_TYPES),
  amount: Nullable(Type.Integer()),
  expiryDate: NullableString,
  interval: Nullable(IntervalSchema),
  billingAgreement: Nullable(Type.Object({ billingPlanId: Type.String(), nextChargeAt: NullableString })),
});

/** The record of §11.3; a setting left out is null (taken from the point of sale when a session starts). */
export const MultiLinkRecord = Type.Object({
  id: TransactionId,
  pointOfSaleId: Type.String(),
  state: StringEnum(MULTI_LINK_STATES),
  amount: Type.Integer(),
  currency: Type.String(),
  subscription: Nullable(SubscriptionRecord),
  scaMode: NullableString,
  timeout: Nullable(Type.Integer()),
  instantCapture: NullableString,
  textOnStatement: NullableString,
  attributes: Nullable(Type.Record(Type.String(), Type.String())),
  reportFailure: NullableBoolean,
  reportExpired: NullableBoolean,
  dynamicAmount: NullableBoolean,
  notificationUrl: NullableString,
  successUrl: NullableString,
  failureUrl: NullableString,
  retryUrl: NullableString,
  returnUrl: NullableString,
  allowedPaymentMethods: Nullable(Type.Array(Type.String())),
  ageVerification: Nullable(Type.Object({ minimumAge: Type.Integer(), country: Type.String() })),
  orderLines: Nullable(Type.Array(OrderLineRecord)),
  createdAt: DateTime,
});

/** The link the request example creates; settings it left out are null. */
const MULTI_LINK_EXAMPLE = {
  id: '93T9K65YAPG',
  pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
  state: 'ACTIVE',
  amount: 4500,
  currency: 'EUR',
  subscription: null,
  scaMode: null,
  timeout: 15,
  instantCapture: null,
  textOnStatement: null,
  attributes: null,
  reportFailure: null,
  reportExpired: null,
  dynamicAmount: null,
  notificationUrl: 'https://shop.example.com/payments/callback',
  successUrl: 'https://shop.example.com/checkout/success',
  failureUrl: null,
  retryUrl: null,
  returnUrl: null,
  allowedPaymentMethods: null,
  ageVerification: null,
  orderLines: [
    { description: 'Coffee beans, 1 kg', imageUrl: null, quantity: 1, unitPrice: 3900, totalAmount: 3900, type: 'PHYSICAL' },
    { description: 'Shipping', imageUrl: null, quantity: 1, unitPrice: 600, totalAmount: 600, type: 'SHIPPING_FEE' },
  ],
  createdAt: '2026-11-25T13:40:13.256Z',
};
const multiLinkResponseExample = (multiLink: typeof MULTI_LINK_EXAMPLE) => ({
  multiLink,
  url: `https://payments.example.com/ml/${multiLink.id}`,
  qrUrl: `https://payments.example.com/ml/${multiLink.id}/qr.png`,
});

const MultiLinkFields = {
  multiLink: MultiLinkRecord,
  url: Type.String({ description: 'Public page: every visit starts a new session and forwards (303) to its payment window; 410 once deactivated.' }),
  qrUrl: Type.String({ description: 'PNG image of a QR code of `url`.' }),
};
export const MultiLinkResponse = Type.Object(MultiLinkFields, { examples: [multiLinkResponseExample(MULTI_LINK_EXAMPLE)] });
/** DELETE answers the record in state DEACTIVATED. */
export const DeactivatedMultiLinkResponse = Type.Object(MultiLinkFields, {
  examples: [multiLinkResponseExample({ ...MULTI_LINK_EXAMPLE, state: 'DEACTIVATED' })],
});
export const MultiLinkList = PageEnvelope(MultiLinkResponse, { examples: [pageExample('/multi-links', [multiLinkResponseExample(MULTI_LINK_EXAMPLE)])] });

export const MultiLinkParams = Type.Object({ multiLinkId: TransactionId });

export const MultiLinkListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    pointOfSaleId: Type.Optional(Uuid),
    state: Type.Optional(StringEnum(MULTI_LINK_STATES)),
    createdBefore: Type.Optional(DateTime),
    createdAfter: Type.Optional(DateTime),
  }),
]);

/** Entity → wire record: no account id, no reference or idempotency key (not in §11.3). */
export function multiLinkWire(link: MultiLink) {
  return {
    id: link.id,
    pointOfSaleId: link.pointOfSaleId,
    state: link.state,
    amount: link.amount,
    currency: link.currency,
    subscription: link.subscription,
    scaMode: link.scaMode,
    timeout: link.timeout,
    instantCapture: link.instantCapture,
    textOnStatement: link.textOnStatement,
    attributes: link.attributes,
    reportFailure: link.reportFailure,
    reportExpired: link.reportExpired,
    dynamicAmount: link.dynamicAmount,
    notificationUrl: link.notificationUrl,
    successUrl: link.successUrl,
    failureUrl: link.failureUrl,
    retryUrl: link.retryUrl,
    returnUrl: link.returnUrl,
    allowedPaymentMethods: link.allowedPaymentMethods,
    ageVerification: link.ageVerification,
    orderLines: link.orderLines,
    createdAt: link.createdAt,
  };
}
