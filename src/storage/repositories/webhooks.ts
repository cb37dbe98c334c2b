import { sql, type Kysely, type QueryCreator, type Selectable } from 'kysely';
import type { DeliveryAttempt, DeliveryState, PauseReason, Webhook, WebhookDelivery, WebhookEvent } from '../../modules/webhooks/webhook.js';
import type {
  AttemptOutcome,
  DeliveryWithAttempts,
  OutboxEventRow,
  StoredWebhook,
  UnfannedFrom,
  WebhooksRepository,
} from '../../modules/webhooks/webhooks.repository.js';
import type { SealedSigningSecrets } from '../../shared/signing.js';
import type { Dialect } from '../connect.js';
import { deferrable } from '../postgres/write-combining.js';
import { queryTemplate, type Params } from '../query-template.js';
import { joinedColumns, pickJoined } from './joined-columns.js';
import type { Database, WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhooksTable } from '../schema.js';

function toWebhook(row: Selectable<WebhooksTable>): StoredWebhook {
  return {
    id: row.id,
    accountId: row.accountId,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEvent[],
    pausedAt: row.pausedAt,
    pauseReason: row.pauseReason as PauseReason | null,
    resumedAt: row.resumedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    secretSealed: row.secretSealed,
    deletedAt: row.deletedAt,
    signingSecretSealed: row.signingSecretSealed,
    previousSigningSecretSealed: row.previousSigningSecretSealed,
    previousSigningSecretExpiresAt: row.previousSigningSecretExpiresAt,
  };
}

/** Every column of a webhook row (findDeliveryWithWebhook reads one beside its delivery). */
const WEBHOOK_COLUMNS = [
  'id',
  'accountId',
  'url',
  'events',
  'secretSealed',
  'pausedAt',
  'pauseReason',
  'resumedAt',
  'createdAt',
  'updatedAt',
  'deletedAt',
  'signingSecretSealed',
  'previousSigningSecretSealed',
  'previousSigningSecretExpiresAt',
] as const satisfies ReadonlyArray<keyof WebhooksTable>;

/** A delivery with its webhook (deleted ones too), in one read: the delivery job's. Compiled once (query-template.ts). */
const selectDeliveryWithWebhook = queryTemplate((db: Kysely<Database>, p: Params<{ id: string }>) =>
  db
    .selectFrom('webhookDeliveries as d')
    .leftJoin('webhooks as w', 'w.id', 'd.webhookId')
    .selectAll('d')
    .select(joinedColumns('w', 'webhook', WEBHOOK_COLUMNS))
    .where('d.id', '=', p.id),
);

/**
 * An attempt's guarded update of its delivery: the attempt count is the guard (only one worker
 * records attempt n), and the outcome applies only while PENDING — a delete or pause during the
 * send has already cancelled it. SET reads the row as it was, RETURNING as it is left: the state
 * after this attempt.
 */
function recordedUpdate(db: QueryCreator<Database>, attempt: DeliveryAttempt, update: AttemptOutcome) {
  return db
    .updateTable('webhookDeliveries')
    .set({
      attempts: attempt.attempt,
      lastAttemptAt: attempt.attemptedAt,
      state: sql<string>`case when "state" = 'PENDING' then ${update.state} else "state" end`,
      nextAttemptAt: sql<string | null>`case when "state" = 'PENDING' then ${update.nextAttemptAt} else "next_attempt_at" end`,
      finishedAt: sql<string | null>`case when "state" = 'PENDING' then ${update.finishedAt} else "finished_at" end`,
    })
    .where('id', '=', attempt.deliveryId)
    .where('attempts', '=', attempt.attempt - 1)
    .returning('state');
}

const attemptRow = (attempt: DeliveryAttempt) => ({ ...attempt, success: attempt.success ? 1 : 0 });

const publicWebhook = ({
  secretSealed: _s,
  deletedAt: _d,
  signingSecretSealed: _c,
  previousSigningSecretSealed: _p,
  previousSigningSecretExpiresAt: _e,
  ...webhook
}: StoredWebhook): Webhook => webhook;

function toDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhookId,
    accountId: row.accountId,
    eventId: row.eventId,
    event: row.event,
    body: row.body,
    state: row.state as DeliveryState,
    attempts: row.attempts,
    nextAttemptAt: row.nextAttemptAt,
    lastAttemptAt: row.lastAttemptAt,
    createdAt: row.createdAt,
    finishedAt: row.finishedAt,
  };
}

function toAttempt(row: Selectable<WebhookDeliveryAttemptsTable>): DeliveryAttempt {
  return {
    id: row.id,
    deliveryId: row.deliveryId,
    webhookId: row.webhookId,
    attempt: row.attempt,
    success: row.success === 1,
    httpStatus: row.httpStatus,
    error: row.error,
    durationMs: row.durationMs,
    attemptedAt: row.attemptedAt,
  };
}

/** A delivery attempt's columns with their PostgreSQL types: its row inserted from a SELECT of parameters (recordAttempt). */
const ATTEMPT_COLUMNS = [
  ['id', 'text'],
  ['deliveryId', 'text'],
  ['webhookId', 'text'],
  ['attempt', 'integer'],
  ['success', 'integer'],
  ['httpStatus', 'integer'],
  ['error', 'text'],
  ['durationMs', 'integer'],
  ['attemptedAt', 'timestamptz'],
] as const satisfies ReadonlyArray<readonly [keyof WebhookDeliveryAttemptsTable, string]>;

export class KyselyWebhooksRepository implements WebhooksRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async lockAccount(accountId: string): Promise<void> {
    // SQLite runs one write transaction at a time; PostgreSQL takes a per-merchant lock held to commit
    // (an advisory lock, so that nothing else touching the account row waits on it).
    if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${accountId}`}, 0))`.execute(this.db);
  }

  async lockWebhook(id: string): Promise<void> {
    // NO KEY UPDATE: does not block deliveries being inserted for the webhook (they take KEY SHARE).
    if (this.dialect === 'postgres') await this.db.selectFrom('webhooks').select('id').where('id', '=', id).forNoKeyUpdate().execute();
  }

  async countActive(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhooks')
      .select(sql<number>`count(*)`.as('n'))
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .where('pausedAt', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(webhook: Webhook, secretSealed: string, signingSecretSealed?: string): Promise<void> {
    await this.db
      .insertInto('webhooks')
      .values({
        ...webhook,
        events: JSON.stringify(webhook.events),
        secretSealed,
        deletedAt: null,
        signingSecretSealed: signingSecretSealed ?? null,
        previousSigningSecretSealed: null,
        previousSigningSecretExpiresAt: null,
      })
      .execute();
  }

  async fillSigningSecret(accountId: string, id: string, signingSecretSealed: string): Promise<void> {
    await this.db
      .updateTable('webhooks')
      .set({ signingSecretSealed })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('signingSecretSealed', 'is', null)
      .execute();
  }

  async replaceSigningSecrets(accountId: string, id: string, expected: string, next: SealedSigningSecrets, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({ ...next, updatedAt: now })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .where('signingSecretSealed', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async findById(accountId: string, id: string): Promise<StoredWebhook | null> {
    const row = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return row ? toWebhook(row) : null;
  }

  async list(accountId: string, offset: number, limit: number) {
    const live = this.db.selectFrom('webhooks').where('accountId', '=', accountId).where('deletedAt', 'is', null);
    const [rows, count] = await Promise.all([
      live.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      live.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map((r) => publicWebhook(toWebhook(r))), total: Number(count.n) };
  }

  async markDeleted(accountId: string, id: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({ deletedAt: now, updatedAt: now })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async pause(id: string, reason: PauseReason, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({ pausedAt: now, pauseReason: reason, updatedAt: now })
      .where('id', '=', id)
      .where('pausedAt', 'is', null)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async resume(accountId: string, id: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({ pausedAt: null, pauseReason: null, resumedAt: now, updatedAt: now })
      .where('id', '=', id)
      .where('accountId', '=', accountId)
      .where('pausedAt', 'is not', null)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async activeWebhooks(accountId: string): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('accountId', '=', accountId)
      .where('deletedAt', 'is', null)
      .where('pausedAt', 'is', null)
      .orderBy('createdAt')
      .execute();
    return rows.map((r) => publicWebhook(toWebhook(r)));
  }

  async unfannedEvents(limit: number, from: UnfannedFrom): Promise<OutboxEventRow[]> {
    let query = this.db
      .selectFrom('events as e')
      .select(['e.id', 'e.accountId', 'e.event', 'e.data', 'e.createdAt'])
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('webhookEventFanouts as f').select('f.eventId').whereRef('f.eventId', '=', 'e.id'))))
      .orderBy('e.createdAt')
      .orderBy('e.id')
      .limit(limit);
    if ('after' in from) {
      const { after } = from;
      query = query.where((eb) => eb(eb.refTuple('e.createdAt', 'e.id'), '>', eb.tuple(after.createdAt, after.id)));
    } else {
      const newest = await this.db
        .selectFrom('webhookEventFanouts')
        .select((eb) => eb.fn.max('eventCreatedAt').as('at'))
        .executeTakeFirst();
      if (newest?.at) query = query.where('e.createdAt', '>=', new Date(Date.parse(newest.at) - from.lookbackMs).toISOString());
    }
    const rows = await query.execute();
    return rows.map((r) => ({ id: r.id, accountId: r.accountId, event: r.event, data: JSON.parse(r.data) as unknown, createdAt: r.createdAt }));
  }

  async claimFanouts(claims: Array<{ event: Pick<OutboxEventRow, 'id' | 'createdAt'>; deliveries: number }>, now: string): Promise<Set<string>> {
    const claimed = new Set<string>();
    // Chunks keep each statement under the SQLite parameter limit (4 per row).
    for (let i = 0; i < claims.length; i += 200) {
      const rows = await this.db
        .insertInto('webhookEventFanouts')
        .values(claims.slice(i, i + 200).map(({ event, deliveries }) => ({ eventId: event.id, eventCreatedAt: event.createdAt, deliveries, createdAt: now })))
        .onConflict((oc) => oc.column('eventId').doNothing())
        .returning('eventId')
        .execute();
      for (const row of rows) claimed.add(row.eventId);
    }
    return claimed;
  }

  async insertDeliveries(deliveries: WebhookDelivery[]): Promise<void> {
    // Chunks keep each statement under the SQLite parameter limit.
    for (let i = 0; i < deliveries.length; i += 500)
      await this.db
        .insertInto('webhookDeliveries')
        .values(deliveries.slice(i, i + 500))
        .execute();
  }

  async findDeliveryWithWebhook(id: string): Promise<{ delivery: WebhookDelivery; webhook: StoredWebhook | null } | null> {
    const row = await selectDeliveryWithWebhook.executeTakeFirst(this.db, { id });
    if (!row) return null;
    const webhook = pickJoined(row, 'webhook', WEBHOOK_COLUMNS);
    return { delivery: toDelivery(row), webhook: webhook ? toWebhook(webhook as Selectable<WebhooksTable>) : null };
  }

  async recordAttempt(attempt: DeliveryAttempt, update: AttemptOutcome): Promise<DeliveryState | null> {
    if (this.dialect === 'postgres') {
      // With the attempt's row, one statement: one round trip instead of three (issue 10).
      const done = await this.recordedWithAttempt(attempt, update).executeTakeFirst();
      return done ? (done.state as DeliveryState) : null;
    }
    const state = await recordedUpdate(this.db, attempt, update).executeTakeFirst();
    if (!state) return null;
    await this.db.insertInto('webhookDeliveryAttempts').values(attemptRow(attempt)).execute();
    return state.state as DeliveryState;
  }

  async recordAttemptUnanswered(attempt: DeliveryAttempt, update: AttemptOutcome): Promise<void> {
    // Deferrable (postgres/write-combining.ts): a commit of this statement alone goes as that one
    // statement, on a shared connection, without BEGIN and COMMIT.
    if (this.dialect === 'postgres') await deferrable(this.recordedWithAttempt(attempt, update)).execute();
    else await this.recordAttempt(attempt, update);
  }

  /** PostgreSQL: the delivery's guarded update and, when it applied, the attempt's row, as one statement answering the state left. */
  private recordedWithAttempt(attempt: DeliveryAttempt, update: AttemptOutcome) {
    const row = attemptRow(attempt);
    return this.db
      .with('recorded', (db) => recordedUpdate(db, attempt, update))
      .with('attempt', (db) =>
        db
          .insertInto('webhookDeliveryAttempts')
          .columns(ATTEMPT_COLUMNS.map(([column]) => column))
          .expression(db.selectFrom('recorded').select(ATTEMPT_COLUMNS.map(([column, type]) => sql`cast(${row[column]} as ${sql.raw(type)})`.as(column)))),
      )
      .selectFrom('recorded')
      .select('state');
  }

  async cancelPending(webhookId: string, now: string): Promise<number> {
    const result = await this.db
      .updateTable('webhookDeliveries')
      .set({ state: 'CANCELLED', nextAttemptAt: null, finishedAt: now })
      .where('webhookId', '=', webhookId)
      .where('state', '=', sql.lit('PENDING'))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async deliveryStats(webhookId: string, since: string): Promise<{ total: number; failed: number }> {
    // One row per delivery attempted in the window; it failed when none of its attempts there succeeded.
    const perDelivery = this.db
      .selectFrom('webhookDeliveryAttempts')
      .select(['deliveryId', sql<number>`max(success)`.as('ok')])
      .where('webhookId', '=', webhookId)
      .where('attemptedAt', '>=', since)
      .groupBy('deliveryId')
      .as('d');
    const row = await this.db
      .selectFrom(perDelivery)
      .select([sql<number>`count(*)`.as('total'), sql<number>`coalesce(sum(case when ok = 0 then 1 else 0 end), 0)`.as('failed')])
      .executeTakeFirstOrThrow();
    return { total: Number(row.total), failed: Number(row.failed) };
  }

  async listDeliveries(webhookId: string, offset: number, limit: number): Promise<{ items: DeliveryWithAttempts[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('webhookDeliveries')
        .selectAll()
        .where('webhookId', '=', webhookId)
        .orderBy('createdAt', 'desc')
        .orderBy('id', 'desc')
        .offset(offset)
        .limit(limit)
        .execute(),
      this.db
        .selectFrom('webhookDeliveries')
        .select(sql<number>`count(*)`.as('n'))
        .where('webhookId', '=', webhookId)
        .executeTakeFirstOrThrow(),
    ]);
    const ids = rows.map((r) => r.id);
    const attempts = ids.length
      ? await this.db.selectFrom('webhookDeliveryAttempts').selectAll().where('deliveryId', 'in', ids).orderBy('attempt').execute()
      : [];
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.deliveryId) ?? [];
      list.push(toAttempt(a));
      byDelivery.set(a.deliveryId, list);
    }
    return { items: rows.map((r) => ({ ...toDelivery(r), attemptLog: byDelivery.get(r.id) ?? [] })), total: Number(count.n) };
  }
}
