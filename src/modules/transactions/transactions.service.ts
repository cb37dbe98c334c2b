import { notFound } from '../../shared/errors.js';
import type { Keyset } from '../../shared/pagination.js';
import { aggregatesOf, type Aggregates, type Operation, type Transaction } from './transaction.js';
import type { OperationFilter, TransactionFilter, TransactionsRepository } from './transactions.repository.js';

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
}

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
      operations,
      acquirerAgreement: await this.agreementOf(transaction),
    };
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
