import type { BillingCharge, ChargeState } from './charge.js';

export interface ChargeExpectation {
  state: ChargeState;
  /** The number of attempts made so far: two workers cannot both record attempt n. */
  attempts: number;
}

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
  /** Compare-and-set on (state, attempts); the updated row, or null when it moved on. */
  updateIf(accountId: string, id: string, expected: ChargeExpectation, changes: ChargeChanges): Promise<BillingCharge | null>;
  /** Ids of the transactions of each charge (its attempts), oldest first. */
  transactionIdsOf(accountId: string, chargeIds: string[]): Promise<Map<string, string[]>>;
}
