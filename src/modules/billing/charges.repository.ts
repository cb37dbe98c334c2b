import type { BillingCharge, ChargeState } from './charge.js';

/** What a compare-and-set expects of the charge: its state, and which attempt it is at. */
export type ChargeExpectation =
  | {
      state: ChargeState;
      /** The number of attempts made so far: two workers cannot both record attempt n. */
      attempts: number;
    }
  | {
      state: ChargeState;
      /** The charge waits for this transaction's answer: its current attempt's, with no retry scheduled. */
      answerOf: string;
    };

export type ChargeChanges = Partial<Pick<BillingCharge, 'state' | 'attempts' | 'transactionId' | 'nextAttemptAt' | 'updatedAt' | 'finalizedAt'>>;

export interface BillingChargesRepository {
  /** Inserts unless the agreement already has a charge for this period (unique key); true when inserted. */
  insertIfAbsent(charge: BillingCharge): Promise<boolean>;
  findById(accountId: string, id: string): Promise<BillingCharge | null>;
  /** Newest first, optionally of one agreement. */
  list(
    accountId: string,
    filter: { billingAgreementId?: string | undefined },
    offset: number,
    limit: number,
  ): Promise<{ items: BillingCharge[]; total: number }>;
  /** Compare-and-set on (state, attempts) or (state, the attempt's transaction); the updated row, or null when it moved on. */
  updateIf(accountId: string, id: string, expected: ChargeExpectation, changes: ChargeChanges): Promise<BillingCharge | null>;
  /** Ids of the transactions of each charge (its attempts), oldest first. */
  transactionIdsOf(accountId: string, chargeIds: string[]): Promise<Map<string, string[]>>;
}
