import { type Kysely, type Selectable } from 'kysely';
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
    orderLines: json(row.orderLines),
    allowedPaymentMethods: json(row.allowedPaymentMethods),
    dynamicAmount: row.dynamicAmount === 1,
    ageVerified: row.ageVerified === 1,
    reportExpired: row.reportExpired === 1,
  };
}

/** Entity changes → row values (booleans as 0/1). */
function changesRow(changes: SessionChanges) {
  const { ageVerified, ...rest } = changes;
  return ageVerified === undefined ? rest : { ...rest, ageVerified: ageVerified ? 1 : 0 };
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
        orderLines: session.orderLines ? JSON.stringify(session.orderLines) : null,
        allowedPaymentMethods: session.allowedPaymentMethods ? JSON.stringify(session.allowedPaymentMethods) : null,
        dynamicAmount: session.dynamicAmount ? 1 : 0,
        minimumAge: session.minimumAge ?? null,
        ageVerificationCountry: session.ageVerificationCountry ?? null,
        ageVerified: session.ageVerified ? 1 : 0,
        preAuthUrl: session.preAuthUrl ?? null,
        retryUrl: session.retryUrl ?? null,
        returnUrl: session.returnUrl ?? null,
        reportExpired: session.reportExpired ? 1 : 0,
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
    const result = await this.db.updateTable('sessions').set(changesRow(changes)).where('id', '=', id).where('state', '=', expectedState).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async replaceSubscriptionPaymentMethod(
    accountId: string,
    subscriptionId: string,
    paymentMethodId: string,
    amount: number | null,
    updatedAt: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('subscriptions')
      .set({ paymentMethodId, updatedAt, ...(amount !== null ? { amount } : {}) })
      .where('id', '=', subscriptionId)
      .where('accountId', '=', accountId)
      .where('state', '=', 'ACTIVE')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
