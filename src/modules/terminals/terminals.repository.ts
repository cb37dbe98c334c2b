import type { Terminal } from './terminal.js';

/** GET /terminals filters; null: any. Combined with AND. */
export interface TerminalFilter {
  pointOfSaleId: string | null;
  deviceId: string | null;
}

export interface TerminalsRepository {
  /** Inserts the terminal; when it is the fallback, the previous fallback of its point of sale stops being one. */
  insert(terminal: Terminal): Promise<void>;
  findById(accountId: string, id: string): Promise<Terminal | null>;
  countForPointOfSale(pointOfSaleId: string): Promise<number>;
  findFallback(pointOfSaleId: string): Promise<Terminal | null>;
  list(accountId: string, filter: TerminalFilter, offset: number, limit: number): Promise<{ items: Terminal[]; total: number }>;
}
