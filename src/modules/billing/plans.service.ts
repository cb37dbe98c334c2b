/** Billing plan use cases: create, read, list. A plan never changes once created. */
import type { Clock } from '../../clock.js';
import { notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { InstantCapture } from '../transactions/transaction.js';
import type { Interval } from './billing-schedule.js';
import type { BillingPlan } from './plan.js';
import type { BillingPlansRepository } from './plans.repository.js';

export interface CreateBillingPlanInput {
  name: string;
  amount: number;
  currency: string;
  maxAttempts: number;
  interval: Interval;
  instantCapture?: InstantCapture | undefined;
  color?: string | null | undefined;
  emoji?: string | null | undefined;
}

export class BillingPlansService {
  constructor(private readonly deps: { plans: BillingPlansRepository; clock: Clock }) {}

  async create(accountId: string, input: CreateBillingPlanInput): Promise<BillingPlan> {
    const plan: BillingPlan = {
      id: newId(),
      accountId,
      name: input.name,
      amount: input.amount,
      currency: input.currency,
      maxAttempts: input.maxAttempts,
      interval: { period: input.interval.period, frequency: input.interval.frequency },
      // A recurring charge only authorizes unless the plan says otherwise, like every other payment.
      instantCapture: input.instantCapture ?? 'OFF',
      color: input.color ?? null,
      emoji: input.emoji ?? null,
      createdAt: this.deps.clock.nowIso(),
    };
    await this.deps.plans.insert(plan);
    return plan;
  }

  async get(accountId: string, id: string): Promise<BillingPlan> {
    const plan = await this.deps.plans.findById(accountId, id);
    if (!plan) throw notFound('billing plan');
    return plan;
  }

  list(accountId: string, offset: number, limit: number): Promise<{ items: BillingPlan[]; total: number }> {
    return this.deps.plans.list(accountId, offset, limit);
  }
}
