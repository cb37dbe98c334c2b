import { notFound } from '../../shared/errors.js';
import type { Keyset } from '../../shared/pagination.js';
import { aggregatesOf, type Aggregates, type Operation, type Transaction } from './transaction.js';
import type { OperationFilter, TransactionFilter, TransactionsRepository } from './transactions.repository.js';
import type { AcquirerRequestsRepository } from './acquirer-requests.repository.js';

export interface TransactionDetail {
  transaction: Transaction;
  aggregates: Aggregates;
  operations: Operation[];
  acquirerAgreement: { acquirer: string; mcc: string };
}

export const SANDBOX_ACQUIRER_AGREEMENT = { acquirer: 'sandbox', mcc: '5999' };

export interface TransactionsServiceDeps {
  transactions: TransactionsRepository;
  /** The agreement row a transaction names (acquirer-agreements: read once per process, rows never change). */
  agreementOf?: (agreementId: string) => Promise<{ acquirer: string; mcc: string }>;
  /** The requests of real acquirers whose outcome is in doubt (at-most-once.ts). */
  acquirerRequests?: Pick<AcquirerRequestsRepository, 'unresolvedInDoubt'>;
}

/** What an operation in doubt says while it waits for an operator (INTERFACE §12.4), as its synchronous answer did. */
const IN_DOUBT_ERROR_CODE = 'ACQUIRER_TIMEOUT';

/** Read side of transactions and operations. */
export class TransactionsService {
  constructor(private readonly deps: TransactionsServiceDeps) {}

  async get(accountId: string, id: string): Promise<Transaction> {
    const transaction = await this.deps.transactions.findById(accountId, id);
    if (!transaction) throw notFound('transaction');
    return transaction;
  }

  async detail(accountId: string, id: string): Promise<TransactionDetail> {
    const transaction = await this.get(accountId, id);
    return this.detailOf(transaction);
  }

  /** `transactions`: the repository of a commit to read through (default: outside any commit). */
  /** `operations`: the transaction's operations when the caller knows them all (no read). */
  async detailOf(
    transaction: Transaction,
    transactions: TransactionsRepository = this.deps.transactions,
    operations?: Operation[],
  ): Promise<TransactionDetail> {
    operations ??= await transactions.operationsOf(transaction.id);
    return {
      transaction,
      aggregates: aggregatesOf(transaction),
      operations: await this.markInDoubt(transaction, operations),
      acquirerAgreement: await this.agreementOf(transaction),
    };
  }

  /**
   * A capture, refund or payout in doubt stays PROCESSING until an operator resolves it; the
   * transaction says so (INTERFACE §12.4): its operation carries `ACQUIRER_TIMEOUT` meanwhile.
   */
  private async markInDoubt(transaction: Transaction, operations: Operation[]): Promise<Operation[]> {
    if (!this.deps.acquirerRequests) return operations;
    const processing = operations.filter((op) => op.state === 'PROCESSING').map((op) => op.id);
    if (processing.length === 0) return operations;
    const inDoubt = new Set(await this.deps.acquirerRequests.unresolvedInDoubt(processing));
    if (inDoubt.size === 0) return operations;
    return operations.map((op) => (inDoubt.has(op.id) ? { ...op, errorCode: IN_DOUBT_ERROR_CODE } : op));
  }

  /** INTERFACE §12.1: `{acquirer, mcc}` of the agreement that authorized it; the simulator's without one. */
  private async agreementOf(transaction: Transaction): Promise<{ acquirer: string; mcc: string }> {
    if (transaction.acquirerAgreementId && this.deps.agreementOf) {
      const { acquirer, mcc } = await this.deps.agreementOf(transaction.acquirerAgreementId);
      return { acquirer, mcc };
    }
    return { acquirer: transaction.acquirer ?? SANDBOX_ACQUIRER_AGREEMENT.acquirer, mcc: SANDBOX_ACQUIRER_AGREEMENT.mcc };
  }

  list(accountId: string, filter: TransactionFilter, after: Keyset | null, limit: number): Promise<Transaction[]> {
    return this.deps.transactions.list(accountId, filter, after, limit);
  }

  listOperations(accountId: string, filter: OperationFilter, offset: number, limit: number) {
    return this.deps.transactions.listFinalOperations(accountId, filter, offset, limit);
  }
}
