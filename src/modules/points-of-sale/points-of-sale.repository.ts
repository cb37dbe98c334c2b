import type { SealedSigningSecrets, StoredSigningSecrets } from '../../shared/signing.js';
import type { PointOfSale } from './point-of-sale.js';

/** A point of sale as stored: its callback Authorization value and signing secrets sealed. */
export interface StoredPointOfSale extends PointOfSale, StoredSigningSecrets {
  webhookAuthenticationSealed: string;
}

export interface PointsOfSaleRepository {
  /** Without `signingSecretSealed` the point of sale gets its signing secret on first need (as one stored before migration 028). */
  insert(pointOfSale: PointOfSale, webhookAuthenticationSealed: string, signingSecretSealed?: string): Promise<void>;
  findById(accountId: string, id: string): Promise<StoredPointOfSale | null>;
  list(accountId: string, offset: number, limit: number): Promise<{ items: PointOfSale[]; total: number }>;
  /** Sets the signing secret of a point of sale stored before migration 028, only where none is. */
  fillSigningSecret(accountId: string, id: string, signingSecretSealed: string): Promise<void>;
  /** Replaces its signing secrets while the current one is still `expected`; false otherwise. */
  replaceSigningSecrets(accountId: string, id: string, expected: string, next: SealedSigningSecrets, now: string): Promise<boolean>;
}
