import type { Session, SessionState } from './session.js';

export type SessionChanges = Partial<
  Pick<Session, 'state' | 'attempts' | 'transactionId' | 'subscriptionId' | 'paymentMethodId' | 'errorCode' | 'finalizedAt' | 'amount' | 'ageVerified'>
> & { updatedAt: string };

export interface SessionsRepository {
  insert(session: Session): Promise<void>;
  findById(accountId: string, id: string): Promise<Session | null>;
  /** Any account: for the sandbox controls (operator) and the payment window (by client key). */
  findByIdAnyAccount(id: string): Promise<Session | null>;
  findByClientKey(clientKey: string): Promise<Session | null>;
  /** Applies `changes` only while the session is in `expectedState`; false when it was not (lost a race). */
  updateIfState(id: string, expectedState: SessionState, changes: SessionChanges): Promise<boolean>;
  /**
   * A completing session's `subscription.id` (INTERFACE §11.2): the ACTIVE subscription takes the
   * new payment method (and the expected recurring `amount` when given), in the session's commit.
   * False when the subscription is not (or no longer) ACTIVE.
   */
  replaceSubscriptionPaymentMethod(
    accountId: string,
    subscriptionId: string,
    paymentMethodId: string,
    amount: number | null,
    updatedAt: string,
  ): Promise<boolean>;
}
