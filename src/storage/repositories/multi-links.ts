import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { MultiLink, MultiLinkState, MultiLinkSubscription, OrderLine } from '../../modules/multi-links/multi-link.js';
import type { MultiLinkChanges, MultiLinkFilter, MultiLinksRepository } from '../../modules/multi-links/multi-links.repository.js';
import type { IntervalPeriod, SubscriptionType } from '../../modules/subscriptions/subscription.js';
import type { Database, MultiLinkOrderLinesTable, MultiLinksTable } from '../schema.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
const flag = (value: number | null): boolean | null => (value === null ? null : value === 1);
const toFlag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);

function toRow(link: MultiLink): Insertable<MultiLinksTable> {
  const s = link.subscription;
  return {
    id: link.id,
    accountId: link.accountId,
    pointOfSaleId: link.pointOfSaleId,
    state: link.state,
    amount: link.amount,
    currency: link.currency,
    reference: link.reference,
    scaMode: link.scaMode,
    timeoutMinutes: link.timeout,
    instantCapture: link.instantCapture,
    textOnStatement: link.textOnStatement,
    attributes: link.attributes === null ? null : JSON.stringify(link.attributes),
    reportFailure: toFlag(link.reportFailure),
    reportExpired: toFlag(link.reportExpired),
    dynamicAmount: toFlag(link.dynamicAmount),
    notificationUrl: link.notificationUrl,
    successUrl: link.successUrl,
    failureUrl: link.failureUrl,
    retryUrl: link.retryUrl,
    returnUrl: link.returnUrl,
    allowedPaymentMethods: link.allowedPaymentMethods === null ? null : JSON.stringify(link.allowedPaymentMethods),
    ageMinimum: link.ageVerification?.minimumAge ?? null,
    ageCountry: link.ageVerification?.country ?? null,
    subscriptionType: s?.type ?? null,
    subscriptionAmount: s?.amount ?? null,
    subscriptionExpiryDate: s?.expiryDate ?? null,
    subscriptionIntervalPeriod: s?.interval?.period ?? null,
    subscriptionIntervalFrequency: s?.interval?.frequency ?? null,
    billingPlanId: s?.billingAgreement?.billingPlanId ?? null,
    billingNextChargeAt: s?.billingAgreement?.nextChargeAt ?? null,
    idempotencyKey: link.idempotencyKey,
    stateChangedAt: link.stateChangedAt,
    createdAt: link.createdAt,
    updatedAt: link.updatedAt,
  };
}

function toMultiLink(row: Selectable<MultiLinksTable>, lines: OrderLine[] | null): MultiLink {
  let subscription: MultiLinkSubscription | null = null;
  if (row.subscriptionType !== null) {
    subscription = {
      type: row.subscriptionType as SubscriptionType,
      amount: row.subscriptionAmount,
      expiryDate: row.subscriptionExpiryDate,
      interval:
        row.subscriptionIntervalPeriod !== null && row.subscriptionIntervalFrequency !== null
          ? { period: row.subscriptionIntervalPeriod as IntervalPeriod, frequency: row.subscriptionIntervalFrequency }
          : null,
      billingAgreement: row.billingPlanId !== null ? { billingPlanId: row.billingPlanId, nextChargeAt: row.billingNextChargeAt } : null,
    };
  }
  return {
    id: row.id,
    accountId: row.accountId,
    pointOfSaleId: row.pointOfSaleId,
    state: row.state as MultiLinkState,
    amount: row.amount,
    currency: row.currency,
    reference: row.reference,
    subscription,
    scaMode: row.scaMode,
    timeout: row.timeoutMinutes,
    instantCapture: row.instantCapture,
    textOnStatement: row.textOnStatement,
    attributes: json(row.attributes),
    reportFailure: flag(row.reportFailure),
    reportExpired: flag(row.reportExpired),
    dynamicAmount: flag(row.dynamicAmount),
    notificationUrl: row.notificationUrl,
    successUrl: row.successUrl,
    failureUrl: row.failureUrl,
    retryUrl: row.retryUrl,
    returnUrl: row.returnUrl,
    allowedPaymentMethods: json(row.allowedPaymentMethods),
    ageVerification: row.ageMinimum !== null && row.ageCountry !== null ? { minimumAge: row.ageMinimum, country: row.ageCountry } : null,
    orderLines: lines,
    idempotencyKey: row.idempotencyKey,
    stateChangedAt: row.stateChangedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const toOrderLine = (row: Selectable<MultiLinkOrderLinesTable>): OrderLine => ({
  description: row.description,
  imageUrl: row.imageUrl,
  quantity: row.quantity,
  unitPrice: row.unitPrice,
  totalAmount: row.totalAmount,
  type: row.type,
});

export class KyselyMultiLinksRepository implements MultiLinksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(link: MultiLink): Promise<void> {
    await this.db.insertInto('multiLinks').values(toRow(link)).execute();
    if (link.orderLines?.length) {
      await this.db
        .insertInto('multiLinkOrderLines')
        .values(
          link.orderLines.map((line, position) => ({
            multiLinkId: link.id,
            position,
            description: line.description,
            imageUrl: line.imageUrl,
            quantity: line.quantity,
            unitPrice: line.unitPrice,
            totalAmount: line.totalAmount,
            type: line.type,
          })),
        )
        .execute();
    }
  }

  async findById(accountId: string, id: string): Promise<MultiLink | null> {
    const row = await this.db.selectFrom('multiLinks').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? (await this.withLines([row]))[0]! : null;
  }

  async findByIdAnyAccount(id: string): Promise<MultiLink | null> {
    const row = await this.db.selectFrom('multiLinks').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await this.withLines([row]))[0]! : null;
  }

  async findByIdempotencyKey(accountId: string, key: string): Promise<MultiLink | null> {
    const row = await this.db.selectFrom('multiLinks').selectAll().where('accountId', '=', accountId).where('idempotencyKey', '=', key).executeTakeFirst();
    return row ? (await this.withLines([row]))[0]! : null;
  }

  async list(accountId: string, f: MultiLinkFilter, offset: number, limit: number) {
    let q = this.db.selectFrom('multiLinks').where('accountId', '=', accountId);
    if (f.pointOfSaleId !== undefined) q = q.where('pointOfSaleId', '=', f.pointOfSaleId);
    if (f.state !== undefined) q = q.where('state', '=', f.state);
    if (f.createdAfter !== undefined) q = q.where('createdAt', '>=', f.createdAfter);
    if (f.createdBefore !== undefined) q = q.where('createdAt', '<=', f.createdBefore);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: await this.withLines(rows), total: Number(count.n) };
  }

  async updateIfState(accountId: string, id: string, expectedState: MultiLinkState, changes: MultiLinkChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('multiLinks')
      .set(changes)
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('state', '=', expectedState)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The rows' order lines in one query; a link without any has `orderLines` null. */
  private async withLines(rows: Selectable<MultiLinksTable>[]): Promise<MultiLink[]> {
    if (rows.length === 0) return [];
    const lines = await this.db
      .selectFrom('multiLinkOrderLines')
      .selectAll()
      .where(
        'multiLinkId',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('multiLinkId')
      .orderBy('position')
      .execute();
    const byLink = new Map<string, OrderLine[]>();
    for (const line of lines) {
      const list = byLink.get(line.multiLinkId) ?? [];
      list.push(toOrderLine(line));
      byLink.set(line.multiLinkId, list);
    }
    return rows.map((row) => toMultiLink(row, byLink.get(row.id) ?? null));
  }
}
