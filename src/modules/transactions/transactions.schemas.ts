import { Type } from '@sinclair/typebox';
import { CursorEnvelope, cursorExample, PageEnvelope, pageExample, PageQuery, PerPage } from '../../shared/pagination.js';
import { TRANSACTION_ERROR_CODES } from '../../shared/errors.js';
import { Amount, Currency, DateTime, Nullable, NullableStringEnum, StringEnum, Uuid } from '../../shared/wire.js';
import { aggregatesOf, OPERATION_STATES, OPERATION_TYPES, type Operation, type Transaction, TRANSACTION_STATES, TRANSACTION_TYPES } from './transaction.js';
import { EMPTY_TIMELINE_FIELDS, TIMELINE_KINDS } from './timeline.js';

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

/**
 * An approved card payment (a CIT paid with the sandbox card 4111111111111111), the base of the
 * transaction examples of the OpenAPI document; `transactionExample` varies it per route.
 */
export const TRANSACTION_EXAMPLE = {
  id: '59JXY3CGEZ0',
  subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235',
  billingAgreementChargeId: null,
  state: 'SUCCESS',
  errorCode: null,
  externalStatusCodes: { terminal: null, acquirer: '00', network: '00', sca: null },
  createdAt: '2026-11-25T13:29:04.808Z',
  sessionId: '55c75b55-c752-4e79-8175-d58f891d1538',
  paymentMethodId: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
  paymentMethodType: 'CARD',
  paymentMethodSubType: 'Visa',
  paymentMethodExpiry: '2030-12-31',
  paymentMethodDisplayText: '41111111XXXX1111',
  paymentMethodHolderName: 'Test Holder',
  scaMode: 'SKIP',
  customerId: 'customer-81',
  amount: 2500,
  fee: 0,
  currency: 'EUR',
  instantCapture: 'OFF',
  notificationUrl: 'https://shop.example.com/payments/callback',
  pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
  reference: 'order-1042',
  textOnStatement: null,
  descriptor: null,
  exemptions: [],
  attributes: null,
  clientIp: '203.0.113.24',
  clientCountry: null,
  type: 'PAYMENT',
  terminalId: null,
} as const;

export const transactionExample = (changes: Partial<Record<keyof typeof TRANSACTION_EXAMPLE, unknown>> = {}) => ({ ...TRANSACTION_EXAMPLE, ...changes });

/** A merchant-initiated payment just accepted: PENDING until the acquirer answers (the outcome goes to notificationUrl). */
export const MIT_TRANSACTION_EXAMPLE = transactionExample({
  id: 'S8TQKV3247B',
  state: 'PENDING',
  externalStatusCodes: null,
  createdAt: '2026-11-25T13:29:05.153Z',
  sessionId: null,
  amount: 1500,
  instantCapture: 'NO_VOID',
  reference: 'invoice-2025-11',
  exemptions: null,
  clientIp: null,
});

/** The authorization, capture and partial refund of TRANSACTION_EXAMPLE, oldest first. */
export const OPERATION_EXAMPLES = [
  {
    id: '58d023e4-124b-4a64-8d80-6291e4ad2de7',
    referenceTransactionOperationId: null,
    amount: 2500,
    state: 'SUCCESS',
    transactionId: '59JXY3CGEZ0',
    type: 'AUTHORIZATION',
    errorCode: null,
    createdAt: '2026-11-25T13:29:04.808Z',
    finalizedAt: '2026-11-25T13:29:04.812Z',
  },
  {
    id: '33243f5a-8a82-4465-8c5a-29206c6fd795',
    referenceTransactionOperationId: '58d023e4-124b-4a64-8d80-6291e4ad2de7',
    amount: 2500,
    state: 'SUCCESS',
    transactionId: '59JXY3CGEZ0',
    type: 'CAPTURE',
    errorCode: null,
    createdAt: '2026-11-25T13:31:12.020Z',
    finalizedAt: '2026-11-25T13:31:12.071Z',
  },
  {
    id: '94e91ade-27ad-4b1a-adbb-0c59444ffe0e',
    referenceTransactionOperationId: '33243f5a-8a82-4465-8c5a-29206c6fd795',
    amount: 1000,
    state: 'SUCCESS',
    transactionId: '59JXY3CGEZ0',
    type: 'REFUND',
    errorCode: null,
    createdAt: '2026-11-26T09:02:40.517Z',
    finalizedAt: '2026-11-26T09:02:40.566Z',
  },
];

export const TransactionResponse = Type.Object({ transaction: TransactionRecord }, { examples: [{ transaction: TRANSACTION_EXAMPLE }] });
export const TransactionDetailResponse = Type.Object(
  {
    transaction: TransactionRecord,
    aggregates: AggregatesRecord,
    operations: Type.Array(OperationRecord),
    acquirerAgreement: AcquirerAgreementRecord,
  },
  {
    examples: [
      {
        transaction: TRANSACTION_EXAMPLE,
        aggregates: { authorized: 2500, captured: 2500, refunded: 1000, voided: 0, remaining: 0, paidOut: 0 },
        operations: OPERATION_EXAMPLES,
        acquirerAgreement: { acquirer: 'sandbox', mcc: '5999' },
      },
    ],
  },
);

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

export const TransactionListResponse = CursorEnvelope(TransactionResponse, {
  examples: [
    cursorExample(
      [{ transaction: MIT_TRANSACTION_EXAMPLE }, { transaction: TRANSACTION_EXAMPLE }],
      ({ transaction }) => ({ createdAt: String(transaction.createdAt), id: String(transaction.id) }),
      true,
    ),
  ],
});

export const OperationListResponse = PageEnvelope(OperationRecord, { examples: [pageExample('/transactions/operations', [...OPERATION_EXAMPLES].reverse())] });

const APPROVED_CODES = { terminal: null, acquirer: '00', network: '00', sca: null };
const AUTHORIZATION_ID = '58d023e4-124b-4a64-8d80-6291e4ad2de7';

export const TimelineResponse = PageEnvelope(TimelineEntryRecord, {
  examples: [
    pageExample('/transactions/59JXY3CGEZ0/events', [
      { ...EMPTY_TIMELINE_FIELDS, id: '59JXY3CGEZ0:created', kind: 'TRANSACTION_CREATED', at: '2026-11-25T13:29:04.808Z', amount: 2500, currency: 'EUR' },
      {
        ...EMPTY_TIMELINE_FIELDS,
        id: `${AUTHORIZATION_ID}:started`,
        kind: 'OPERATION_STARTED',
        at: '2026-11-25T13:29:04.808Z',
        state: 'PROCESSING',
        amount: 2500,
        currency: 'EUR',
        operationId: AUTHORIZATION_ID,
        operationType: 'AUTHORIZATION',
      },
      {
        ...EMPTY_TIMELINE_FIELDS,
        id: `${AUTHORIZATION_ID}:finished`,
        kind: 'OPERATION_FINISHED',
        at: '2026-11-25T13:29:04.812Z',
        state: 'SUCCESS',
        amount: 2500,
        currency: 'EUR',
        operationId: AUTHORIZATION_ID,
        operationType: 'AUTHORIZATION',
        externalStatusCodes: APPROVED_CODES,
        acquirerReference: 'SBX9C0B849AA88C9088B',
      },
      {
        ...EMPTY_TIMELINE_FIELDS,
        id: '59JXY3CGEZ0:final',
        kind: 'STATE_CHANGED',
        at: '2026-11-25T13:29:04.812Z',
        state: 'SUCCESS',
        amount: 2500,
        currency: 'EUR',
        externalStatusCodes: APPROVED_CODES,
        acquirerReference: 'SBX9C0B849AA88C9088B',
      },
      { ...EMPTY_TIMELINE_FIELDS, id: '01a236ca-87b8-74e0-9728-69ad2a51fba7', kind: 'EVENT', at: '2026-11-25T13:29:04.814Z', event: 'transaction.success.v1' },
      {
        ...EMPTY_TIMELINE_FIELDS,
        id: '01a236ca-87b9-7408-b029-9eac67d9133e',
        kind: 'CALLBACK_QUEUED',
        at: '2026-11-25T13:29:04.815Z',
        state: 'PENDING',
        event: 'SUCCESS',
        url: 'https://shop.example.com/payments/callback',
      },
      {
        ...EMPTY_TIMELINE_FIELDS,
        id: '01a236ca-8855-72c3-9f27-0a39c5ec8802',
        kind: 'CALLBACK_ATTEMPT',
        at: '2026-11-25T13:29:04.871Z',
        state: 'DELIVERED',
        event: 'SUCCESS',
        url: 'https://shop.example.com/payments/callback',
        attempt: 1,
        statusCode: 200,
        durationMs: 48,
      },
    ]),
  ],
});
