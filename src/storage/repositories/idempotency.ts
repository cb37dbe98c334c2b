import { type Kysely, sql } from 'kysely';
import type { IdempotencyRef, IdempotencyStore, StoredResponse } from '../../http/idempotency.js';
import { newId } from '../../shared/ids.js';
import type { Database } from '../schema.js';

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
    const inserted = await this.db
      .insertInto('idempotencyKeys')
      .values({
        ...ref,
        requestHash,
        state: 'in_flight',
        lockedUntil: times.lockedUntil,
        createdAt: times.now,
        expiresAt: times.expiresAt,
        effectKey,
      })
      .onConflict((oc) => oc.columns(['accountId', 'method', 'path', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { claimed: true, effectKey, resumed: false };

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
    await this.keyed(this.db.updateTable('idempotencyKeys'), ref)
      .set({ state: 'completed', responseStatus: status, responseBody: body, responseContentType: contentType })
      .execute();
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
