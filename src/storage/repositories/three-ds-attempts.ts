/** The payment window's 3-D Secure attempts (027_three_ds_attempts). */
import type { Kysely, Selectable } from 'kysely';
import type { ThreeDSAttempt, ThreeDSAttemptState, ThreeDSStep } from '../../modules/three-d-secure/three-ds-attempt.js';
import type { ThreeDSAttemptsRepository } from '../../modules/three-d-secure/three-ds-attempts.repository.js';
import type { Database, ThreeDsAttemptsTable } from '../schema.js';

function toAttempt(row: Selectable<ThreeDsAttemptsTable>): ThreeDSAttempt {
  return {
    id: row.id,
    accountId: row.accountId,
    sessionId: row.sessionId,
    threeDSServerTransID: row.threeDsServerTransId,
    messageVersion: row.messageVersion,
    methodUrl: row.methodUrl,
    state: row.state as ThreeDSAttemptState,
    cardSealed: row.cardSealed,
    amount: Number(row.amount),
    acsUrl: row.acsUrl,
    acsTransId: row.acsTransId,
    methodCompletedAt: row.methodCompletedAt,
    transactionId: row.transactionId,
    steps: JSON.parse(row.steps) as ThreeDSStep[],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export class KyselyThreeDSAttemptsRepository implements ThreeDSAttemptsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(a: ThreeDSAttempt): Promise<void> {
    await this.db
      .insertInto('threeDsAttempts')
      .values({
        id: a.id,
        accountId: a.accountId,
        sessionId: a.sessionId,
        threeDsServerTransId: a.threeDSServerTransID,
        messageVersion: a.messageVersion,
        methodUrl: a.methodUrl,
        state: a.state,
        cardSealed: a.cardSealed,
        amount: a.amount,
        acsUrl: a.acsUrl,
        acsTransId: a.acsTransId,
        methodCompletedAt: a.methodCompletedAt,
        transactionId: a.transactionId,
        steps: JSON.stringify(a.steps),
        createdAt: a.createdAt,
        updatedAt: a.updatedAt,
      })
      .execute();
  }

  async find(id: string): Promise<ThreeDSAttempt | null> {
    const row = await this.db.selectFrom('threeDsAttempts').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toAttempt(row) : null;
  }

  async findByServerTransId(threeDSServerTransID: string): Promise<ThreeDSAttempt | null> {
    const row = await this.db.selectFrom('threeDsAttempts').selectAll().where('threeDsServerTransId', '=', threeDSServerTransID).executeTakeFirst();
    return row ? toAttempt(row) : null;
  }

  async markMethodCompleted(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('threeDsAttempts')
      .set({ methodCompletedAt: at, updatedAt: at })
      .where('id', '=', id)
      .where('state', '=', 'METHOD')
      .where('methodCompletedAt', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async toChallenge(id: string, acs: { acsUrl: string; acsTransId: string | null }, steps: ThreeDSStep[], at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('threeDsAttempts')
      .set({ state: 'CHALLENGE', acsUrl: acs.acsUrl, acsTransId: acs.acsTransId, steps: JSON.stringify(steps), updatedAt: at })
      .where('id', '=', id)
      .where('state', '=', 'METHOD')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async finish(id: string, from: 'METHOD' | 'CHALLENGE', steps: ThreeDSStep[], at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('threeDsAttempts')
      .set({ state: 'DONE', cardSealed: null, steps: JSON.stringify(steps), updatedAt: at })
      .where('id', '=', id)
      .where('state', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async linkTransaction(id: string, transactionId: string): Promise<void> {
    await this.db.updateTable('threeDsAttempts').set({ transactionId }).where('id', '=', id).execute();
  }
}
