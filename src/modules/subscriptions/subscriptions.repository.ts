import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { Subscription, SubscriptionState } from './subscription.js';

export interface SubscriptionFilter {
  createdBefore?: string | undefined;
  createdAfter?: string | undefined;
  customerId?: string | undefined;
  reference?: string | undefined;
  currency?: string | undefined;
  state?: SubscriptionState | undefined;
  paymentMethodId?: string | undefined;
  pointOfSaleId?: string | undefined;
  type?: string | undefined;
}

export type SubscriptionChanges = Partial<Pick<Subscription, 'state' | 'statusReason' | 'type' | 'expiryDate' | 'interval' | 'amount' | 'updatedAt'>>;

export interface SubscriptionsRepository {
  insert(subscription: Subscription): Promise<void>;
  findById(accountId: string, id: string): Promise<Subscription | null>;
  /** The subscription with its payment method (deleted ones too; null when the row is gone), in one read. */
  findWithPaymentMethod(accountId: string, id: string): Promise<{ subscription: Subscription; paymentMethod: PaymentMethod | null } | null>;
  /** Newest first (createdAt desc, id desc). */
  list(accountId: string, filter: SubscriptionFilter, offset: number, limit: number): Promise<{ items: Subscription[]; total: number }>;
  /** Applies `changes` only while the subscription is still in `expectedState`; false when it was not. */
  updateIfState(accountId: string, id: string, expectedState: SubscriptionState, changes: SubscriptionChanges): Promise<boolean>;
  findByPaymentMethod(accountId: string, paymentMethodId: string): Promise<Subscription[]>;
  /** Any account: PENDING or ACTIVE subscriptions whose payment method's expiry is before `date` (YYYY-MM-DD). */
  listLiveWithPaymentMethodExpiredBefore(date: string, limit: number): Promise<Subscription[]>;
}
