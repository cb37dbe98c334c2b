/**
 * The business-event log port: one info line per thing that happened to money or to a delivery,
 * written once it is committed. Modules log through this port (never pino); the pino adapter is
 * in src/logger.ts. Every line carries `event` (the name below) and ids and codes only: never a
 * card number, a CVC, a credential or a body. docs/runbook.md ("Logs") lists the events.
 */

/** Event name → its fields. The same field names everywhere: transactionId, accountId, ... */
export interface BusinessEvents {
  /** The acquirer's answer to an operation, applied and committed (authorization, capture, refund, void, renew, payout). */
  'payment.answered': {
    transactionId: string;
    accountId: string;
    operationId: string;
    /** The operation: AUTHORIZATION, CAPTURE, REFUND, VOID, RENEW, PAYOUT, ... */
    type: string;
    /** SUCCESS or FAILED: the operation's answer. */
    operationState: string;
    /** The transaction's state after the answer. */
    state: string;
    errorCode: string | null;
    flow: string;
    amount: number;
    currency: string;
    /** The instant capture or void the answer started, if any. */
    followUpOperationId?: string;
  };
  /** An operation's outcome is in doubt (INTERFACE §12.4): it may have reached the acquirer, no answer came, it is never sent again. */
  'payment.in_doubt': {
    transactionId: string;
    operationId: string;
    /** CAPTURE, REFUND, PAYOUT, ... (an authorization in doubt fails: see payment.answered). */
    type: string;
    reason: string;
  };
  /** The void of an authorization in doubt that the acquirer named was answered. */
  'payment.in_doubt_released': {
    transactionId: string;
    operationId: string;
    /** approved or declined. */
    outcome: string;
    acquirerCode: string | null;
  };
  /** One POST of a transaction callback, recorded. */
  'callback.attempt': {
    transactionId: string;
    accountId: string;
    notificationId: string;
    /** The final state the callback reports (SUCCESS, FAILED, ...). */
    callbackEvent: string;
    /** The receiver's host only: a URL's path or query may carry the merchant's tokens. */
    host: string;
    status: number | null;
    durationMs: number;
    attempt: number;
    delivered: boolean;
    /** FAILED: no attempt left. */
    exhausted: boolean;
  };
  /** A webhook stopped receiving deliveries: its error rate was too high, or the merchant paused it. */
  'webhook.paused': {
    webhookId: string;
    accountId: string;
    reason: string;
    /** ERROR_RATE_TOO_HIGH: the attempts of the window that decided it. */
    failedAttempts?: number;
    totalAttempts?: number;
  };
  /** A billing period's charge and its first attempt (an MIT transaction) were created. */
  'billing.charge.created': {
    chargeId: string;
    accountId: string;
    billingAgreementId: string;
    transactionId: string;
    amount: number;
    currency: string;
    attempt: number;
  };
  /** A retry of a charge: attempt `attempt`, a new MIT transaction. */
  'billing.charge.attempt': { chargeId: string; accountId: string; transactionId: string; attempt: number };
  /** An attempt failed and another is scheduled. */
  'billing.charge.retrying': { chargeId: string; accountId: string; transactionId: string; attempts: number; nextAttemptAt: string };
  /** The charge is final: SUCCESS (settled by its attempt) or FAILED (attempts or deadline exhausted, or no longer chargeable). */
  'billing.charge.final': { chargeId: string; accountId: string; transactionId: string | null; state: string; attempts: number };
  /** A settlement run went through every merchant: the transfers it completed and the settlement rows it inserted. */
  'settlement.run': { postingDate: string; transfers: number; rows: number };
  /** A job failed for the last time (or could never run): it waits for the operator. */
  'job.dead': { kind: string; jobId: string; attempts: number; error: string };
  /** An account's acquirer agreement was replaced (PUT) or removed (DELETE): the row written or removed, never its API key. */
  'acquirer.changed': { accountId: string; agreementId: string; acquirer: string; mcc: string; change: 'REPLACED' | 'REMOVED' };
}

export type BusinessEventName = keyof BusinessEvents;

export interface EventsLog {
  logEvent<N extends BusinessEventName>(event: N, fields: BusinessEvents[N]): void;
}

/** The host (and port) of a URL, for logs: never its path, query or user info. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}
