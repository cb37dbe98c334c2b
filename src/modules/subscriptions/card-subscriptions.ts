/**
 * What a card's change does to its subscriptions, inside the commit that changes the card: deleted,
 * blocked by the cardholder or expired → its live subscriptions become INVALID; given a new expiry
 * or card by the account updater → those made INVALID only because it expired are ACTIVE again.
 * It needs nothing but the commit's repositories and the clock, so the payment methods, the payment
 * engine and the subscriptions service all take it at construction.
 */
import type { Clock } from '../../clock.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import { nextSubscriptionState, paymentMethodUnusable } from './subscription.js';
import type { SubscriptionChanges, SubscriptionsRepository } from './subscriptions.repository.js';

/** The repositories of the commit that changes the card. */
export interface CardSubscriptionRepos {
  subscriptions: SubscriptionsRepository;
}

export class CardSubscriptions {
  constructor(private readonly deps: { clock: Clock }) {}

  /** The card was deleted or can no longer be charged (`reason`): its live subscriptions become INVALID. */
  async invalidate(repos: CardSubscriptionRepos, accountId: string, paymentMethodId: string, reason: string): Promise<number> {
    let changed = 0;
    for (const s of await repos.subscriptions.findByPaymentMethod(accountId, paymentMethodId)) {
      const next = nextSubscriptionState(s.state, 'invalidate');
      if (!next || next === s.state) continue;
      const changes: SubscriptionChanges = { state: next, statusReason: reason, updatedAt: this.deps.clock.nowIso() };
      if (await repos.subscriptions.updateIfState(accountId, s.id, s.state, changes)) changed++;
    }
    return changed;
  }

  /**
   * The account updater gave the card a new expiry or number (INTERFACE §11.4): its subscriptions
   * made INVALID only because it had expired are ACTIVE again when it can be charged now. Those
   * invalidated for another reason stay as they are.
   */
  async reinstate(repos: CardSubscriptionRepos, paymentMethod: PaymentMethod): Promise<number> {
    if (paymentMethodUnusable(paymentMethod, this.deps.clock.now())) return 0;
    let changed = 0;
    for (const s of await repos.subscriptions.findByPaymentMethod(paymentMethod.accountId, paymentMethod.id)) {
      if (s.statusReason !== 'PAYMENT_METHOD_EXPIRED' || nextSubscriptionState(s.state, 'reinstate') !== 'ACTIVE') continue;
      const changes: SubscriptionChanges = { state: 'ACTIVE', statusReason: null, updatedAt: this.deps.clock.nowIso() };
      if (await repos.subscriptions.updateIfState(paymentMethod.accountId, s.id, s.state, changes)) changed++;
    }
    return changed;
  }
}
