import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample } from '../../shared/pagination.js';
import { Currency, DateTime, Nullable, PositiveAmount, StringEnum, Uuid } from '../../shared/wire.js';
import { INSTANT_CAPTURE_MODES } from '../transactions/transaction.js';
import { INTERVAL_PERIODS } from './billing-schedule.js';
import type { BillingPlan } from './plan.js';

export const IntervalSchema = Type.Object({
  period: StringEnum(INTERVAL_PERIODS),
  frequency: Type.Integer({ minimum: 1, maximum: 31, description: 'Number of periods between charges.' }),
});

export const CreateBillingPlanBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    amount: PositiveAmount,
    currency: Currency,
    maxAttempts: Type.Integer({ minimum: 1, maximum: 31, description: 'Attempts per charge before it is FAILED.' }),
    interval: IntervalSchema,
    instantCapture: Type.Optional(StringEnum(INSTANT_CAPTURE_MODES, { description: "Capture mode of the charges' payments; default OFF." })),
    color: Type.Optional(Nullable(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: 'Display colour, #RRGGBB.' }))),
    emoji: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 16 }))),
  },
  {
    examples: [{ name: 'Coffee club', amount: 1299, currency: 'EUR', maxAttempts: 3, interval: { period: 'MONTH', frequency: 1 }, instantCapture: 'NO_VOID' }],
  },
);

export const BillingPlanRecord = Type.Object({
  id: Uuid,
  name: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  maxAttempts: Type.Integer(),
  interval: IntervalSchema,
  instantCapture: StringEnum(INSTANT_CAPTURE_MODES),
  color: Nullable(Type.String()),
  emoji: Nullable(Type.String()),
  createdAt: DateTime,
});

export const BillingPlanResponse = Type.Object(
  { billingPlan: BillingPlanRecord },
  {
    examples: [
      {
        billingPlan: {
          id: '779a75c0-f105-4d72-b9a5-98e304b77ac5',
          name: 'Coffee club',
          amount: 1299,
          currency: 'EUR',
          maxAttempts: 3,
          interval: { period: 'MONTH', frequency: 1 },
          instantCapture: 'NO_VOID',
          color: null,
          emoji: null,
          createdAt: '2026-11-25T13:29:05.471Z',
        },
      },
    ],
  },
);
export const BillingPlanPage = PageEnvelope(BillingPlanResponse, {
  examples: [pageExample('/subscriptions/billing/plans', [...(BillingPlanResponse.examples as unknown[])])],
});
// The seed types the path id as a string: an id that is not one of ours is a 404, like any unknown id.
export const BillingPlanParams = Type.Object({ planId: Type.String({ minLength: 1, maxLength: 64 }) });

export function billingPlanWire(plan: BillingPlan) {
  return {
    billingPlan: {
      id: plan.id,
      name: plan.name,
      amount: plan.amount,
      currency: plan.currency,
      maxAttempts: plan.maxAttempts,
      interval: { period: plan.interval.period, frequency: plan.interval.frequency },
      instantCapture: plan.instantCapture,
      color: plan.color,
      emoji: plan.emoji,
      createdAt: plan.createdAt,
    },
  };
}
