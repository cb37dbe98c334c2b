import type { NewJob } from '../../jobs/job.js';
import type { Keyset } from '../../shared/pagination.js';
import type { ScaResult } from '../../connectors/acquirer.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { ExternalStatusCodes, Operation, OperationState, Transaction, TransactionState } from './transaction.js';

export type AmountMode = 'EQUAL' | 'LESS_THAN' | 'GREATER_THAN';

export interface TransactionFilter {
  sessionId?: string | undefined;
  terminalId?: string | undefined;
  pointOfSaleId?: string | undefined;
  subscriptionId?: string | undefined;
  billingAgreementChargeId?: string | undefined;
  reference?: string | undefined;
  referenceMode?: 'EXACT' | 'PREFIX' | undefined;
  createdBefore?: string | undefined;
  createdAfter?: string | undefined;
  customerId?: string | undefined;
  currency?: string | undefined;
  state?: string | undefined;
  type?: string | undefined;
  errorCode?: string | undefined;
  paymentMethodType?: string | undefined;
  paymentMethodSubType?: string | undefined;
  amount?: { mode: AmountMode; value: number } | undefined;
  fee?: { mode: AmountMode; value: number } | undefined;
}

export interface OperationFilter {
  finalizedBefore?: string | undefined;
  finalizedAfter?: string | undefined;
  pointOfSaleIds?: string[] | undefined;
}

export type NewTransaction = Omit<Transaction, 'authorizedAmount' | 'capturedAmount' | 'refundedAmount' | 'voidedAmount' | 'paidOutAmount' | 'pendingAmount'> &
  Partial<Pick<Transaction, 'authorizedAmount' | 'capturedAmount' | 'refundedAmount' | 'voidedAmount' | 'paidOutAmount' | 'pendingAmount'>>;

/** Columns the payment engine sets when it applies an acquirer answer (payment-engine.ts). */
export interface TransactionResultPatch {
  state?: TransactionState;
  errorCode?: string | null;
  externalStatusCodes?: ExternalStatusCodes | null;
  acquirer?: string | null;
  acquirerReference?: string | null;
  sca?: ScaResult | null;
  finalizedAt?: string | null;
  /** Set when a payment method is attached to an existing transaction (card tapped later). */
  paymentMethodId?: string | null;
  paymentMethodType?: string | null;
  paymentMethodSubType?: string | null;
  paymentMethodExpiry?: string | null;
  paymentMethodDisplayText?: string | null;
  paymentMethodHolderName?: string | null;
  /** Set by the CIT session when the subscription it asked for is created with the approval (sessions module). */
  subscriptionId?: string | null;
  updatedAt: string;
}

/**
 * Amounts added to the aggregate columns in the same statement (negative: taken off). The update
 * applies only while captured + voided + pending ≤ authorized and refunded + pendingRefund ≤
 * captured still hold afterwards: a reservation that does not fit changes nothing.
 */
export interface AggregateDelta {
  authorized?: number;
  captured?: number;
  voided?: number;
  paidOut?: number;
  refunded?: number;
  /** Captures and voids in flight (reserved). */
  pending?: number;
  /** Refunds in flight (reserved). */
  pendingRefund?: number;
}

/** A transaction's aggregate columns, settled and reserved (the reservation model's figures). */
export interface ReservationAmounts {
  authorized: number;
  captured: number;
  refunded: number;
  voided: number;
  /** Captures and voids in flight. */
  pending: number;
  /** Refunds in flight. */
  pendingRefund: number;
}

export interface OperationResultPatch {
  state: OperationState;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  finalizedAt: string;
}

/** The engine's record step as one write: new transactions, their operations and the operations' jobs. */
export interface PaymentRecords {
  record(transactions: NewTransaction[], operations: Operation[], jobs: NewJob[]): Promise<void>;
}

export interface TransactionsRepository {
  insert(transactions: NewTransaction[]): Promise<void>;
  insertOperations(operations: Operation[]): Promise<void>;
  findById(accountId: string, id: string): Promise<Transaction | null>;
  /** Transactions created by idempotent requests with these effect keys (see RequestContext.effect). */
  findByIdempotencyKeys(accountId: string, keys: string[]): Promise<Transaction[]>;
  /** Newest first (createdAt desc, id desc), strictly after `after`; `limit` rows at most. */
  list(accountId: string, filter: TransactionFilter, after: Keyset | null, limit: number): Promise<Transaction[]>;
  operationsOf(transactionId: string): Promise<Operation[]>;
  /**
   * A transaction with the id of its SUCCESS AUTHORIZATION or SALE operation (what capture, void
   * and renew refer to) and what driving its operations reads besides them, in one read.
   */
  findWithPrimaryOperation(accountId: string, id: string): Promise<PrimaryOperationRead | null>;
  /**
   * An operation with everything driving it needs, in one read; null when it does not exist: its
   * transaction, the transaction's payment method with its sealed number (deleted ones too; null
   * when it has none) and the sealed callback authorization of its point of sale.
   */
  findForDrive(operationId: string): Promise<DriveRecord | null>;
  /**
   * Moves a transaction without touching its amounts: `patch` applied only while its state is one
   * of `from`. The row as moved, or null when it was not in one of them (nothing changed).
   */
  move(id: string, from: TransactionState[], patch: TransactionResultPatch): Promise<Transaction | null>;
  /**
   * A reservation (or its release): `patch` applied and `delta` added to the amounts, only while the
   * state is one of `from` and the amounts fit (AggregateDelta). The row as the update leaves it, or
   * null when it did not apply (nothing changed). `asRead`: the transaction as the caller last read
   * it, when it has; the store may then predict the row from it instead of reading it back.
   */
  reserve(id: string, from: TransactionState[], patch: TransactionResultPatch, delta: AggregateDelta, asRead?: Transaction): Promise<Transaction | null>;
  reservationAmounts(id: string): Promise<ReservationAmounts | null>;
  /**
   * An acquirer's answer: the operation finished (while PROCESSING) and its transaction changed
   * as `reserve` changes it, on the transaction as the caller last read it (`asRead`). Both are
   * applied; when either did not apply, the caller's commit must roll back. The store may predict
   * the row from `asRead` and check the prediction instead of reading it back (PostgreSQL: one held
   * statement).
   */
  applyAnswer(
    operation: { id: string; patch: OperationResultPatch },
    change: { id: string; from: TransactionState[]; patch: TransactionResultPatch; delta?: AggregateDelta },
    asRead: Transaction,
  ): Promise<{ finished: boolean; transaction: Transaction | null }>;
  /** Operations in a final state, newest finalized first. */
  listFinalOperations(accountId: string, filter: OperationFilter, offset: number, limit: number): Promise<{ items: Operation[]; total: number }>;
}

/** What driving an operation reads (TransactionsRepository.findForDrive). */
export interface DriveRecord extends DriveContext {
  transaction: Transaction;
  operation: Operation;
}

export interface PrimaryOperationRead {
  transaction: Transaction;
  primaryOperationId: string | null;
  drive: DriveContext;
}

/** A drive record, its fields always in this order (docs/object-shapes.md). */
export function driveRecord(transaction: Transaction, operation: Operation, context: DriveContext): DriveRecord {
  return {
    transaction,
    operation,
    paymentMethod: context.paymentMethod,
    webhookAuthenticationSealed: context.webhookAuthenticationSealed,
    subscription: context.subscription,
  };
}

/** What findForDrive reads besides the operation and its transaction. */
export interface DriveContext {
  paymentMethod: { paymentMethod: PaymentMethod; panSealed: string | null } | null;
  /** The point of sale's sealed webhookAuthentication: the Authorization header of its callbacks. */
  webhookAuthenticationSealed: string | null;
  /** The transaction's subscription (null: it has none), for the callback's body. */
  subscription: Subscription | null;
}
