/**
 * A customer's 3-D Secure authentication in the payment window (INTERFACE §13), from the Pay button
 * to the authorization. METHOD: the 3DS Method may run (its notification is recorded), the AReq
 * comes next. CHALLENGE: the ACS has the customer; its CRes names the attempt by
 * `threeDSServerTransID`. DONE: the decision was taken and the card erased.
 *
 *   METHOD ──auth: frictionless or no result──▶ DONE
 *   METHOD ──auth: challenge──▶ CHALLENGE ──CRes, RReq──▶ DONE
 */
export type ThreeDSAttemptState = 'METHOD' | 'CHALLENGE' | 'DONE';

/** What one step answered, for the payment's timeline: statuses, reasons and versions, never an authentication value. */
export interface ThreeDSStep {
  step: 'PREAUTH' | 'METHOD' | 'ARES' | 'CHALLENGE' | 'RREQ' | 'DECISION';
  at: string;
  /** transStatus (ARES, RREQ), or the decision (AUTHORIZE, REFUSE). */
  status: string | null;
  /** transStatusReason, challengeCancel, an Erro code or a failure, in words. */
  detail: string | null;
}

export interface ThreeDSAttempt {
  /** Ours: names the attempt in the 3DS Method notification URL. */
  id: string;
  accountId: string;
  sessionId: string;
  threeDSServerTransID: string;
  messageVersion: string;
  methodUrl: string | null;
  state: ThreeDSAttemptState;
  /** The card as typed (with its CVC), sealed; null once DONE. */
  cardSealed: string | null;
  /** The attempt's amount (a dynamic amount as typed), minor units. */
  amount: number;
  acsUrl: string | null;
  acsTransId: string | null;
  methodCompletedAt: string | null;
  /** The payment the attempt led to (set once it exists). */
  transactionId: string | null;
  steps: ThreeDSStep[];
  createdAt: string;
  updatedAt: string;
}

/** How long the 3DS Method may take before the AReq says it did not complete (3dsecure-io.md §1.9). */
export const METHOD_WAIT_MS = 10_000;
