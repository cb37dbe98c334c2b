import { Type } from '@sinclair/typebox';
import { PageEnvelope, PageQuery } from '../../shared/pagination.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { TransactionResponse } from '../transactions/transactions.schemas.js';
import { type BillingCharge, CHARGE_STATES } from './charge.js';

export const BillingChargeRecord = Type.Object({
  id: Uuid,
  state: StringEnum(CHARGE_STATES),
  /** The latest attempt's transaction. */
  transactionId: Nullable(Type.String()),
  /** Every attempt's transaction, oldest first. */
  transactionIds: Type.Array(Type.String()),
  billingPlanId: Uuid,
  billingAgreementId: Uuid,
  amount: Type.Integer(),
  currency: Type.String(),
  periodStart: DateTime,
  deadlineAt: DateTime,
  nextAttemptAt: Nullable(DateTime),
  attempts: Type.Integer({ description: 'Attempts made so far.' }),
  maxAttempts: Type.Integer(),
  createdAt: DateTime,
  finalizedAt: Nullable(DateTime),
});

export const BillingChargeResponse = Type.Object({ billingAgreementCharge: BillingChargeRecord });
/** GET one charge: the record and its attempts' transactions, oldest first. */
export const BillingChargeDetailResponse = Type.Object({ billingAgreementCharge: BillingChargeRecord, transactions: Type.Array(TransactionResponse) });
export const BillingChargePage = PageEnvelope(BillingChargeResponse);
export const BillingChargeParams = Type.Object({ billingAgreementChargeId: Uuid });
export const BillingChargeListQuery = Type.Composite([PageQuery, Type.Object({ billingAgreementId: Type.Optional(Uuid) })]);

export function billingChargeWire(charge: BillingCharge, transactionIds: string[]) {
  return {
    billingAgreementCharge: {
      id: charge.id,
      state: charge.state,
      transactionId: charge.transactionId,
      transactionIds,
      billingPlanId: charge.billingPlanId,
      billingAgreementId: charge.billingAgreementId,
      amount: charge.amount,
      currency: charge.currency,
      periodStart: charge.periodStart,
      deadlineAt: charge.deadlineAt,
      nextAttemptAt: charge.nextAttemptAt,
      attempts: charge.attempts,
      maxAttempts: charge.maxAttempts,
      createdAt: charge.createdAt,
      finalizedAt: charge.finalizedAt,
    },
  };
}
