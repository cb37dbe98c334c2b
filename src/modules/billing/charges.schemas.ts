import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { TransactionResponse, transactionExample } from '../transactions/transactions.schemas.js';
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

/** The first monthly charge of the Coffee club agreement, paid at the first attempt. */
const CHARGE_EXAMPLE = {
  id: '01a236ca-8a69-731a-a13b-2fcb6e6a5c1c',
  state: 'SUCCESS',
  transactionId: 'H04RNFP0V2W',
  transactionIds: ['H04RNFP0V2W'],
  billingPlanId: '779a75c0-f105-4d72-b9a5-98e304b77ac5',
  billingAgreementId: '2371383f-4d2d-46ca-8ea8-0fe7925f8f5b',
  amount: 1299,
  currency: 'EUR',
  periodStart: '2026-12-01T00:00:00.000Z',
  deadlineAt: '2027-01-01T00:00:00.000Z',
  nextAttemptAt: null,
  attempts: 1,
  maxAttempts: 3,
  createdAt: '2026-12-01T00:00:02.097Z',
  finalizedAt: '2026-12-01T00:00:02.120Z',
};

/** A charge whose first attempt was declined: retried at nextAttemptAt, before deadlineAt. */
const RETRYING_CHARGE_EXAMPLE = {
  ...CHARGE_EXAMPLE,
  id: '5e0c1f9a-2b7d-4c3e-8a1f-6d9b0e2c4a71',
  state: 'PROCESSING',
  transactionId: 'H04RP2QX8KM',
  transactionIds: ['H04RP2QX8KM'],
  billingAgreementId: '8c1d2e3f-4a5b-4c6d-9e7f-0a1b2c3d4e5f',
  nextAttemptAt: '2026-12-02T00:00:00.000Z',
  finalizedAt: null,
};

export const BillingChargeResponse = Type.Object({ billingAgreementCharge: BillingChargeRecord }, { examples: [{ billingAgreementCharge: CHARGE_EXAMPLE }] });
/** GET one charge: the record and its attempts' transactions, oldest first. */
export const BillingChargeDetailResponse = Type.Object(
  { billingAgreementCharge: BillingChargeRecord, transactions: Type.Array(TransactionResponse) },
  {
    examples: [
      {
        billingAgreementCharge: CHARGE_EXAMPLE,
        transactions: [
          {
            transaction: transactionExample({
              id: 'H04RNFP0V2W',
              billingAgreementChargeId: CHARGE_EXAMPLE.id,
              createdAt: '2026-12-01T00:00:02.098Z',
              sessionId: null,
              amount: 1299,
              notificationUrl: null,
              reference: null,
              exemptions: null,
              clientIp: null,
            }),
          },
        ],
      },
    ],
  },
);
export const BillingChargePage = PageEnvelope(BillingChargeResponse, {
  examples: [pageExample('/subscriptions/billing/charges', [{ billingAgreementCharge: RETRYING_CHARGE_EXAMPLE }, { billingAgreementCharge: CHARGE_EXAMPLE }])],
});
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
