import { sql, type Kysely, type Selectable } from 'kysely';
import type { AgreementState, BillingAgreement } from '../../modules/billing/agreement.js';
import type { AgreementChanges, AgreementExpectation, BillingAgreementsRepository } from '../../modules/billing/agreements.repository.js';
import type { BillingAgreementsTable, Database } from '../schema.js';

const toAgreement = (row: Selectable<BillingAgreementsTable>): BillingAgreement => ({ ...row, state: row.state as AgreementState });

export class KyselyBillingAgreementsRepository implements BillingAgreementsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(agreement: BillingAgreement): Promise<void> {
    await this.db.insertInto('billingAgreements').values(agreement).execute();
  }

  async findById(accountId: string, id: string): Promise<BillingAgreement | null> {
    const row = await this.db.selectFrom('billingAgreements').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toAgreement(row) : null;
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
    await this.db.updateTable('billingAgreements').set({ lastChargeAt: at, updatedAt: at }).where('id', '=', id).where('accountId', '=', accountId).execute();
  }
}
