import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { Currency, DateOnly, DateTime, Nullable, PositiveAmount, StringEnum, Uuid } from '../../shared/wire.js';
import { PaymentMethodRecord } from '../payment-methods/payment-methods.schemas.js';
import { INTERVAL_PERIODS, type Subscription, SUBSCRIPTION_STATES, SUBSCRIPTION_TYPES } from './subscription.js';

const NullableString = Nullable(Type.String());

export const IntervalSchema = Type.Object({
  period: StringEnum(INTERVAL_PERIODS),
  frequency: Type.Integer({ minimum: 1, maximum: 31 }),
});

export const SubscriptionRecord = Type.Object({
  id: Uuid,
  paymentMethodId: Type.String(),
  currency: Type.String(),
  customerId: NullableString,
  pointOfSaleId: Type.String(),
  reference: NullableString,
  description: NullableString,
  state: StringEnum(SUBSCRIPTION_STATES),
  statusReason: NullableString,
  type: StringEnum(SUBSCRIPTION_TYPES),
  expiryDate: Nullable(DateOnly),
  interval: Nullable(IntervalSchema),
  createdAt: DateTime,
});

/** GET and list items: the subscription with its payment method (null once that was deleted). */
/** An ACTIVE monthly subscription on the sandbox Visa card. */
export const SUBSCRIPTION_RESPONSE_EXAMPLE = {
  subscription: {
    id: 'cdbf1049-856b-45ca-835e-f968c7637235',
    paymentMethodId: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
    currency: 'EUR',
    customerId: 'customer-81',
    pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
    reference: 'customer-81-card',
    description: null,
    state: 'ACTIVE',
    statusReason: null,
    type: 'SCHEDULED',
    expiryDate: null,
    interval: { period: 'MONTH', frequency: 1 },
    createdAt: '2026-11-25T13:29:04.814Z',
  },
  paymentMethod: {
    id: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
    type: 'CARD',
    subType: 'Visa',
    expiry: '2030-12-31',
    displayText: '41111111XXXX1111',
    holderName: 'Test Holder',
    customerId: 'customer-81',
    accountUpdatesEnabled: false,
    createdAt: '2026-11-25T13:29:04.806Z',
  },
};

export const SubscriptionResponse = Type.Object(
  { subscription: SubscriptionRecord, paymentMethod: Nullable(PaymentMethodRecord) },
  { examples: [SUBSCRIPTION_RESPONSE_EXAMPLE] },
);

export const SubscriptionListResponse = PageEnvelope(SubscriptionResponse, {
  examples: [pageExample('/subscriptions', [SUBSCRIPTION_RESPONSE_EXAMPLE])],
});

export const SubscriptionParams = Type.Object({ subscriptionId: Uuid });

export const SubscriptionListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    createdBefore: Type.Optional(DateTime),
    createdAfter: Type.Optional(DateTime),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    currency: Type.Optional(Currency),
    state: Type.Optional(StringEnum(SUBSCRIPTION_STATES)),
    paymentMethodId: Type.Optional(Uuid),
    pointOfSaleId: Type.Optional(Uuid),
    type: Type.Optional(StringEnum(SUBSCRIPTION_TYPES)),
  }),
]);

/** PATCH (INTERFACE §7): amount and type required; expiryDate and interval nullable (absent = unchanged). */
export const UpdateSubscriptionBody = Type.Object(
  {
    amount: PositiveAmount,
    type: StringEnum(SUBSCRIPTION_TYPES),
    expiryDate: Type.Optional(Nullable(DateOnly)),
    interval: Type.Optional(Nullable(IntervalSchema)),
  },
  { examples: [{ amount: 1299, type: 'SCHEDULED', expiryDate: null, interval: { period: 'MONTH', frequency: 1 } }] },
);

/** Entity → wire record: exactly the fields of INTERFACE §7, null when absent. */
export function subscriptionWire(s: Subscription) {
  return {
    id: s.id,
    paymentMethodId: s.paymentMethodId,
    currency: s.currency,
    customerId: s.customerId,
    pointOfSaleId: s.pointOfSaleId,
    reference: s.reference,
    description: s.description,
    state: s.state,
    statusReason: s.statusReason,
    type: s.type,
    expiryDate: s.expiryDate,
    interval: s.interval,
    createdAt: s.createdAt,
  };
}
