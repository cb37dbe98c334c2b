import type { BillingPlan } from './plan.js';

export interface BillingPlansRepository {
  insert(plan: BillingPlan): Promise<void>;
  findById(accountId: string, id: string): Promise<BillingPlan | null>;
  /** Newest first. */
  list(accountId: string, offset: number, limit: number): Promise<{ items: BillingPlan[]; total: number }>;
}
