import { sql, type Kysely, type Selectable } from 'kysely';
import type { PaymentLink, PaymentLinkState } from '../../modules/payment-links/payment-link.js';
import type { PaymentLinkChanges, PaymentLinkFilter, PaymentLinksRepository } from '../../modules/payment-links/payment-links.repository.js';
import type { Database, PaymentLinksTable } from '../schema.js';

const toPaymentLink = (row: Selectable<PaymentLinksTable>): PaymentLink => ({ ...row, state: row.state as PaymentLinkState });

export class KyselyPaymentLinksRepository implements PaymentLinksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(link: PaymentLink): Promise<void> {
    await this.db.insertInto('paymentLinks').values(link).execute();
  }

  async findById(accountId: string, id: string): Promise<PaymentLink | null> {
    const row = await this.db.selectFrom('paymentLinks').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toPaymentLink(row) : null;
  }

  async findBySessionId(accountId: string, sessionId: string): Promise<PaymentLink | null> {
    const row = await this.db.selectFrom('paymentLinks').selectAll().where('sessionId', '=', sessionId).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toPaymentLink(row) : null;
  }

  async list(accountId: string, f: PaymentLinkFilter, offset: number, limit: number) {
    let q = this.db.selectFrom('paymentLinks').where('accountId', '=', accountId);
    if (f.state !== undefined) q = q.where('state', '=', f.state);
    if (f.reference !== undefined) q = q.where('reference', '=', f.reference);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toPaymentLink), total: Number(count.n) };
  }

  async listOverdue(accountId: string, nowIso: string, limit: number): Promise<PaymentLink[]> {
    const rows = await this.db
      .selectFrom('paymentLinks')
      .selectAll()
      .where('accountId', '=', accountId)
      .where('state', '=', 'ACTIVE')
      .where('expiresAt', '<=', nowIso)
      .orderBy('expiresAt')
      .limit(limit)
      .execute();
    return rows.map(toPaymentLink);
  }

  async updateIfState(accountId: string, id: string, expectedState: PaymentLinkState, changes: PaymentLinkChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('paymentLinks')
      .set(changes)
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('state', '=', expectedState)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
