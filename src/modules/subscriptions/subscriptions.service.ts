/**
 * Subscription use cases: read, list, update (ACTIVE only), disable, and the checks other
 * modules use before charging (`requireActive`) or after the payment method went away.
 * Creation belongs to the CIT session: `createActive` runs inside the session's completion commit.
 */
import type { Clock } from '../../clock.js';
import { AppError, fieldError, notFound } from '../../shared/errors.js';
import type { EventOutbox } from '../events/event-outbox.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import { paymentMethodWire } from '../payment-methods/payment-methods.schemas.js';
import {
  isPastExpiry,
  nextSubscriptionState,
  paymentMethodUnusable,
  type PaymentMethodUnusable,
  type Subscription,
  type SubscriptionAction,
  type SubscriptionInterval,
  type SubscriptionType,
} from './subscription.js';
import { subscriptionWire } from './subscriptions.schemas.js';
import type { CardSubscriptions } from './card-subscriptions.js';
import type { Chargeable, ChargeRead, SubscriptionChanges, SubscriptionFilter, SubscriptionsRepository } from './subscriptions.repository.js';

/** The repositories a subscription change needs inside one database transaction. */
export interface SubscriptionRepos {
  subscriptions: SubscriptionsRepository;
  /** Registered-webhook events (`subscription.disabled.v1`); absent until the outbox is wired. */
  events?: Pick<EventOutbox, 'append'> | undefined;
}

export interface SubscriptionsDeps {
  subscriptions: SubscriptionsRepository;
  transaction<T>(fn: (repos: SubscriptionRepos) => Promise<T>): Promise<T>;
  paymentMethods: { find(accountId: string, id: string, withDeleted?: boolean): Promise<PaymentMethod | null> };
  /** What a card's change does to its subscriptions (here: expired cards' subscriptions become INVALID). */
  cards: CardSubscriptions;
  clock: Clock;
}

export interface NewSubscription {
  accountId: string;
  pointOfSaleId: string;
  paymentMethodId: string;
  sessionId: string | null;
  customerId: string | null;
  currency: string;
  reference: string | null;
  description?: string | null;
  type: SubscriptionType;
  expiryDate: string | null;
  interval: SubscriptionInterval | null;
}

export interface UpdateSubscriptionInput {
  amount: number;
  type: SubscriptionType;
  expiryDate?: string | null | undefined;
  interval?: SubscriptionInterval | null | undefined;
}

export type SubscriptionView = { subscription: ReturnType<typeof subscriptionWire>; paymentMethod: ReturnType<typeof paymentMethodWire> | null };

export class SubscriptionsService {
  constructor(private readonly deps: SubscriptionsDeps) {}

  async get(accountId: string, id: string): Promise<Subscription> {
    const found = await this.deps.subscriptions.findById(accountId, id);
    if (!found) throw notFound('subscription');
    return found;
  }

  /** `{subscription, paymentMethod}` as GET and list items show it. */
  async view(accountId: string, id: string): Promise<SubscriptionView> {
    return this.viewOf(await this.get(accountId, id));
  }

  async list(accountId: string, filter: SubscriptionFilter, offset: number, limit: number): Promise<{ items: SubscriptionView[]; total: number }> {
    const page = await this.deps.subscriptions.list(accountId, filter, offset, limit);
    return { items: await Promise.all(page.items.map((s) => this.viewOf(s))), total: page.total };
  }

  /**
   * The subscription a new payment may be charged on (MIT, billing): it must exist for this
   * account, be ACTIVE and not past its expiry date; otherwise 422 on `field`. Another merchant's
   * subscription reads as one that does not exist.
   */
  async requireActive(accountId: string, subscriptionId: string, field = 'subscriptionId'): Promise<Subscription> {
    return (await this.requireChargeable(accountId, subscriptionId, field)).subscription;
  }

  /** requireActive with the payment method it charges (read once: the check and the charge share it). */
  async requireChargeable(accountId: string, subscriptionId: string, field = 'subscriptionId'): Promise<Chargeable> {
    return this.chargeableOf(await this.deps.subscriptions.findForCharge(accountId, subscriptionId), field);
  }

  /**
   * requireChargeable of many subscriptions (a MIT batch) with one read: by id, what it charges or
   * the 422 it answers (every id given has an entry).
   */
  async requireChargeableMany(accountId: string, subscriptionIds: readonly string[]): Promise<Map<string, Chargeable | AppError>> {
    const reads = await this.deps.subscriptions.findForChargeMany(accountId, subscriptionIds);
    const checked = new Map<string, Chargeable | AppError>();
    for (const id of subscriptionIds) {
      checked.set(
        id,
        await this.chargeableOf(reads.get(id) ?? null, 'subscriptionId').catch((err: unknown) => {
          if (err instanceof AppError) return err;
          throw err;
        }),
      );
    }
    return checked;
  }

  /** requireChargeable of a charge read (also one made elsewhere: the MIT's, together with its ingestion count). */
  async chargeableOf(read: ChargeRead | null, field = 'subscriptionId'): Promise<Chargeable> {
    if (!read) throw fieldError(field, 'in:ACTIVE', 'no ACTIVE subscription with this id exists');
    // A deleted or expired payment method makes the subscription INVALID before anything is charged.
    const { subscription: found, paymentMethod, pointOfSale, sealed } = read;
    const subscription = nextSubscriptionState(found.state, 'charge') ? await this.invalidateIfUnusable(found, paymentMethod) : found;
    if (!nextSubscriptionState(subscription.state, 'charge')) {
      const why = subscription.statusReason ? ` (${subscription.statusReason})` : '';
      throw fieldError(field, 'in:ACTIVE', `the subscription is ${subscription.state}${why}; only an ACTIVE subscription can be charged`);
    }
    if (isPastExpiry(subscription, this.deps.clock.now())) {
      throw fieldError(field, 'in:ACTIVE', `the subscription expired on ${subscription.expiryDate}`);
    }
    if (!paymentMethod || paymentMethod.deletedAt) throw fieldError(field, 'in:ACTIVE', 'the payment method of this subscription was deleted');
    return { subscription, paymentMethod, pointOfSale, sealed };
  }

  /** Inserts an ACTIVE subscription on the caller's transaction (CIT session completion). */
  async createActive(repos: SubscriptionRepos, input: NewSubscription, id: string): Promise<Subscription> {
    const now = this.deps.clock.nowIso();
    const subscription: Subscription = {
      id,
      accountId: input.accountId,
      pointOfSaleId: input.pointOfSaleId,
      paymentMethodId: input.paymentMethodId,
      sessionId: input.sessionId,
      customerId: input.customerId,
      currency: input.currency,
      reference: input.reference,
      description: input.description ?? null,
      state: 'ACTIVE',
      statusReason: null,
      type: input.type,
      expiryDate: input.expiryDate,
      interval: input.type === 'SCHEDULED' ? input.interval : null,
      amount: null,
      createdAt: now,
      updatedAt: now,
    };
    await repos.subscriptions.insert(subscription);
    return subscription;
  }

  /** PATCH: metadata of an ACTIVE subscription. A SCHEDULED subscription needs an interval. */
  async update(accountId: string, id: string, input: UpdateSubscriptionInput): Promise<Subscription> {
    return this.transition(accountId, id, 'update', (current) => {
      const interval = input.type === 'UNSCHEDULED' ? null : input.interval === undefined ? current.interval : input.interval;
      if (input.type === 'SCHEDULED' && !interval) throw fieldError('interval', 'required', 'is required for a SCHEDULED subscription');
      return {
        amount: input.amount,
        type: input.type,
        interval,
        ...(input.expiryDate === undefined ? {} : { expiryDate: input.expiryDate }),
      };
    });
  }

  /** DELETE: → DISABLED. No new payments; existing transactions keep their lifecycle. */
  async disable(accountId: string, id: string): Promise<Subscription> {
    return this.transition(accountId, id, 'disable', () => ({ statusReason: 'DISABLED_BY_MERCHANT' }));
  }

  /**
   * Daily sweep (subscriptions.jobs.ts): every live subscription whose card expired before today
   * on the service clock becomes INVALID with PAYMENT_METHOD_EXPIRED, one commit per payment method.
   */
  async invalidateExpiredPaymentMethods(batchSize = 500): Promise<number> {
    const today = new Date(this.deps.clock.now()).toISOString().slice(0, 10);
    let total = 0;
    for (;;) {
      const batch = await this.deps.subscriptions.listLiveWithPaymentMethodExpiredBefore(today, batchSize);
      let changed = 0;
      for (const s of batch) {
        changed += await this.deps.transaction((repos) => this.deps.cards.invalidate(repos, s.accountId, s.paymentMethodId, 'PAYMENT_METHOD_EXPIRED'));
      }
      total += changed;
      // Nothing moved (every row changed concurrently): stop rather than read the same rows again.
      if (batch.length < batchSize || changed === 0) return total;
    }
  }

  /**
   * One state change through the transition table, as a conditional update (only while the
   * state is still the one read), so that a concurrent change is never overwritten silently.
   */
  private async transition(
    accountId: string,
    id: string,
    action: SubscriptionAction,
    changesFor: (current: Subscription) => SubscriptionChanges,
  ): Promise<Subscription> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await this.deps.transaction(async (repos) => {
        const current = await repos.subscriptions.findById(accountId, id);
        if (!current) throw notFound('subscription');
        const next = nextSubscriptionState(current.state, action);
        if (!next) {
          throw fieldError('subscriptionId', 'in:ACTIVE', `the subscription is ${current.state}; ${action} needs an ACTIVE subscription`);
        }
        if (action === 'disable' && current.state === 'DISABLED') return current;
        const changes: SubscriptionChanges = { ...changesFor(current), state: next, updatedAt: this.deps.clock.nowIso() };
        if (!(await repos.subscriptions.updateIfState(accountId, id, current.state, changes))) return null;
        const updated = (await repos.subscriptions.findById(accountId, id))!;
        if (action === 'disable') await repos.events?.append(accountId, 'subscription.disabled.v1', { subscription: subscriptionWire(updated) });
        return updated;
      });
      if (result) return result;
    }
    throw new AppError('CONFLICT', 'The subscription was changed concurrently; retry the request.');
  }

  /** A live subscription whose payment method is gone or expired becomes INVALID now (read, charge). */
  private async invalidateIfUnusable(subscription: Subscription, paymentMethod: PaymentMethod | null): Promise<Subscription> {
    if (!nextSubscriptionState(subscription.state, 'invalidate')) return subscription;
    const reason: PaymentMethodUnusable | null = paymentMethodUnusable(paymentMethod, this.deps.clock.now());
    if (!reason) return subscription;
    await this.deps.transaction((repos) => this.deps.cards.invalidate(repos, subscription.accountId, subscription.paymentMethodId, reason));
    return (await this.deps.subscriptions.findById(subscription.accountId, subscription.id)) ?? subscription;
  }

  private async viewOf(found: Subscription): Promise<SubscriptionView> {
    const pm = await this.deps.paymentMethods.find(found.accountId, found.paymentMethodId, true);
    const subscription = await this.invalidateIfUnusable(found, pm);
    return { subscription: subscriptionWire(subscription), paymentMethod: pm && !pm.deletedAt ? paymentMethodWire(pm) : null };
  }
}
