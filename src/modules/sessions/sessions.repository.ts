import type { Session, SessionState } from './session.js';

export type SessionChanges = Partial<
  Pick<Session, 'state' | 'attempts' | 'transactionId' | 'subscriptionId' | 'paymentMethodId' | 'errorCode' | 'finalizedAt'>
> & { updatedAt: string };

export interface SessionsRepository {
  insert(session: Session): Promise<void>;
  findById(accountId: string, id: string): Promise<Session | null>;
  /** Any account: for the sandbox controls (operator) and the payment window (by client key). */
  findByIdAnyAccount(id: string): Promise<Session | null>;
  findByClientKey(clientKey: string): Promise<Session | null>;
  /** Applies `changes` only while the session is in `expectedState`; false when it was not (lost a race). */
  updateIfState(id: string, expectedState: SessionState, changes: SessionChanges): Promise<boolean>;
  /** PENDING sessions whose expiresAt is at or before `nowIso` (sweep after a clock jump). */
  listExpirable(nowIso: string, limit: number): Promise<Session[]>;
}
