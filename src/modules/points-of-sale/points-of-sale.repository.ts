import type { PointOfSale } from './point-of-sale.js';

export interface PointsOfSaleRepository {
  insert(pointOfSale: PointOfSale, webhookAuthenticationSealed: string): Promise<void>;
  findById(accountId: string, id: string): Promise<(PointOfSale & { webhookAuthenticationSealed: string }) | null>;
  list(accountId: string, offset: number, limit: number): Promise<{ items: PointOfSale[]; total: number }>;
}
