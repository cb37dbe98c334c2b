import { sql, type Kysely, type Selectable } from 'kysely';
import type { BillingCharge, ChargeState } from '../../modules/billing/charge.js';
import type { BillingChargesRepository, ChargeChanges, ChargeExpectation } from '../../modules/billing/charges.repository.js';
import type { BillingAgreementChargesTable, Database } from '../schema.js';

const toCharge = (row: Selectable<BillingAgreementChargesTable>): BillingCharge => ({ ...row, state: row.state as ChargeState });

export class KyselyBillingChargesRepository implements BillingChargesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertIfAbsent(charge: BillingCharge): Promise<boolean> {
    // The unique key (billing_agreement_id, period_start) decides: a concurrent insert of the same
    // period waits for the first to commit and then inserts nothing.
    const rows = await this.db
      .insertInto('billingAgreementCharges')
      .values(charge)
      .onConflict((oc) => oc.columns(['billingAgreementId', 'periodStart']).doNothing())
      .returning('id')
      .execute();
    return rows.length === 1;
  }

  async findById(accountId: string, id: string): Promise<BillingCharge | null> {
    const row = await this.db.selectFrom('billingAgreementCharges').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toCharge(row) : null;
  }

  async list(accountId: string, filter: { billingAgreementId?: string | undefined }, offset: number, limit: number) {
    let q = this.db.selectFrom('billingAgreementCharges').where('accountId', '=', accountId);
    if (filter.billingAgreementId !== undefined) q = q.where('billingAgreementId', '=', filter.billingAgreementId);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toCharge), total: Number(count.n) };
  }

  async updateIf(accountId: string, id: string, expected: ChargeExpectation, changes: ChargeChanges): Promise<BillingCharge | null> {
    const q = this.db
      .updateTable('billingAgreementCharges')
      .set(changes)
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('state', '=', expected.state);
    const expecting =
      'attempts' in expected
        ? q.where('attempts', '=', expected.attempts)
        : q.where('transactionId', '=', expected.answerOf).where('nextAttemptAt', 'is', null);
    const row = await expecting.returningAll().executeTakeFirst();
    return row ? toCharge(row) : null;
  }

  async transactionIdsOf(accountId: string, chargeIds: string[]): Promise<Map<string, string[]>> {
    const result = new Map<string, string[]>(chargeIds.map((id) => [id, []]));
    if (chargeIds.length === 0) return result;
    const rows = await this.db
      .selectFrom('transactions')
      .select(['id', 'billingAgreementChargeId'])
      .where('accountId', '=', accountId)
      .where('billingAgreementChargeId', 'in', chargeIds)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
    for (const row of rows) result.get(row.billingAgreementChargeId!)?.push(row.id);
    return result;
  }
}
