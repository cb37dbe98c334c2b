/** Read side of billing agreement charges: one charge with its attempts' transactions, and lists. */
import { notFound } from '../../shared/errors.js';
import type { Transaction } from '../transactions/transaction.js';
import type { BillingCharge } from './charge.js';
import type { BillingChargesRepository } from './charges.repository.js';

export interface ChargeView {
  charge: BillingCharge;
  /** Ids of the attempts' transactions, oldest first. */
  transactionIds: string[];
}

export class BillingChargesService {
  constructor(
    private readonly deps: {
      charges: BillingChargesRepository;
      /** The transactions of one charge (filter billingAgreementChargeId), any order. */
      transactionsOf(accountId: string, chargeId: string): Promise<Transaction[]>;
    },
  ) {}

  async get(accountId: string, id: string): Promise<ChargeView & { transactions: Transaction[] }> {
    const charge = await this.deps.charges.findById(accountId, id);
    if (!charge) throw notFound('billing agreement charge');
    const transactions = (await this.deps.transactionsOf(accountId, id)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { charge, transactionIds: transactions.map((t) => t.id), transactions };
  }

  async list(
    accountId: string,
    filter: { billingAgreementId?: string | undefined },
    offset: number,
    limit: number,
  ): Promise<{ items: ChargeView[]; total: number }> {
    const page = await this.deps.charges.list(accountId, filter, offset, limit);
    const ids = await this.deps.charges.transactionIdsOf(
      accountId,
      page.items.map((c) => c.id),
    );
    return { items: page.items.map((charge) => ({ charge, transactionIds: ids.get(charge.id) ?? [] })), total: page.total };
  }
}
