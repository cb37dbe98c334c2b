import { sql, type Kysely, type Selectable } from 'kysely';
import type { AgreementState, BillingAgreement } from '../../modules/billing/agreement.js';
import type { AgreementChanges, AgreementExpectation, BillingAgreementsRepository } from '../../modules/billing/agreements.repository.js';
import type { BillingPlan } from '../../modules/billing/plan.js';
import type { BillingAgreementsTable, BillingPlansTable, Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';
import { PLAN_COLUMNS, toPlan } from './billing-plans.js';
import { joinedColumns, pickJoined } from './joined-columns.js';
import { deferrable } from '../postgres/write-combining.js';

/** Field by field: the row may be a wider one (findWithPlan's), whose other columns stay out. */
function toAgreement(row: Selectable<BillingAgreementsTable>): BillingAgreement {
  return {
    id: row.id,
    accountId: row.accountId,
    billingPlanId: row.billingPlanId,
    subscriptionId: row.subscriptionId,
    sessionId: row.sessionId,
    customerId: row.customerId,
    state: row.state as AgreementState,
    nextChargeAt: row.nextChargeAt,
    lastChargeAt: row.lastChargeAt,
    desiredDate: row.desiredDate,
    reference: row.reference,
    stateChangedAt: row.stateChangedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** An agreement with its plan, in one read (the charge-due job's): compiled once (query-template.ts). */
const selectWithPlan = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db
    .selectFrom('billingAgreements as a')
    .leftJoin('billingPlans as bp', (join) => join.onRef('bp.id', '=', 'a.billingPlanId').onRef('bp.accountId', '=', 'a.accountId'))
    .selectAll('a')
    .select(joinedColumns('bp', 'plan', PLAN_COLUMNS))
    .where('a.id', '=', p.id)
    .where('a.accountId', '=', p.accountId),
);

export class KyselyBillingAgreementsRepository implements BillingAgreementsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(agreement: BillingAgreement): Promise<void> {
    await this.db.insertInto('billingAgreements').values(agreement).execute();
  }

  async findById(accountId: string, id: string): Promise<BillingAgreement | null> {
    const row = await this.db.selectFrom('billingAgreements').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toAgreement(row) : null;
  }

  async findWithPlan(accountId: string, id: string): Promise<{ agreement: BillingAgreement; plan: BillingPlan | null } | null> {
    const row = await selectWithPlan.executeTakeFirst(this.db, { id, accountId });
    if (!row) return null;
    const plan = pickJoined(row, 'plan', PLAN_COLUMNS);
    return { agreement: toAgreement(row), plan: plan ? toPlan(plan as Selectable<BillingPlansTable>) : null };
  }

  async findBySession(accountId: string, sessionId: string): Promise<BillingAgreement | null> {
    const row = await this.db
      .selectFrom('billingAgreements')
      .selectAll()
      .where('sessionId', '=', sessionId)
      .where('accountId', '=', accountId)
      .executeTakeFirst();
    return row ? toAgreement(row) : null;
  }

  async list(accountId: string, offset: number, limit: number) {
    const q = this.db.selectFrom('billingAgreements').where('accountId', '=', accountId);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toAgreement), total: Number(count.n) };
  }

  async updateIf(accountId: string, id: string, expected: AgreementExpectation, changes: AgreementChanges): Promise<BillingAgreement | null> {
    let q = this.db.updateTable('billingAgreements').set(changes).where('id', '=', id).where('accountId', '=', accountId).where('state', '=', expected.state);
    if (expected.nextChargeAt !== undefined) {
      q = expected.nextChargeAt === null ? q.where('nextChargeAt', 'is', null) : q.where('nextChargeAt', '=', expected.nextChargeAt);
    }
    const row = await q.returningAll().executeTakeFirst();
    return row ? toAgreement(row) : null;
  }

  async recordCharge(accountId: string, id: string, at: string): Promise<void> {
    // Deferrable: an update by key, its result unused (on PostgreSQL sent with the commit's other writes, postgres/write-combining.ts).
    await deferrable(
      this.db.updateTable('billingAgreements').set({ lastChargeAt: at, updatedAt: at }).where('id', '=', id).where('accountId', '=', accountId),
    ).execute();
  }
}
