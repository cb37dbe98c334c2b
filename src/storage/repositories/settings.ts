import { type Kysely, sql } from 'kysely';
import type { ClockStore } from '../../clock.js';
import type { Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

/** Compiled once (query-template.ts). */
const selectSetting = queryTemplate((db: Kysely<Database>, p: Params<{ key: string }>) => db.selectFrom('settings').select('value').where('key', '=', p.key));

const CLOCK_OFFSET = 'clock.offset_ms';

/** Key/value settings; holds the sandbox clock offset shared by every process. */
export class KyselySettings implements ClockStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<string | null> {
    const row = await selectSetting.executeTakeFirst(this.db, { key });
    return row?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }

  /** Stores `value` unless the key has one already; true when this call stored it (first writer wins). */
  async setIfAbsent(key: string, value: string): Promise<boolean> {
    const result = await this.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  async loadOffsetMs(): Promise<number> {
    return Number((await this.get(CLOCK_OFFSET)) ?? 0);
  }

  /** Never lowers the stored offset: of two processes moving the clock at once, the later time wins. */
  async saveOffsetMs(offsetMs: number): Promise<void> {
    const value = String(Math.round(offsetMs));
    await this.db
      .insertInto('settings')
      .values({ key: CLOCK_OFFSET, value })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          value: sql<string>`case when cast(excluded.value as bigint) > cast(settings.value as bigint) then excluded.value else settings.value end`,
        }),
      )
      .execute();
  }
}
