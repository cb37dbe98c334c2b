import type { Terminal } from '../terminals/terminal.js';
import type { NewTransaction } from '../transactions/transactions.repository.js';
import type { SaleStage, TerminalSale } from './sale.js';

/**
 * Storage port of in-person sales: the sale's own stages. The transaction's state is the payment
 * engine's to move (PaymentEngine.moveInCommit). Every method also runs inside `store.transaction`.
 */
export interface SalesRepository {
  /**
   * Inserts an unfinished sale transaction and its terminal sale, unless the terminal already
   * holds an unfinished sale (the database's unique index decides, so concurrent inserts cannot
   * both win). False when the terminal was busy: nothing was written.
   */
  insertIfTerminalFree(transaction: NewTransaction, sale: TerminalSale): Promise<boolean>;
  /** A sale that never reached a terminal (early rejection): a FAILED transaction only. */
  insertRejected(transaction: NewTransaction): Promise<void>;
  find(transactionId: string): Promise<TerminalSale | null>;
  /** The sale that holds the terminal (an active stage), if any. */
  activeOnTerminal(terminalId: string): Promise<TerminalSale | null>;
  /** Conditional claim: moves the sale from `from` to `to`; false when it was not in `from` (someone else won). */
  moveStage(
    transactionId: string,
    from: SaleStage,
    to: SaleStage,
    fields?: Partial<Pick<TerminalSale, 'dispatchedAt' | 'expiresAt' | 'cardPresentedAt' | 'endedAt'>> & { updatedAt: string },
    notExpiredAt?: string,
  ): Promise<boolean>;
  /** A terminal by id whatever its account (sandbox device controls act as the terminal itself). */
  findTerminal(terminalId: string): Promise<Terminal | null>;
}
