import { sql, type Kysely, type Selectable } from 'kysely';
import type { CardDetails, PaymentMethod, PaymentMethodType } from '../../modules/payment-methods/payment-method.js';
import type { PaymentMethodsRepository } from '../../modules/payment-methods/payment-methods.repository.js';
import type { Database, PaymentMethodsTable } from '../schema.js';

function toPaymentMethod(row: Selectable<PaymentMethodsTable>): PaymentMethod {
  return {
    id: row.id,
    accountId: row.accountId,
    type: row.type as PaymentMethodType,
    subType: row.subType,
    expiry: row.expiry,
    displayText: row.displayText,
    holderName: row.holderName,
    customerId: row.customerId,
    createdAt: row.createdAt,
    deletedAt: row.deletedAt,
    card: row.card === null ? null : (JSON.parse(row.card) as CardDetails),
  };
}

/** Every read but sealedPan leaves the sealed number in the database. */
const COLUMNS = ['id', 'accountId', 'customerId', 'type', 'subType', 'expiry', 'displayText', 'holderName', 'card', 'createdAt', 'deletedAt'] as const;

export class KyselyPaymentMethodsRepository implements PaymentMethodsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(pm: PaymentMethod, panSealed: string | null): Promise<void> {
    await this.db
      .insertInto('paymentMethods')
      .values({
        id: pm.id,
        accountId: pm.accountId,
        customerId: pm.customerId,
        type: pm.type,
        subType: pm.subType,
        expiry: pm.expiry,
        displayText: pm.displayText,
        holderName: pm.holderName,
        panSealed,
        card: pm.card === null ? null : JSON.stringify(pm.card),
        createdAt: pm.createdAt,
        deletedAt: pm.deletedAt,
      })
      .execute();
  }

  async findById(accountId: string, id: string, withDeleted = false): Promise<PaymentMethod | null> {
    let q = this.db.selectFrom('paymentMethods').select(COLUMNS).where('id', '=', id).where('accountId', '=', accountId);
    if (!withDeleted) q = q.where('deletedAt', 'is', null);
    const row = await q.executeTakeFirst();
    return row ? toPaymentMethod({ ...row, panSealed: null }) : null;
  }

  async findWithSealedPan(accountId: string, id: string): Promise<{ paymentMethod: PaymentMethod; panSealed: string | null } | null> {
    const row = await this.db
      .selectFrom('paymentMethods')
      .select([...COLUMNS, 'panSealed'])
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .executeTakeFirst();
    return row ? { paymentMethod: toPaymentMethod({ ...row, panSealed: null }), panSealed: row.panSealed } : null;
  }

  async sealedPan(id: string): Promise<string | null> {
    const row = await this.db.selectFrom('paymentMethods').select('panSealed').where('id', '=', id).executeTakeFirst();
    return row?.panSealed ?? null;
  }

  async list(accountId: string, customerId: string | null, offset: number, limit: number) {
    let q = this.db.selectFrom('paymentMethods').where('accountId', '=', accountId).where('deletedAt', 'is', null);
    if (customerId !== null) q = q.where('customerId', '=', customerId);
    const [rows, count] = await Promise.all([
      q.select(COLUMNS).orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map((row) => toPaymentMethod({ ...row, panSealed: null })), total: Number(count.n) };
  }

  async markDeleted(accountId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('paymentMethods')
      .set({ deletedAt: at })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
