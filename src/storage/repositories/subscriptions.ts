import { sql, type Kysely, type Selectable } from 'kysely';
import type { IntervalPeriod, Subscription, SubscriptionState, SubscriptionType } from '../../modules/subscriptions/subscription.js';
import type { SubscriptionChanges, SubscriptionFilter, SubscriptionsRepository } from '../../modules/subscriptions/subscriptions.repository.js';
import type { Database, SubscriptionsTable } from '../schema.js';

function toSubscription(row: Selectable<SubscriptionsTable>): Subscription {
  const { intervalPeriod, intervalFrequency, ...rest } = row;
  return {
    ...rest,
    state: row.state as SubscriptionState,
    type: row.type as SubscriptionType,
    interval: intervalPeriod && intervalFrequency ? { period: intervalPeriod as IntervalPeriod, frequency: intervalFrequency } : null,
  };
}

function changesRow(changes: SubscriptionChanges) {
  const { interval, ...rest } = changes;
  return interval === undefined ? rest : { ...rest, intervalPeriod: interval?.period ?? null, intervalFrequency: interval?.frequency ?? null };
}

export class KyselySubscriptionsRepository implements SubscriptionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(subscription: Subscription): Promise<void> {
    const { interval, ...rest } = subscription;
    await this.db
      .insertInto('subscriptions')
      .values({ ...rest, intervalPeriod: interval?.period ?? null, intervalFrequency: interval?.frequency ?? null })
      .execute();
  }

  async findById(accountId: string, id: string): Promise<Subscription | null> {
    const row = await this.db.selectFrom('subscriptions').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toSubscription(row) : null;
  }

  async list(accountId: string, f: SubscriptionFilter, offset: number, limit: number) {
    let q = this.db.selectFrom('subscriptions').where('accountId', '=', accountId);
    for (const column of ['customerId', 'reference', 'currency', 'state', 'paymentMethodId', 'pointOfSaleId', 'type'] as const) {
      const value = f[column];
      if (value !== undefined) q = q.where(column, '=', value);
    }
    if (f.createdAfter !== undefined) q = q.where('createdAt', '>=', f.createdAfter);
    if (f.createdBefore !== undefined) q = q.where('createdAt', '<=', f.createdBefore);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toSubscription), total: Number(count.n) };
  }

  async updateIfState(accountId: string, id: string, expectedState: SubscriptionState, changes: SubscriptionChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('subscriptions')
      .set(changesRow(changes))
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('state', '=', expectedState)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listLiveWithPaymentMethodExpiredBefore(date: string, limit: number): Promise<Subscription[]> {
    const rows = await this.db
      .selectFrom('subscriptions as s')
      .innerJoin('paymentMethods as pm', 'pm.id', 's.paymentMethodId')
      .selectAll('s')
      .where('s.state', 'in', ['ACTIVE', 'PENDING'])
      .where('pm.expiry', '<', date)
      .orderBy('s.id')
      .limit(limit)
      .execute();
    return rows.map(toSubscription);
  }

  async findByPaymentMethod(accountId: string, paymentMethodId: string): Promise<Subscription[]> {
    const rows = await this.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('accountId', '=', accountId)
      .where('paymentMethodId', '=', paymentMethodId)
      .execute();
    return rows.map(toSubscription);
  }
}
