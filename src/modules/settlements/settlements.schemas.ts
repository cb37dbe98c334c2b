import { Type } from '@sinclair/typebox';
import { CursorEnvelope, cursorExample, CursorQuery } from '../../shared/pagination.js';
import { toDecimalString } from '../../shared/money.js';
import { DateOnly, DateTime, Nullable, StringEnum } from '../../shared/wire.js';
import { TRANSACTION_EXAMPLE, TransactionRecord, transactionWire } from '../transactions/transactions.schemas.js';
import type { Transaction } from '../transactions/transaction.js';
import { TRANSACTION_FEE_TYPES, TRANSFER_ADJUSTMENT_TYPES, type TransactionFeeType } from './fees.js';
import type { SettlementTransaction, SettlementTransfer } from './settlement.js';

/** Settlement amounts are exact decimal strings in the currency's exponent (INTERFACE §1). */
const Decimal = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', description: 'Exact decimal amount, e.g. "-1.25".' });

const AdjustmentRecord = Type.Object({
  type: StringEnum([...TRANSACTION_FEE_TYPES, ...TRANSFER_ADJUSTMENT_TYPES] as const),
  amount: Decimal,
  description: Type.String(),
});

export const SettlementTransferRecord = Type.Object({
  id: Type.String({ format: 'uuid' }),
  acquirer: Type.String(),
  settlementName: Type.String(),
  settlementIds: Type.Array(Type.String(), { description: 'Acquirer merchant ids.' }),
  postingDate: DateOnly,
  netAmount: Decimal,
  currency: Type.String(),
  acquirerReference: Type.String(),
  adjustments: Type.Array(AdjustmentRecord, { description: 'Transfer-level adjustments (FEE, RESERVE, ADJUSTMENT).' }),
  adjustmentSums: Type.Array(Type.Object({ type: StringEnum(TRANSACTION_FEE_TYPES), amount: Decimal, description: Type.String() }), {
    description: "Per fee type, the sum of the adjustments of the transfer's settlement transactions (the shape of `adjustments`).",
  }),
  createdAt: DateTime,
});

export const SettlementTransactionRecord = Type.Object({
  id: Type.String({ format: 'uuid' }),
  settlementTransferId: Type.String({ format: 'uuid' }),
  transactionId: Type.String(),
  agreementId: Type.String(),
  merchantReference: Nullable(Type.String()),
  acquirerReference: Nullable(Type.String()),
  postingDate: DateOnly,
  settlementNetAmount: Decimal,
  settlementCurrency: Type.String(),
  adjustments: Type.Array(AdjustmentRecord),
  createdAt: DateTime,
});

/** A day's EUR card payments settled by the sandbox acquirer: EUR 40.00 less EUR 1.97 of fees. */
const SETTLEMENT_TRANSFER_EXAMPLE = {
  id: 'd5216ae8-bed3-47b3-a263-21e83accbb7c',
  acquirer: 'sandbox',
  settlementName: 'sandbox settlement 2026-11-28 EUR',
  settlementIds: ['sandbox-df5c9f106c0d'],
  postingDate: '2026-11-28',
  netAmount: '38.03',
  currency: 'EUR',
  acquirerReference: 'STL202611282390AB0F90',
  adjustments: [],
  adjustmentSums: [
    { type: 'ACQUIRER_FEE', amount: '-1.64', description: "Acquirer fees of the transfer's settlement transactions" },
    { type: 'INTERCHANGE_FEE', amount: '-0.24', description: "Interchange fees of the transfer's settlement transactions" },
    { type: 'SCHEME_FEE', amount: '-0.09', description: "Card scheme fees of the transfer's settlement transactions" },
  ],
  createdAt: '2026-11-28T13:29:05.608Z',
};

export const SettlementTransferResponse = Type.Object(
  { settlementTransfer: SettlementTransferRecord },
  { examples: [{ settlementTransfer: SETTLEMENT_TRANSFER_EXAMPLE }] },
);
export const SettlementTransferList = Type.Object(CursorEnvelope(SettlementTransferResponse).properties, {
  examples: [{ currentOffset: '', nextOffset: null, perPage: 25, hasMore: false, items: [{ settlementTransfer: SETTLEMENT_TRANSFER_EXAMPLE }] }],
});
/** The settled capture of TRANSACTION_EXAMPLE (EUR 25.00) in that transfer, with its three fees. */
const SETTLEMENT_TRANSACTION_EXAMPLE = {
  id: '01a236ca-8a70-73f2-bcbc-d670bbca2abb',
  settlementTransferId: SETTLEMENT_TRANSFER_EXAMPLE.id,
  transactionId: TRANSACTION_EXAMPLE.id,
  agreementId: 'sandbox-df5c9f106c0d',
  merchantReference: 'order-1042',
  acquirerReference: 'SBX4594BC118C3FFABC6',
  postingDate: '2026-11-28',
  settlementNetAmount: '24.44',
  settlementCurrency: 'EUR',
  adjustments: [
    { type: 'ACQUIRER_FEE', amount: '-0.49', description: 'Acquirer service fee (0.95 % + fixed)' },
    { type: 'INTERCHANGE_FEE', amount: '-0.05', description: 'Interchange fee (0.20 %)' },
    { type: 'SCHEME_FEE', amount: '-0.02', description: 'Card scheme fee (0.08 %)' },
  ],
  createdAt: '2026-11-28T13:29:05.608Z',
};

export const SettlementTransactionList = CursorEnvelope(Type.Object({ settlementTransaction: SettlementTransactionRecord, transaction: TransactionRecord }), {
  examples: [
    cursorExample(
      [{ settlementTransaction: SETTLEMENT_TRANSACTION_EXAMPLE, transaction: TRANSACTION_EXAMPLE }],
      ({ settlementTransaction }) => settlementTransaction,
    ),
  ],
});
export const SettlementListQuery = CursorQuery;
export const TransferParams = Type.Object({ transferId: Type.String({ minLength: 1, maxLength: 64 }) });
export const SettlementRunBody = Type.Object({ postingDate: Type.Optional(DateOnly) }, { examples: [{ postingDate: '2026-11-28' }] });
export const SettlementRunResponse = Type.Object(
  { settlementTransfers: Type.Array(SettlementTransferResponse) },
  { examples: [{ settlementTransfers: [{ settlementTransfer: SETTLEMENT_TRANSFER_EXAMPLE }] }] },
);

const FEE_COLUMN: Record<TransactionFeeType, 'acquirerFee' | 'interchangeFee' | 'schemeFee'> = {
  ACQUIRER_FEE: 'acquirerFee',
  INTERCHANGE_FEE: 'interchangeFee',
  SCHEME_FEE: 'schemeFee',
};
const FEE_TOTAL: Record<TransactionFeeType, 'acquirerFeeAmount' | 'interchangeFeeAmount' | 'schemeFeeAmount'> = {
  ACQUIRER_FEE: 'acquirerFeeAmount',
  INTERCHANGE_FEE: 'interchangeFeeAmount',
  SCHEME_FEE: 'schemeFeeAmount',
};
/** What an `adjustmentSums` item adds up (INTERFACE §11.1: items have the shape of `adjustments`). */
const FEE_SUM_DESCRIPTION: Record<TransactionFeeType, string> = {
  ACQUIRER_FEE: "Acquirer fees of the transfer's settlement transactions",
  INTERCHANGE_FEE: "Interchange fees of the transfer's settlement transactions",
  SCHEME_FEE: "Card scheme fees of the transfer's settlement transactions",
};

export function settlementTransferWire(t: SettlementTransfer) {
  return {
    id: t.id,
    acquirer: t.acquirer,
    settlementName: t.settlementName,
    settlementIds: t.settlementIds,
    postingDate: t.postingDate,
    netAmount: toDecimalString(t.netAmount, t.currency),
    currency: t.currency,
    acquirerReference: t.acquirerReference,
    adjustments: t.adjustments.map((a) => ({ type: a.type, amount: toDecimalString(a.amount, t.currency), description: a.description })),
    adjustmentSums: TRANSACTION_FEE_TYPES.map((type) => ({
      type,
      amount: toDecimalString(t[FEE_TOTAL[type]], t.currency),
      description: FEE_SUM_DESCRIPTION[type],
    })),
    // Only READY transfers reach the wire; createdAt is set on completion.
    createdAt: t.createdAt ?? t.openedAt,
  };
}

/** Fee descriptions come from the schedule that computed them (passed by the service). */
export function settlementTransactionWire(st: SettlementTransaction, descriptions: Record<TransactionFeeType, string>) {
  return {
    id: st.id,
    settlementTransferId: st.settlementTransferId,
    transactionId: st.transactionId,
    agreementId: st.agreementId,
    merchantReference: st.merchantReference,
    acquirerReference: st.acquirerReference,
    postingDate: st.postingDate,
    settlementNetAmount: toDecimalString(st.netAmount, st.currency),
    settlementCurrency: st.currency,
    adjustments: TRANSACTION_FEE_TYPES.map((type) => ({ type, amount: toDecimalString(st[FEE_COLUMN[type]], st.currency), description: descriptions[type] })),
    createdAt: st.createdAt,
  };
}

export function settlementItemWire(
  item: { settlementTransaction: SettlementTransaction; transaction: Transaction },
  descriptions: Record<TransactionFeeType, string>,
) {
  return { settlementTransaction: settlementTransactionWire(item.settlementTransaction, descriptions), transaction: transactionWire(item.transaction) };
}
