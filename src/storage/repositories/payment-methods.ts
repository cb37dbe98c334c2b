import { sql, type Kysely, type QueryCreator, type Selectable } from 'kysely';
import { joinable } from '../postgres/write-combining.js';
import { type CardDetails, type CardSeries, displayTextOf, type PaymentMethod, type PaymentMethodType } from '../../modules/payment-methods/payment-method.js';
import type { CardUpdate, LegacyCardRow, PaymentMethodsRepository } from '../../modules/payment-methods/payment-methods.repository.js';
import type { Database, PaymentMethodsTable } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

export function toPaymentMethod(row: Omit<Selectable<PaymentMethodsTable>, 'panSealed' | 'seriesClaimedBy' | 'seriesClaimedAt'>): PaymentMethod {
  const card = row.card === null ? null : (JSON.parse(row.card) as CardDetails);
  return {
    id: row.id,
    accountId: row.accountId,
    type: row.type as PaymentMethodType,
    subType: row.subType,
    expiry: row.expiry,
    // A card's masked number in the format of INTERFACE §11.1, also for rows written before it.
    displayText: displayTextOf({ card, displayText: row.displayText }),
    holderName: row.holderName,
    customerId: row.customerId,
    accountUpdatesEnabled: row.accountUpdatesEnabled === 1,
    createdAt: row.createdAt,
    deletedAt: row.deletedAt,
    card,
    series:
      row.seriesType !== null && row.seriesReference !== null
        ? { type: row.seriesType as CardSeries['type'], reference: row.seriesReference, agreementId: row.seriesAgreementId }
        : null,
  };
}

/** Every read but sealedPan leaves the sealed number in the database. */
export const PAYMENT_METHOD_COLUMNS = [
  'id',
  'accountId',
  'customerId',
  'type',
  'subType',
  'expiry',
  'displayText',
  'holderName',
  'card',
  'accountUpdatesEnabled',
  'createdAt',
  'deletedAt',
  'seriesType',
  'seriesReference',
  'seriesAgreementId',
] as const;

/** The rows the start-up upgrade rewrites; the same expressions as the partial indexes of migration 015. */
/** findById's reads, live ones only and with deleted ones: compiled once (query-template.ts). */
const selectLiveMethod = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('paymentMethods').select(PAYMENT_METHOD_COLUMNS).where('id', '=', p.id).where('accountId', '=', p.accountId).where('deletedAt', 'is', null),
);
const selectAnyMethod = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; accountId: string }>) =>
  db.selectFrom('paymentMethods').select(PAYMENT_METHOD_COLUMNS).where('id', '=', p.id).where('accountId', '=', p.accountId),
);

const LEGACY_METHOD = sql<boolean>`substr(display_text, 1, 1) = '•'`;
const LEGACY_TRANSACTION = sql<boolean>`substr(payment_method_display_text, 1, 1) = '•'`;

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
        accountUpdatesEnabled: pm.accountUpdatesEnabled ? 1 : 0,
        createdAt: pm.createdAt,
        deletedAt: pm.deletedAt,
      })
      .execute();
  }

  async findById(accountId: string, id: string, withDeleted = false): Promise<PaymentMethod | null> {
    const row = await (withDeleted ? selectAnyMethod : selectLiveMethod).executeTakeFirst(this.db, { id, accountId });
    return row ? toPaymentMethod(row) : null;
  }

  async findLiveByIdAnyAccount(id: string): Promise<PaymentMethod | null> {
    const row = await this.db
      .selectFrom('paymentMethods')
      .select(PAYMENT_METHOD_COLUMNS)
      .where('id', '=', id)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return row ? toPaymentMethod(row) : null;
  }

  async list(accountId: string, customerId: string | null, offset: number, limit: number) {
    let q = this.db.selectFrom('paymentMethods').where('accountId', '=', accountId).where('deletedAt', 'is', null);
    if (customerId !== null) q = q.where('customerId', '=', customerId);
    const [rows, count] = await Promise.all([
      q.select(PAYMENT_METHOD_COLUMNS).orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toPaymentMethod), total: Number(count.n) };
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

  async setAccountUpdates(accountId: string, id: string, enabled: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('paymentMethods')
      .set({ accountUpdatesEnabled: enabled ? 1 : 0 })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('type', '=', 'CARD')
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async applyCardUpdate(id: string, update: CardUpdate): Promise<boolean> {
    const result = await this.db
      .updateTable('paymentMethods')
      .set({
        subType: update.subType,
        expiry: update.expiry,
        displayText: update.displayText,
        holderName: update.holderName,
        card: JSON.stringify(update.card),
        ...(update.panSealed === null ? {} : { panSealed: update.panSealed }),
      })
      .where('id', '=', id)
      .where('type', '=', 'CARD')
      .where('accountUpdatesEnabled', '=', 1)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async legacyCards(limit: number): Promise<LegacyCardRow[]> {
    const rows = await this.db
      .selectFrom('paymentMethods')
      .select(['id', 'card', 'panSealed'])
      .where(LEGACY_METHOD)
      .where('card', 'is not', null)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ id: row.id, card: JSON.parse(row.card!) as CardDetails, panSealed: row.panSealed }));
  }

  async upgradeLegacyCard(id: string, card: CardDetails, displayText: string): Promise<void> {
    await this.db
      .updateTable('paymentMethods')
      .set({ card: JSON.stringify(card), displayText })
      .where('id', '=', id)
      .where(LEGACY_METHOD)
      .execute();
  }

  async upgradeLegacyTransactions(limit: number): Promise<number> {
    // The method's display text once it no longer has the old format; a transaction whose method
    // was not rewritten (or has none) keeps its text and is not picked again.
    const current = sql<string>`(select pm.display_text from payment_methods pm where pm.id = transactions.payment_method_id and substr(pm.display_text, 1, 1) <> '•')`;
    const batch = this.db
      .selectFrom('transactions')
      .select('id')
      .where(LEGACY_TRANSACTION)
      .where(sql<boolean>`exists (select 1 from payment_methods pm where pm.id = transactions.payment_method_id and substr(pm.display_text, 1, 1) <> '•')`)
      .limit(limit);
    const result = await this.db.updateTable('transactions').set({ paymentMethodDisplayText: current }).where('id', 'in', batch).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  // recordSeries and releaseSeries write a row only their operation writes at that moment (the
  // claim's holder, or the customer payment that stored the card): joinable with other answers' commits.
  async recordSeries(accountId: string, id: string, series: CardSeries, claimedBy?: string): Promise<void> {
    const params = { accountId, id, type: series.type, reference: series.reference, agreementId: series.agreementId };
    if (claimedBy === undefined) await recordSeriesStatement.execute(this.db, params);
    else await recordClaimedSeriesStatement.execute(this.db, { ...params, claimedBy });
  }

  async releaseSeries(accountId: string, id: string, operationId: string): Promise<void> {
    await releaseSeriesStatement.execute(this.db, { accountId, id, operationId });
  }
}

interface SeriesUpdate {
  accountId: string;
  id: string;
  type: string;
  reference: string;
  agreementId: string | null;
}

const seriesUpdate = (db: Kysely<Database>, p: Params<SeriesUpdate>) =>
  db
    .updateTable('paymentMethods')
    .set({ seriesType: p.type, seriesReference: p.reference, seriesAgreementId: p.agreementId, seriesClaimedBy: null, seriesClaimedAt: null })
    .where('id', '=', p.id)
    .where('accountId', '=', p.accountId);

// The series statements run on every payment with a stored card at a real acquirer: templates.
const recordSeriesStatement = queryTemplate((db: Kysely<Database>, p: Params<SeriesUpdate>) => joinable(seriesUpdate(db, p)));
const recordClaimedSeriesStatement = queryTemplate((db: Kysely<Database>, p: Params<SeriesUpdate & { claimedBy: string }>) =>
  joinable(seriesUpdate(db, p).where('seriesClaimedBy', '=', p.claimedBy)),
);
const releaseSeriesStatement = queryTemplate((db: Kysely<Database>, p: Params<{ accountId: string; id: string; operationId: string }>) =>
  joinable(
    db
      .updateTable('paymentMethods')
      .set({ seriesClaimedBy: null, seriesClaimedAt: null })
      .where('id', '=', p.id)
      .where('accountId', '=', p.accountId)
      .where('seriesClaimedBy', '=', p.operationId),
  ),
);
export const claimSeriesStatement = queryTemplate((db: Kysely<Database>, p: Params<SeriesClaim>) => claimSeriesQuery(db, p));

export interface SeriesClaim {
  accountId: string;
  /** The payment method. */
  id: string;
  operationId: string;
  at: string;
  staleBefore: string;
}

/**
 * The claim of a card's series for an operation whose request names its latest authorization
 * (AcquirerRequestsRepository.recordSendingInSeries): the update, returning the current reference
 * when claimed — none when another operation holds a claim made at or after `staleBefore`, or the
 * card has no series. One request per series is on the wire at a time.
 */
export function claimSeriesQuery(db: QueryCreator<Database>, c: SeriesClaim) {
  return db
    .updateTable('paymentMethods')
    .set({ seriesClaimedBy: c.operationId, seriesClaimedAt: c.at })
    .where('id', '=', c.id)
    .where('accountId', '=', c.accountId)
    .where('seriesReference', 'is not', null)
    .where((eb) => eb.or([eb('seriesClaimedBy', 'is', null), eb('seriesClaimedBy', '=', c.operationId), eb('seriesClaimedAt', '<', c.staleBefore)]))
    .returning('seriesReference');
}
