import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, DateOnly, DateTime, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { WALLET_TYPES } from '../payment-methods/payment-methods.service.js';
import { SUBSCRIPTION_TYPES } from '../subscriptions/subscription.js';
import { IntervalSchema } from '../subscriptions/subscriptions.schemas.js';
import { EXEMPTIONS, INSTANT_CAPTURE_MODES, SCA_MODES } from '../transactions/transaction.js';
import { type Session, SESSION_STATES } from './session.js';

const NullableString = Nullable(Type.String());
const Opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));

export const BillingAgreementInput = Type.Object({
  billingPlanId: Uuid,
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  nextChargeAt: Opt(Type.String({ minLength: 10, maxLength: 40, description: 'Date-time, or a date meaning 00:00 UTC that day.' })),
});

export const CitSubscriptionInput = Type.Object({
  type: StringEnum(SUBSCRIPTION_TYPES),
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  expiryDate: Opt(DateOnly),
  interval: Opt(IntervalSchema),
  billingAgreement: Opt(BillingAgreementInput),
});

/** POST /cit (INTERFACE §7). Omitted options take the point of sale's hostedConfiguration. */
export const CreateCitBody = Type.Object({
  pointOfSaleId: Uuid,
  amount: Amount,
  currency: Currency,
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  scaMode: Opt(StringEnum(SCA_MODES)),
  timeout: Opt(Type.Integer({ minimum: 1, maximum: 43200, description: 'Minutes until the session expires (default 30).' })),
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
});

const SubscriptionRequestRecord = Type.Object({
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
  transactionId: NullableString,
  subscriptionId: NullableString,
  paymentMethodId: NullableString,
  errorCode: NullableString,
  createdAt: DateTime,
});

export const SessionResponse = Type.Object({ session: SessionRecord });
export const CreateCitResponse = Type.Object({
  paymentWindowUrl: Type.String({ description: 'The hosted payment window where the customer pays.' }),
  javascript: Type.String({ description: 'URL of the script that opens the payment window embedded in the merchant page.' }),
  key: Type.String({ description: "The session's public client key, used by the script." }),
  session: SessionRecord,
});
export const SessionParams = Type.Object({ sessionId: Uuid });

/** POST /sandbox/v1/sessions/{id}/complete: the customer pays with a card or a wallet. */
export const CompleteSessionBody = Type.Object({
  card: Type.Optional(CardInputSchema),
  paymentMethodType: Type.Optional(StringEnum(['CARD', ...WALLET_TYPES] as const)),
});

export const CompleteSessionResponse = Type.Object({
  session: SessionRecord,
  transaction: Nullable(Type.Object({ id: Type.String(), state: Type.String(), errorCode: NullableString })),
});

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
    subscription: s.subscriptionRequest,
    transactionId: s.transactionId,
    subscriptionId: s.subscriptionId,
    paymentMethodId: s.paymentMethodId,
    errorCode: s.errorCode,
    createdAt: s.createdAt,
  };
}
