import type { Kysely, Selectable } from 'kysely';
import type { Session, SessionState } from '../../modules/sessions/session.js';
import type { SessionChanges, SessionsRepository } from '../../modules/sessions/sessions.repository.js';
import type { Database, SessionsTable } from '../schema.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

function toSession(row: Selectable<SessionsTable>): Session {
  return {
    ...row,
    state: row.state as SessionState,
    exemptions: JSON.parse(row.exemptions) as string[],
    attributes: json(row.attributes),
    reportFailure: row.reportFailure === 1,
    subscriptionRequest: json(row.subscriptionRequest),
  };
}

export class KyselySessionsRepository implements SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(session: Session): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        ...session,
        exemptions: JSON.stringify(session.exemptions),
        attributes: session.attributes === null ? null : JSON.stringify(session.attributes),
        reportFailure: session.reportFailure ? 1 : 0,
        subscriptionRequest: session.subscriptionRequest === null ? null : JSON.stringify(session.subscriptionRequest),
      })
      .execute();
  }

  async findById(accountId: string, id: string): Promise<Session | null> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).where('accountId', '=', accountId).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async findByIdAnyAccount(id: string): Promise<Session | null> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async findByClientKey(clientKey: string): Promise<Session | null> {
    const row = await this.db.selectFrom('sessions').selectAll().where('clientKey', '=', clientKey).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async updateIfState(id: string, expectedState: SessionState, changes: SessionChanges): Promise<boolean> {
    const result = await this.db.updateTable('sessions').set(changes).where('id', '=', id).where('state', '=', expectedState).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listExpirable(nowIso: string, limit: number): Promise<Session[]> {
    const rows = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('state', '=', 'PENDING')
      .where('expiresAt', '<=', nowIso)
      .orderBy('expiresAt')
      .limit(limit)
      .execute();
    return rows.map(toSession);
  }
}
