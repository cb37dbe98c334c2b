import { sql, type Kysely, type Selectable } from 'kysely';
import type { IntervalPeriod, Subscription, SubscriptionState, SubscriptionType } from '../../modules/subscriptions/subscription.js';
import type { ChargeRead, SubscriptionChanges, SubscriptionFilter, SubscriptionsRepository } from '../../modules/subscriptions/subscriptions.repository.js';
import type { Database, SubscriptionsTable } from '../schema.js';
import { joinedColumns, pickJoined } from './joined-columns.js';
import { PAYMENT_METHOD_COLUMNS, toPaymentMethod } from './payment-methods.js';
import { POINT_OF_SALE_COLUMNS, toPointOfSale } from './points-of-sale.js';
import { queryTemplate, type Params } from '../query-template.js';
import { countingAhead, type CountTake, totalOf } from './ingestion-upsert.js';

/** Compiled once (query-template.ts). */
const selectSubscription = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('subscriptions').selectAll().where('id', '=', p.id).where('accountId', '=', p.accountId),
);

/** Every column of a subscription row (a join that reads one aliases them, see transactions' findForDrive). */
export const SUBSCRIPTION_COLUMNS = [
  'id',
  'accountId',
  'pointOfSaleId',
  'paymentMethodId',
  'sessionId',
  'customerId',
  'currency',
  'reference',
  'description',
  'state',
  'statusReason',
  'type',
  'expiryDate',
  'intervalPeriod',
  'intervalFrequency',
  'amount',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof SubscriptionsTable>;

/** Field by field: the row may be a wider one (a join's), whose other columns stay out. */
export function toSubscription(row: Selectable<SubscriptionsTable>): Subscription {
  const { intervalPeriod, intervalFrequency } = row;
  return {
    id: row.id,
    accountId: row.accountId,
    pointOfSaleId: row.pointOfSaleId,
    paymentMethodId: row.paymentMethodId,
    sessionId: row.sessionId,
    customerId: row.customerId,
    currency: row.currency,
    reference: row.reference,
    description: row.description,
    state: row.state as SubscriptionState,
    statusReason: row.statusReason,
    type: row.type as SubscriptionType,
    expiryDate: row.expiryDate,
    interval: intervalPeriod && intervalFrequency ? { period: intervalPeriod as IntervalPeriod, frequency: intervalFrequency } : null,
    amount: row.amount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function changesRow(changes: SubscriptionChanges) {
  const { interval, ...rest } = changes;
  return interval === undefined ? rest : { ...rest, intervalPeriod: interval?.period ?? null, intervalFrequency: interval?.frequency ?? null };
}

/** Ids per statement of findForChargeMany: a batch's 500 in one, far below either store's parameter limit. */
const CHARGE_READ_CHUNK = 1000;

/** What charging a subscription needs, in one read: it with its payment method and point of sale. */
const chargeQuery = (db: Kysely<Database>) =>
  db
    .selectFrom('subscriptions as s')
    .leftJoin('paymentMethods as pm', (join) => join.onRef('pm.id', '=', 's.paymentMethodId').onRef('pm.accountId', '=', 's.accountId'))
    .leftJoin('pointsOfSale as pos', (join) => join.onRef('pos.id', '=', 's.pointOfSaleId').onRef('pos.accountId', '=', 's.accountId'))
    .selectAll('s')
    .select(joinedColumns('pm', 'pm', PAYMENT_METHOD_COLUMNS))
    .select(joinedColumns('pos', 'pos', POINT_OF_SALE_COLUMNS))
    .select(['pm.panSealed as pmPanSealed', 'pos.webhookAuthenticationSealed as posWebhookAuthenticationSealed']);

type ChargeRow = Awaited<ReturnType<ReturnType<typeof chargeQuery>['executeTakeFirstOrThrow']>>;

/** One subscription's charge read (findForCharge, the MIT's hot path): compiled once. */
const selectForCharge = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  chargeQuery(db).where('s.id', '=', p.id).where('s.accountId', '=', p.accountId),
);

/**
 * PostgreSQL: the charge read of one subscription and an ingestion count taken ahead
 * (ingestion-counters.ts) in one statement — one round trip fewer per POST /mit: addAhead's
 * statement (countingAhead) with the read left-joined to its one row, so a missing subscription
 * still answers the count (the caller gives it back).
 */
const chargeReadCountingAhead = queryTemplate((db: Kysely<Database>, p: Params<{ id: string } & CountTake>) =>
  countingAhead(db, p)
    .leftJoin(chargeQuery(db).where('s.id', '=', p.id).where('s.accountId', '=', p.accountId).as('c'), (join) => join.onTrue())
    .selectAll('c'),
);

/** The charge read (null: no such subscription) and the count's new total (null: refused), in one statement. */
export async function findForChargeCountingAhead(
  db: Kysely<Database>,
  read: { accountId: string; id: string },
  take: Omit<CountTake, 'accountId'>,
): Promise<{ read: ChargeRead | null; total: number | null }> {
  // The left-joined read's columns (null when there is no such subscription) and the count.
  const row = (await chargeReadCountingAhead.executeTakeFirst(db, { ...read, ...take })) as unknown as (ChargeRow & { ingestionCount?: unknown }) | undefined;
  if (!row) throw new Error('the counting charge read returned no row');
  return { read: row.id === null ? null : toChargeRead(row), total: totalOf(row.ingestionCount) };
}

/** The wide joined row read field by field (no copy of it, no deletes: it is on every MIT's path). */
function toChargeRead(row: ChargeRow): ChargeRead {
  const sealed = { pan: row.pmPanSealed ?? null, webhookAuthentication: row.posWebhookAuthenticationSealed ?? null };
  const pm = pickJoined(row, 'pm', PAYMENT_METHOD_COLUMNS);
  const pos = pickJoined(row, 'pos', POINT_OF_SALE_COLUMNS);
  return {
    subscription: toSubscription(row),
    paymentMethod: pm && toPaymentMethod(pm as Parameters<typeof toPaymentMethod>[0]),
    pointOfSale: pos && toPointOfSale(pos as Parameters<typeof toPointOfSale>[0]),
    sealed,
  };
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

  async findForCharge(accountId: string, id: string): Promise<ChargeRead | null> {
    const row = await selectForCharge.executeTakeFirst(this.db, { id, accountId });
    return row ? toChargeRead(row) : null;
  }

  async findForChargeMany(accountId: string, ids: readonly string[]): Promise<Map<string, ChargeRead>> {
    const found = new Map<string, ChargeRead>();
    for (let i = 0; i < ids.length; i += CHARGE_READ_CHUNK) {
      const rows = await chargeQuery(this.db)
        .where('s.id', 'in', ids.slice(i, i + CHARGE_READ_CHUNK))
        .where('s.accountId', '=', accountId)
        .execute();
      for (const row of rows) found.set(row.id, toChargeRead(row));
    }
    return found;
  }

  async findById(accountId: string, id: string): Promise<Subscription | null> {
    const row = await selectSubscription.executeTakeFirst(this.db, { id, accountId });
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
