import type { Kysely } from 'kysely';
import type { DashboardSessionRecord, DashboardSessionsRepository } from '../../dashboard/sessions.repository.js';
import type { DashboardTier } from '../../dashboard/session.js';
import type { Database, DashboardSessionsTable } from '../schema.js';

const iso = (ms: number) => new Date(ms).toISOString();

function record(row: DashboardSessionsTable): DashboardSessionRecord {
  return {
    idHash: row.idHash,
    keyHash: row.keyHash,
    keySealed: row.keySealed,
    csrfTokenSealed: row.csrfTokenSealed,
    tier: row.tier as DashboardTier,
    accountId: row.accountId,
    createdAt: Date.parse(row.createdAt),
    lastSeenAt: Date.parse(row.lastSeenAt),
    expiresAt: Date.parse(row.expiresAt),
  };
}

export class KyselyDashboardSessionsRepository implements DashboardSessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(session: DashboardSessionRecord): Promise<void> {
    await this.db
      .insertInto('dashboardSessions')
      .values({ ...session, createdAt: iso(session.createdAt), lastSeenAt: iso(session.lastSeenAt), expiresAt: iso(session.expiresAt) })
      .execute();
  }

  async find(idHash: string): Promise<DashboardSessionRecord | null> {
    const row = await this.db.selectFrom('dashboardSessions').selectAll().where('idHash', '=', idHash).executeTakeFirst();
    return row ? record(row) : null;
  }

  async touch(idHash: string, lastSeenAt: number): Promise<void> {
    await this.db
      .updateTable('dashboardSessions')
      .set({ lastSeenAt: iso(lastSeenAt) })
      .where('idHash', '=', idHash)
      .execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('dashboardSessions').where('idHash', '=', idHash).execute();
  }

  async deleteExpired(now: number, idleBefore: number): Promise<number> {
    const result = await this.db
      .deleteFrom('dashboardSessions')
      .where((eb) => eb.or([eb('expiresAt', '<=', iso(now)), eb('lastSeenAt', '<=', iso(idleBefore))]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async trimKey(keyHash: string, keep: number): Promise<void> {
    await this.db
      .deleteFrom('dashboardSessions')
      .where('keyHash', '=', keyHash)
      .where('idHash', 'not in', (eb) =>
        eb.selectFrom('dashboardSessions').select('idHash').where('keyHash', '=', keyHash).orderBy('createdAt', 'desc').orderBy('idHash').limit(keep),
      )
      .execute();
  }
}
