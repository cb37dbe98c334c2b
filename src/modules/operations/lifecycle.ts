/**
 * The lifecycle rules of an existing transaction: which of capture, refund, void and renew may
 * run, as ONE explicit table (lifecycle state × action → allowed | refusal code). The lifecycle
 * state is derived from the transaction record (state, flow, type, settled aggregates); amounts
 * that are merely reserved by operations in flight do not change it — they are checked by the
 * conditional reservation, which answers AMOUNT_EXCEEDS_REMAINING.
 */
import type { OperationErrorCode } from '../../shared/errors.js';
import type { OperationType, Transaction } from '../transactions/transaction.js';

export const LIFECYCLE_ACTIONS = ['CAPTURE', 'REFUND', 'VOID', 'RENEW'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

export const LIFECYCLE_STATES = ['PENDING', 'FAILED', 'AUTHORIZED', 'PARTIALLY_CAPTURED', 'CAPTURED', 'VOIDED', 'SALE', 'PAYOUT'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export type Rule = 'ALLOWED' | Exclude<OperationErrorCode, 'DECLINED_BY_ISSUER_OR_SCHEME' | 'ACQUIRER_TIMEOUT'>;

/**
 * The table. A refusal is AMOUNT_EXCEEDS_REMAINING where concurrent requests can reach the same
 * cell by amounts alone (a capture of a fully captured authorization), so that the answer does
 * not depend on timing; INVALID_STATE where the state itself forbids the action.
 */
export const LIFECYCLE_RULES: Record<LifecycleState, Record<LifecycleAction, Rule>> = {
  // Not authorized (yet, or ever): nothing to move.
  PENDING: { CAPTURE: 'INVALID_STATE', REFUND: 'INVALID_STATE', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
  FAILED: { CAPTURE: 'INVALID_STATE', REFUND: 'INVALID_STATE', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
  // Authorized, nothing captured: nothing to refund yet.
  AUTHORIZED: { CAPTURE: 'ALLOWED', REFUND: 'INVALID_STATE', VOID: 'ALLOWED', RENEW: 'ALLOWED' },
  PARTIALLY_CAPTURED: { CAPTURE: 'ALLOWED', REFUND: 'ALLOWED', VOID: 'ALLOWED', RENEW: 'ALLOWED' },
  // Nothing left uncaptured (captured in full, or the rest voided); refunds remain possible.
  CAPTURED: { CAPTURE: 'AMOUNT_EXCEEDS_REMAINING', REFUND: 'ALLOWED', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
  // The whole authorization was released.
  VOIDED: { CAPTURE: 'INVALID_STATE', REFUND: 'INVALID_STATE', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
  // Physical sale: captured at the terminal, cannot be voided; refunded only by a PAYOUT sale on the terminal.
  SALE: { CAPTURE: 'INVALID_STATE', REFUND: 'INVALID_STATE', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
  // Money sent to a card: no lifecycle operations.
  PAYOUT: { CAPTURE: 'INVALID_STATE', REFUND: 'INVALID_STATE', VOID: 'INVALID_STATE', RENEW: 'INVALID_STATE' },
};

/** Why a state refuses an action, for the INVALID_STATE message. */
const STATE_REASONS: Record<LifecycleState, string> = {
  PENDING: 'the transaction is not authorized yet',
  FAILED: 'the transaction was not authorized',
  AUTHORIZED: 'nothing has been captured',
  PARTIALLY_CAPTURED: '',
  CAPTURED: 'nothing is left uncaptured',
  VOIDED: 'the authorization was voided',
  SALE: 'a physical sale is captured at the terminal and refunded only with a PAYOUT sale on the terminal',
  PAYOUT: 'a payout has no lifecycle operations',
};

/** Renew extends a deferred-payment authorization; only these methods have one (INTERFACE §7). */
export const RENEWABLE_PAYMENT_METHODS = ['KLARNA', 'VIABILL'] as const;

/** Aggregates that the rules read; the settled columns of the transaction. */
export function uncaptured(tx: Pick<Transaction, 'authorizedAmount' | 'capturedAmount' | 'voidedAmount'>): number {
  return Math.max(0, tx.authorizedAmount - tx.capturedAmount - tx.voidedAmount);
}

export function lifecycleStateOf(tx: Transaction): LifecycleState {
  if (tx.state === 'PENDING' || tx.state === 'PROCESSING') return 'PENDING';
  if (tx.state === 'FAILED') return 'FAILED';
  if (tx.type === 'PAYOUT') return 'PAYOUT';
  if (tx.flow === 'SALE') return 'SALE';
  if (uncaptured(tx) > 0) return tx.capturedAmount > 0 ? 'PARTIALLY_CAPTURED' : 'AUTHORIZED';
  return tx.capturedAmount > 0 ? 'CAPTURED' : 'VOIDED';
}

export interface Refusal {
  code: OperationErrorCode;
  message: string;
}

const VERB: Record<LifecycleAction, string> = { CAPTURE: 'capture', REFUND: 'refund', VOID: 'void', RENEW: 'renew' };

/**
 * The decision for `action` on `tx` before any amount is reserved: null when allowed.
 * Renew's payment-method rule comes first: it holds whatever the state.
 */
export function refusalOf(tx: Transaction, action: LifecycleAction): Refusal | null {
  if (action === 'RENEW' && !(RENEWABLE_PAYMENT_METHODS as readonly string[]).includes(tx.paymentMethodType ?? '')) {
    return {
      code: 'NOT_SUPPORTED_FOR_PAYMENT_METHOD',
      message: `Renew is supported only for ${RENEWABLE_PAYMENT_METHODS.join(' and ')}, not for ${tx.paymentMethodType ?? 'this payment method'}.`,
    };
  }
  const state = lifecycleStateOf(tx);
  const rule = LIFECYCLE_RULES[state][action];
  if (rule === 'ALLOWED') return null;
  if (rule === 'AMOUNT_EXCEEDS_REMAINING') return amountExceeds(action, 0);
  return invalidState(state, action);
}

export function invalidState(state: LifecycleState, action: LifecycleAction): Refusal {
  const reason = STATE_REASONS[state];
  return { code: 'INVALID_STATE', message: `Cannot ${VERB[action]} a transaction in state ${state}${reason ? `: ${reason}` : ''}.` };
}

export function amountExceeds(action: LifecycleAction, available: number): Refusal {
  const what = action === 'REFUND' ? 'the captured amount not yet refunded' : 'the remaining authorization';
  return { code: 'AMOUNT_EXCEEDS_REMAINING', message: `The amount exceeds ${what} (${available} available).` };
}

/** Operation type recorded for each action. */
export const OPERATION_TYPE_OF: Record<LifecycleAction, OperationType> = {
  CAPTURE: 'CAPTURE',
  REFUND: 'REFUND',
  VOID: 'VOID',
  RENEW: 'RENEW',
};

/** Operation types whose SUCCESS moved funds that a refund can give back (each refunded in isolation). */
export const REFUNDABLE_OPERATION_TYPES: readonly OperationType[] = ['CAPTURE', 'SALE'];

/** The error of an operation in doubt (INTERFACE §12.4): it stays PROCESSING until an operator resolves it. */
export const IN_DOUBT_ERROR = {
  code: 'ACQUIRER_TIMEOUT',
  message:
    'The acquirer did not answer: the outcome is in doubt and the request is never sent again. The operation stays PROCESSING until an operator resolves it with the acquirer; its callback follows. Do not retry it.',
} as const;
