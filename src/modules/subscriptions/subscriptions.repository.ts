import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
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

export interface ChargeRead {
  subscription: Subscription;
  paymentMethod: PaymentMethod | null;
  pointOfSale: PointOfSale | null;
  sealed: { pan: string | null; webhookAuthentication: string | null };
}

/** A subscription that may be charged now (SubscriptionsService.requireChargeable): its read, with a payment method. */
export type Chargeable = ChargeRead & { paymentMethod: PaymentMethod };

export interface SubscriptionsRepository {
  insert(subscription: Subscription): Promise<void>;
  findById(accountId: string, id: string): Promise<Subscription | null>;
  /**
   * What charging the subscription needs, in one read: it, its payment method (deleted ones too)
   * and its point of sale; null parts are gone. `sealed`: the card number and the point of sale's
   * callback authorization, sealed, for the payment's drive (PaymentRequest.driveRead).
   */
  findForCharge(accountId: string, id: string): Promise<ChargeRead | null>;
  /** findForCharge of many subscriptions in one statement (a MIT batch), by id; the account's only. */
  findForChargeMany(accountId: string, ids: readonly string[]): Promise<Map<string, ChargeRead>>;
  /** Newest first (createdAt desc, id desc). */
  list(accountId: string, filter: SubscriptionFilter, offset: number, limit: number): Promise<{ items: Subscription[]; total: number }>;
  /** Applies `changes` only while the subscription is still in `expectedState`; false when it was not. */
  updateIfState(accountId: string, id: string, expectedState: SubscriptionState, changes: SubscriptionChanges): Promise<boolean>;
  findByPaymentMethod(accountId: string, paymentMethodId: string): Promise<Subscription[]>;
  /** Any account: PENDING or ACTIVE subscriptions whose payment method's expiry is before `date` (YYYY-MM-DD). */
  listLiveWithPaymentMethodExpiredBefore(date: string, limit: number): Promise<Subscription[]>;
}
