/**
 * Transaction and operation entities with their explicit state-transition tables.
 * A transaction is one payment of any flow; its operations (authorization, sale, capture, refund,
 * void, renew, payout) move the money. Aggregates are the sums of SUCCESS operations.
 */
import type { ScaResult } from '../../connectors/acquirer.js';
export const TRANSACTION_STATES = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'] as const;
export type TransactionState = (typeof TRANSACTION_STATES)[number];
export const TRANSACTION_TYPES = ['PAYMENT', 'PAYOUT', 'MOTO'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
/** How the transaction came in; decides which lifecycle rules apply (e.g. no online refund of SALE). */
export const TRANSACTION_FLOWS = ['MIT', 'CIT', 'MOTO', 'SALE', 'PAYOUT'] as const;
export type TransactionFlow = (typeof TRANSACTION_FLOWS)[number];

export const OPERATION_STATES = ['PROCESSING', 'SUCCESS', 'FAILED'] as const;
export type OperationState = (typeof OPERATION_STATES)[number];
export const OPERATION_TYPES = ['AUTHORIZATION', 'SALE', 'CAPTURE', 'REFUND', 'VOID', 'RENEW', 'PAYOUT'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

/** What an operation's answer starts: the capture (and void) of an instant capture, or the void of a capture's uncaptured rest. */
export const OPERATION_CHAINS = ['INSTANT_CAPTURE', 'VOID_REMAINING'] as const;
export type OperationChain = (typeof OPERATION_CHAINS)[number];

/** The effects a flow declares for its payment's final answer, applied in the commit that makes it final. */
export const PAYMENT_EFFECTS = ['SESSION', 'BILLING_CHARGE', 'TERMINAL_SALE'] as const;
export type PaymentEffects = (typeof PAYMENT_EFFECTS)[number];

export const SCA_MODES = ['SKIP', 'NORMAL', 'FORCE'] as const;
export const INSTANT_CAPTURE_MODES = ['OFF', 'VOID', 'NO_VOID'] as const;
export type InstantCapture = (typeof INSTANT_CAPTURE_MODES)[number];
export const EXEMPTIONS = ['TRA', 'LVT'] as const;
export const PAYMENT_METHOD_TYPES = ['CARD', 'VIPPS_MOBILEPAY', 'APPLE_PAY', 'GOOGLE_PAY', 'KLARNA', 'VIABILL'] as const;

export interface ExternalStatusCodes {
  terminal: string | null;
  acquirer: string | null;
  network: string | null;
  sca: string | null;
}

export interface Transaction {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  terminalId: string | null;
  sessionId: string | null;
  subscriptionId: string | null;
  billingAgreementChargeId: string | null;
  paymentMethodId: string | null;
  paymentMethodType: string | null;
  paymentMethodSubType: string | null;
  paymentMethodExpiry: string | null;
  paymentMethodDisplayText: string | null;
  paymentMethodHolderName: string | null;
  customerId: string | null;
  type: TransactionType;
  flow: TransactionFlow;
  state: TransactionState;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  scaMode: string | null;
  amount: number;
  fee: number;
  currency: string;
  instantCapture: string | null;
  notificationUrl: string | null;
  reference: string | null;
  textOnStatement: string | null;
  descriptor: string | null;
  exemptions: string[] | null;
  attributes: Record<string, string> | null;
  clientIp: string | null;
  clientCountry: string | null;
  /** The connector that moves its money (`sandbox`, `clearhaus`; tests: others); kept for all its operations. */
  acquirer: string | null;
  /** The acquirer agreement that authorized it (INTERFACE §12.1); null: the simulator without one. */
  acquirerAgreementId?: string | null;
  acquirerReference: string | null;
  authorizedAmount: number;
  capturedAmount: number;
  refundedAmount: number;
  voidedAmount: number;
  paidOutAmount: number;
  pendingAmount: number;
  /** The authentication result of the payment (NotificationWebhook `sca`); null when none ran. */
  sca?: ScaResult | null;
  /** Effect key of the idempotent request that created it: a retry after a crash finds it instead of paying twice. */
  idempotencyKey?: string | null;
  /** The effects its flow declared for the final answer (null: none beyond events and the callback). */
  effects?: PaymentEffects | null;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

export interface Operation {
  id: string;
  accountId: string;
  transactionId: string;
  pointOfSaleId: string;
  type: OperationType;
  state: OperationState;
  amount: number;
  referenceOperationId: string | null;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  /** Effect key of the idempotent request that created it (refunds: one per refunded capture, suffixed #n). */
  idempotencyKey?: string | null;
  /** What its answer starts (null: nothing). */
  chain?: OperationChain | null;
  createdAt: string;
  finalizedAt: string | null;
}

export type TransactionEvent = 'dispatch' | 'approve' | 'decline' | 'reject' | 'abort' | 'expire';

/** Transaction state × event → next state. Anything missing is refused with the current state named. */
export const TRANSACTION_TRANSITIONS: Record<TransactionState, Partial<Record<TransactionEvent, TransactionState>>> = {
  PENDING: { dispatch: 'PROCESSING', approve: 'SUCCESS', decline: 'FAILED', reject: 'FAILED', abort: 'FAILED', expire: 'FAILED' },
  PROCESSING: { approve: 'SUCCESS', decline: 'FAILED', abort: 'FAILED', expire: 'FAILED' },
  SUCCESS: {},
  FAILED: {},
};

export type OperationEvent = 'approve' | 'decline';
export const OPERATION_TRANSITIONS: Record<OperationState, Partial<Record<OperationEvent, OperationState>>> = {
  PROCESSING: { approve: 'SUCCESS', decline: 'FAILED' },
  SUCCESS: {},
  FAILED: {},
};

export function nextTransactionState(current: TransactionState, event: TransactionEvent): TransactionState | null {
  return TRANSACTION_TRANSITIONS[current][event] ?? null;
}

export function nextOperationState(current: OperationState, event: OperationEvent): OperationState | null {
  return OPERATION_TRANSITIONS[current][event] ?? null;
}

export const isFinal = (state: TransactionState | OperationState): boolean => state === 'SUCCESS' || state === 'FAILED';

export interface Aggregates {
  authorized: number;
  captured: number;
  refunded: number;
  voided: number;
  remaining: number;
  paidOut: number;
}

/** `remaining` is the uncaptured, unvoided part of the authorization. */
export function aggregatesOf(tx: Transaction): Aggregates {
  return {
    authorized: tx.authorizedAmount,
    captured: tx.capturedAmount,
    refunded: tx.refundedAmount,
    voided: tx.voidedAmount,
    remaining: Math.max(0, tx.authorizedAmount - tx.capturedAmount - tx.voidedAmount),
    paidOut: tx.paidOutAmount,
  };
}
