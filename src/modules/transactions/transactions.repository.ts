import type { Keyset } from '../../shared/pagination.js';
import type { ScaResult } from '../../connectors/acquirer.js';
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

/** Columns the payment pipeline sets when it applies an acquirer answer (authorization.service.ts). */
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

/** Amounts added to the aggregate columns in the same statement. */
export interface AggregateDelta {
  authorized?: number;
  captured?: number;
  voided?: number;
  paidOut?: number;
}

export interface OperationResultPatch {
  state: OperationState;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  finalizedAt: string;
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
  findOperation(transactionId: string, operationId: string): Promise<Operation | null>;
  /**
   * Conditional update: applies `patch` and adds `delta` to the aggregates only while the state
   * is one of `from` (and, for a capture, while captured + delta stays within authorized − voided).
   * True when this call changed the row, so a result is applied exactly once.
   */
  applyResult(id: string, from: TransactionState[], patch: TransactionResultPatch, delta?: AggregateDelta): Promise<boolean>;
  /** applyResult that answers with the row as updated (null when it did not apply): no read after it. */
  applyResultReturning(id: string, from: TransactionState[], patch: TransactionResultPatch, delta?: AggregateDelta): Promise<Transaction | null>;
  /** Finishes an operation still PROCESSING; true when this call did it. */
  finishOperation(id: string, patch: OperationResultPatch): Promise<boolean>;
  /** Operations in a final state, newest finalized first. */
  listFinalOperations(accountId: string, filter: OperationFilter, offset: number, limit: number): Promise<{ items: Operation[]; total: number }>;
}
