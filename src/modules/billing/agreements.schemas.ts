import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample } from '../../shared/pagination.js';
import { DateOnly, DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { AGREEMENT_STATES, type BillingAgreement } from './agreement.js';

/** A date-time, or a plain date meaning 00:00 UTC that day (INTERFACE §7). */
export const ChargeInstant = Type.Union([DateOnly, DateTime], { description: 'RFC 3339 date-time, or YYYY-MM-DD for 00:00 UTC that day.' });

export const CreateBillingAgreementBody = Type.Object(
  {
    billingPlanId: Uuid,
    subscriptionId: Uuid,
    reference: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 256 }))),
    nextChargeAt: Type.Optional(Nullable(ChargeInstant)),
  },
  {
    examples: [
      { billingPlanId: '779a75c0-f105-4d72-b9a5-98e304b77ac5', subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235', reference: 'coffee-club-81' },
      {
        billingPlanId: '779a75c0-f105-4d72-b9a5-98e304b77ac5',
        subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235',
        reference: 'coffee-club-81',
        nextChargeAt: '2030-01-01',
      },
    ],
  },
);

export const ResumeBillingAgreementBody = Type.Object(
  { nextChargeAt: ChargeInstant },
  { examples: [{ nextChargeAt: '2030-02-01' }, { nextChargeAt: '2030-02-01T09:00:00.000Z' }] },
);

export const BillingAgreementRecord = Type.Object({
  id: Uuid,
  billingPlanId: Uuid,
  subscriptionId: Nullable(Uuid),
  sessionId: Nullable(Type.String()),
  customerId: Nullable(Type.String()),
  nextChargeAt: Nullable(DateTime),
  lastChargeAt: Nullable(DateTime),
  desiredDate: Nullable(
    Type.Integer({
      minimum: 1,
      maximum: 31,
      description: 'Day of the month monthly charges aim for (the last day of a shorter month); null unless the plan is monthly.',
    }),
  ),
  state: StringEnum(AGREEMENT_STATES),
  stateChangedAt: DateTime,
  reference: Nullable(Type.String()),
  createdAt: DateTime,
});

export const BillingAgreementResponse = Type.Object(
  { billingAgreement: BillingAgreementRecord },
  {
    examples: [
      {
        billingAgreement: {
          id: '2371383f-4d2d-46ca-8ea8-0fe7925f8f5b',
          billingPlanId: '779a75c0-f105-4d72-b9a5-98e304b77ac5',
          subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235',
          sessionId: null,
          customerId: 'customer-81',
          nextChargeAt: '2026-12-01T00:00:00.000Z',
          lastChargeAt: null,
          desiredDate: 1,
          state: 'ACTIVE',
          stateChangedAt: '2026-11-25T13:29:05.480Z',
          reference: 'coffee-club-81',
          createdAt: '2026-11-25T13:29:05.480Z',
        },
      },
    ],
  },
);
export const BillingAgreementPage = PageEnvelope(BillingAgreementResponse, {
  examples: [pageExample('/subscriptions/billing/agreements', [...(BillingAgreementResponse.examples as unknown[])])],
});
export const BillingAgreementParams = Type.Object({ agreementId: Type.String({ minLength: 1, maxLength: 64 }) });

export function billingAgreementWire(a: BillingAgreement) {
  return {
    billingAgreement: {
      id: a.id,
      billingPlanId: a.billingPlanId,
      subscriptionId: a.subscriptionId,
      sessionId: a.sessionId,
      customerId: a.customerId,
      nextChargeAt: a.nextChargeAt,
      lastChargeAt: a.lastChargeAt,
      desiredDate: a.desiredDate,
      state: a.state,
      stateChangedAt: a.stateChangedAt,
      reference: a.reference,
      createdAt: a.createdAt,
    },
  };
}
