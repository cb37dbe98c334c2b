import { sql, type Kysely, type Selectable } from 'kysely';
import type { IntervalPeriod } from '../../modules/billing/billing-schedule.js';
import type { BillingPlan } from '../../modules/billing/plan.js';
import type { BillingPlansRepository } from '../../modules/billing/plans.repository.js';
import type { InstantCapture } from '../../modules/transactions/transaction.js';
import type { BillingPlansTable, Database } from '../schema.js';

/** Every column of a plan row (a join that reads one aliases them, see billing-agreements' findWithPlan). */
export const PLAN_COLUMNS = [
  'id',
  'accountId',
  'name',
  'amount',
  'currency',
  'maxAttempts',
  'intervalPeriod',
  'intervalFrequency',
  'instantCapture',
  'color',
  'emoji',
  'createdAt',
] as const satisfies ReadonlyArray<keyof BillingPlansTable>;

export function toPlan(row: Selectable<BillingPlansTable>): BillingPlan {
  const { intervalPeriod, intervalFrequency, instantCapture, ...rest } = row;
  return { ...rest, instantCapture: instantCapture as InstantCapture, interval: { period: intervalPeriod as IntervalPeriod, frequency: intervalFrequency } };
}

export class KyselyBillingPlansRepository implements BillingPlansRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(plan: BillingPlan): Promise<void> {
    const { interval, ...rest } = plan;
    await this.db
      .insertInto('billingPlans')
      .values({ ...rest, intervalPeriod: interval.period, intervalFrequency: interval.frequency })
      .execute();
  }

  async findById(accountId: string, id: string): Promise<BillingPlan | null> {
    const row = await this.db.selectFrom('billingPlans').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toPlan(row) : null;
  }

  async list(accountId: string, offset: number, limit: number) {
    const q = this.db.selectFrom('billingPlans').where('accountId', '=', accountId);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toPlan), total: Number(count.n) };
  }
}
