import type { AgreementState, BillingAgreement } from './agreement.js';
import type { BillingPlan } from './plan.js';

/** What a conditional update expects to find; it changes nothing when the row moved on. */
export interface AgreementExpectation {
  state: AgreementState;
  /** When given, the agreement must still be scheduled for exactly this instant. */
  nextChargeAt?: string | null;
}

export type AgreementChanges = Partial<
  Pick<BillingAgreement, 'state' | 'subscriptionId' | 'customerId' | 'nextChargeAt' | 'lastChargeAt' | 'desiredDate' | 'stateChangedAt' | 'updatedAt'>
>;

export interface BillingAgreementsRepository {
  insert(agreement: BillingAgreement): Promise<void>;
  findById(accountId: string, id: string): Promise<BillingAgreement | null>;
  /** The agreement with its plan, in one read; plan null when it is missing. */
  findWithPlan(accountId: string, id: string): Promise<{ agreement: BillingAgreement; plan: BillingPlan | null } | null>;
  /** The agreement a CIT session asked for, if any. */
  findBySession(accountId: string, sessionId: string): Promise<BillingAgreement | null>;
  /** Newest first. */
  list(accountId: string, offset: number, limit: number): Promise<{ items: BillingAgreement[]; total: number }>;
  /** Compare-and-set: applies `changes` only if the row still matches `expected`; the updated row, or null. */
  updateIf(accountId: string, id: string, expected: AgreementExpectation, changes: AgreementChanges): Promise<BillingAgreement | null>;
  /** A charge of the agreement succeeded at `at`: its lastChargeAt, whatever its state now (no read: one statement in the charge's commit). */
  recordCharge(accountId: string, id: string, at: string): Promise<void>;
}
