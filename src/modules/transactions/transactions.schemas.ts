import { Type } from '@sinclair/typebox';
import { PageQuery, PerPage } from '../../shared/pagination.js';
import { TRANSACTION_ERROR_CODES } from '../../shared/errors.js';
import { Amount, Currency, DateTime, Nullable, NullableStringEnum, StringEnum, Uuid } from '../../shared/wire.js';
import { aggregatesOf, OPERATION_STATES, OPERATION_TYPES, type Operation, type Transaction, TRANSACTION_STATES, TRANSACTION_TYPES } from './transaction.js';
import { TIMELINE_KINDS } from './timeline.js';

const NullableString = Nullable(Type.String());

export const ExternalStatusCodesRecord = Type.Object({
  terminal: NullableString,
  acquirer: NullableString,
  network: NullableString,
  sca: NullableString,
});

export const TransactionRecord = Type.Object({
  id: Type.String({ description: '11 characters of upper-case Crockford base32.' }),
  subscriptionId: NullableString,
  billingAgreementChargeId: NullableString,
  state: StringEnum(TRANSACTION_STATES),
  errorCode: NullableStringEnum(TRANSACTION_ERROR_CODES, { description: 'Why a FAILED transaction failed (docs/errors.md).' }),
  externalStatusCodes: Nullable(ExternalStatusCodesRecord),
  createdAt: DateTime,
  sessionId: NullableString,
  paymentMethodId: NullableString,
  paymentMethodType: NullableString,
  paymentMethodSubType: NullableString,
  paymentMethodExpiry: NullableString,
  paymentMethodDisplayText: NullableString,
  paymentMethodHolderName: NullableString,
  scaMode: NullableString,
  customerId: NullableString,
  amount: Type.Integer(),
  fee: Type.Integer(),
  currency: Type.String(),
  instantCapture: NullableString,
  notificationUrl: NullableString,
  pointOfSaleId: Type.String(),
  reference: NullableString,
  textOnStatement: NullableString,
  descriptor: NullableString,
  exemptions: Nullable(Type.Array(Type.String())),
  attributes: Nullable(Type.Record(Type.String(), Type.String())),
  clientIp: NullableString,
  clientCountry: NullableString,
  type: StringEnum(TRANSACTION_TYPES),
  terminalId: NullableString,
});

export const OperationRecord = Type.Object({
  id: Type.String(),
  referenceTransactionOperationId: NullableString,
  amount: Type.Integer(),
  state: StringEnum(OPERATION_STATES),
  transactionId: Type.String(),
  type: StringEnum(OPERATION_TYPES),
  errorCode: NullableString,
  createdAt: DateTime,
  finalizedAt: Nullable(DateTime),
});

export const AggregatesRecord = Type.Object({
  authorized: Type.Integer(),
  captured: Type.Integer(),
  refunded: Type.Integer(),
  voided: Type.Integer(),
  remaining: Type.Integer(),
  paidOut: Type.Integer(),
});

export const AcquirerAgreementRecord = Type.Object({ acquirer: Type.String(), mcc: Type.String() });

export const TransactionResponse = Type.Object({ transaction: TransactionRecord });
export const TransactionDetailResponse = Type.Object({
  transaction: TransactionRecord,
  aggregates: AggregatesRecord,
  operations: Type.Array(OperationRecord),
  acquirerAgreement: AcquirerAgreementRecord,
});

const AmountMode = StringEnum(['EQUAL', 'LESS_THAN', 'GREATER_THAN'] as const);

export const TransactionListQuery = Type.Object({
  perPage: PerPage,
  offset: Type.String({ default: '', maxLength: 512 }),
  sessionId: Type.Optional(Uuid),
  terminalId: Type.Optional(Uuid),
  pointOfSaleId: Type.Optional(Uuid),
  subscriptionId: Type.Optional(Uuid),
  billingAgreementChargeId: Type.Optional(Uuid),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  referenceMode: Type.Optional(StringEnum(['EXACT', 'PREFIX'] as const)),
  createdBefore: Type.Optional(DateTime),
  createdAfter: Type.Optional(DateTime),
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  currency: Type.Optional(Currency),
  state: Type.Optional(StringEnum(TRANSACTION_STATES)),
  type: Type.Optional(StringEnum(TRANSACTION_TYPES)),
  errorCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  paymentMethodType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  paymentMethodSubType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  amountMode: Type.Optional(AmountMode),
  amount: Type.Optional(Amount),
  feeMode: Type.Optional(AmountMode),
  fee: Type.Optional(Amount),
});

export const OperationListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    finalizedBefore: Type.Optional(DateTime),
    finalizedAfter: Type.Optional(DateTime),
    pointOfSaleId: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
  }),
]);

export const TransactionParams = Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 64 }) });

/** Transaction → wire record: every field of seed §2.1 plus terminalId, null when absent. */
export function transactionWire(tx: Transaction) {
  return {
    id: tx.id,
    subscriptionId: tx.subscriptionId,
    billingAgreementChargeId: tx.billingAgreementChargeId,
    state: tx.state,
    errorCode: tx.errorCode,
    externalStatusCodes: tx.externalStatusCodes,
    createdAt: tx.createdAt,
    sessionId: tx.sessionId,
    paymentMethodId: tx.paymentMethodId,
    paymentMethodType: tx.paymentMethodType,
    paymentMethodSubType: tx.paymentMethodSubType,
    paymentMethodExpiry: tx.paymentMethodExpiry,
    paymentMethodDisplayText: tx.paymentMethodDisplayText,
    paymentMethodHolderName: tx.paymentMethodHolderName,
    scaMode: tx.scaMode,
    customerId: tx.customerId,
    amount: tx.amount,
    fee: tx.fee,
    currency: tx.currency,
    instantCapture: tx.instantCapture,
    notificationUrl: tx.notificationUrl,
    pointOfSaleId: tx.pointOfSaleId,
    reference: tx.reference,
    textOnStatement: tx.textOnStatement,
    descriptor: tx.descriptor,
    exemptions: tx.exemptions,
    attributes: tx.attributes,
    clientIp: tx.clientIp,
    clientCountry: tx.clientCountry,
    type: tx.type,
    terminalId: tx.terminalId,
  };
}

export function operationWire(op: Operation) {
  return {
    id: op.id,
    referenceTransactionOperationId: op.referenceOperationId,
    amount: op.amount,
    state: op.state,
    transactionId: op.transactionId,
    type: op.type,
    errorCode: op.errorCode,
    createdAt: op.createdAt,
    finalizedAt: op.finalizedAt,
  };
}

export function transactionDetailWire(detail: { transaction: Transaction; operations: Operation[]; acquirerAgreement: { acquirer: string; mcc: string } }) {
  return {
    transaction: transactionWire(detail.transaction),
    aggregates: aggregatesOf(detail.transaction),
    operations: detail.operations.map(operationWire),
    acquirerAgreement: detail.acquirerAgreement,
  };
}

/** One entry of GET /transactions/{transactionId}/events (timeline.ts); fields that do not apply to its kind are null. */
export const TimelineEntryRecord = Type.Object(
  {
    id: Type.String({
      description: 'Stable id of the entry (operation, event, callback, attempt or delivery id, with a suffix where one record gives two entries).',
    }),
    kind: StringEnum(TIMELINE_KINDS),
    at: DateTime,
    state: Nullable(Type.String({ description: 'Transaction state (STATE_CHANGED), operation state, or delivery state.' })),
    amount: Nullable(Type.Integer({ description: 'Minor units.' })),
    currency: NullableString,
    operationId: NullableString,
    operationType: NullableString,
    errorCode: NullableString,
    externalStatusCodes: Nullable(ExternalStatusCodesRecord),
    acquirerReference: NullableString,
    event: Nullable(Type.String({ description: 'Event name, or the final state a callback reports.' })),
    url: NullableString,
    webhookId: NullableString,
    deliveryId: NullableString,
    attempt: Nullable(Type.Integer()),
    statusCode: Nullable(Type.Integer({ description: 'HTTP status answered by the receiver; null when none came.' })),
    durationMs: Nullable(Type.Integer()),
    excerpt: Nullable(Type.String({ description: 'What went wrong with a delivery attempt (error text or `HTTP <status>`), at most 300 characters.' })),
  },
  { description: 'One step of a transaction timeline.' },
);

export const TimelineQuery = PageQuery;
