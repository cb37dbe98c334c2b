import type { Terminal } from './terminal.js';

export interface TerminalsRepository {
  /** Inserts the terminal; when it is the fallback, the previous fallback of its point of sale stops being one. */
  insert(terminal: Terminal): Promise<void>;
  findById(accountId: string, id: string): Promise<Terminal | null>;
  countForPointOfSale(pointOfSaleId: string): Promise<number>;
  findFallback(pointOfSaleId: string): Promise<Terminal | null>;
  list(accountId: string, pointOfSaleId: string | null, offset: number, limit: number): Promise<{ items: Terminal[]; total: number }>;
}
