import type { PaymentMethod } from './payment-method.js';

export interface PaymentMethodsRepository {
  /** `panSealed` is the vault's sealed card number (null for wallets). */
  insert(paymentMethod: PaymentMethod, panSealed: string | null): Promise<void>;
  /** Includes deleted rows when `withDeleted` (running transactions still need the instrument). */
  findById(accountId: string, id: string, withDeleted?: boolean): Promise<PaymentMethod | null>;
  sealedPan(id: string): Promise<string | null>;
  /** The method (deleted ones included) with its sealed number, in one read: only for an acquirer call. */
  findWithSealedPan(accountId: string, id: string): Promise<{ paymentMethod: PaymentMethod; panSealed: string | null } | null>;
  list(accountId: string, customerId: string | null, offset: number, limit: number): Promise<{ items: PaymentMethod[]; total: number }>;
  /** Marks deleted; false when there was nothing (or nothing live) to delete. */
  markDeleted(accountId: string, id: string, at: string): Promise<boolean>;
}
