import { type Kysely, sql } from 'kysely';
import type { IdempotencyRef, IdempotencyStore, StoredResponse } from '../../http/idempotency.js';
import { newId } from '../../shared/ids.js';
import { queryTemplate, type Params } from '../query-template.js';
import type { Database } from '../schema.js';

type Claim = IdempotencyRef & { requestHash: string; lockedUntil: string; createdAt: string; expiresAt: string; effectKey: string };

/** A new in-flight claim (every request with an Idempotency-Key): compiled once. */
const insertClaim = queryTemplate((db: Kysely<Database>, p: Params<Claim>) =>
  db
    .insertInto('idempotencyKeys')
    .values({
      accountId: p.accountId,
      method: p.method,
      path: p.path,
      key: p.key,
      requestHash: p.requestHash,
      state: 'in_flight',
      lockedUntil: p.lockedUntil,
      createdAt: p.createdAt,
      expiresAt: p.expiresAt,
      effectKey: p.effectKey,
    })
    .onConflict((oc) => oc.columns(['accountId', 'method', 'path', 'key']).doNothing()),
);

/** The stored response of a finished request: compiled once. */
const completeClaim = queryTemplate(
  (db: Kysely<Database>, p: Params<IdempotencyRef & { responseStatus: number; responseBody: string; responseContentType: string }>) =>
    db
      .updateTable('idempotencyKeys')
      .set({ state: 'completed', responseStatus: p.responseStatus, responseBody: p.responseBody, responseContentType: p.responseContentType })
      .where('accountId', '=', p.accountId)
      .where('method', '=', p.method)
      .where('path', '=', p.path)
      .where('key', '=', p.key),
);

export class KyselyIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The one record of `ref`, in any query over the table (select, update, delete). */
  private keyed<Q extends { where: (...args: any[]) => any }>(query: Q, ref: IdempotencyRef): Q {
    return query.where('accountId', '=', ref.accountId).where('method', '=', ref.method).where('path', '=', ref.path).where('key', '=', ref.key) as Q;
  }

  async claim(
    ref: IdempotencyRef,
    requestHash: string,
    times: { now: string; lockedUntil: string; expiresAt: string },
  ): Promise<{ claimed: true; effectKey: string; resumed: boolean } | { claimed: false; existing: StoredResponse }> {
    const effectKey = newId();
    const inserted = await insertClaim.executeTakeFirst(this.db, {
      accountId: ref.accountId,
      method: ref.method,
      path: ref.path,
      key: ref.key,
      requestHash,
      lockedUntil: times.lockedUntil,
      createdAt: times.now,
      expiresAt: times.expiresAt,
      effectKey,
    });
    if (Number(inserted?.numInsertedOrUpdatedRows ?? 0n) === 1) return { claimed: true, effectKey, resumed: false };

    // An expired record starts afresh: a new request with a new effect.
    const fresh = {
      requestHash,
      state: 'in_flight',
      responseStatus: null,
      responseBody: null,
      responseContentType: null,
      lockedUntil: times.lockedUntil,
      createdAt: times.now,
      expiresAt: times.expiresAt,
      effectKey,
    };
    const expired = await this.keyed(this.db.updateTable('idempotencyKeys').set(fresh), ref).where('expiresAt', '<=', times.now).executeTakeFirst();
    if (Number(expired.numUpdatedRows) === 1) return { claimed: true, effectKey, resumed: false };

    // An in-flight claim abandoned by a crashed process, retried with the same request: the retry
    // continues the same execution, so it keeps the effect key and finds what was committed.
    const resumed = await this.keyed(
      this.db.updateTable('idempotencyKeys').set({ lockedUntil: times.lockedUntil, effectKey: sql<string>`coalesce(${sql.ref('effect_key')}, ${effectKey})` }),
      ref,
    )
      .where('state', '=', 'in_flight')
      .where('lockedUntil', '<=', times.now)
      .where('requestHash', '=', requestHash)
      .executeTakeFirst();

    const row = await this.keyed(this.db.selectFrom('idempotencyKeys'), ref)
      .select(['requestHash', 'state', 'responseStatus', 'responseBody', 'responseContentType', 'effectKey'])
      .executeTakeFirst();
    if (!row) return this.claim(ref, requestHash, times); // deleted in between (released): try again
    if (Number(resumed.numUpdatedRows) === 1) return { claimed: true, effectKey: row.effectKey ?? effectKey, resumed: true };
    return {
      claimed: false,
      existing: {
        requestHash: row.requestHash,
        state: row.state as StoredResponse['state'],
        status: row.responseStatus,
        body: row.responseBody,
        contentType: row.responseContentType,
      },
    };
  }

  async complete(ref: IdempotencyRef, status: number, body: string, contentType: string): Promise<void> {
    await completeClaim.execute(this.db, {
      accountId: ref.accountId,
      method: ref.method,
      path: ref.path,
      key: ref.key,
      responseStatus: status,
      responseBody: body,
      responseContentType: contentType,
    });
  }

  async release(ref: IdempotencyRef): Promise<void> {
    await this.keyed(this.db.deleteFrom('idempotencyKeys'), ref).where('state', '=', 'in_flight').execute();
  }

  async reopen(ref: IdempotencyRef, now: string): Promise<void> {
    await this.keyed(this.db.updateTable('idempotencyKeys').set({ lockedUntil: now }), ref)
      .where('state', '=', 'in_flight')
      .execute();
  }

  async sweep(now: string, limit: number): Promise<number> {
    const expired = this.db.selectFrom('idempotencyKeys').select('key').where('expiresAt', '<=', now).limit(limit);
    // Composite key: delete by expiry directly, bounded by a subquery on the same condition.
    const result = await this.db.deleteFrom('idempotencyKeys').where('expiresAt', '<=', now).where('key', 'in', expired).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
