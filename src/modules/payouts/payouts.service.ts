/**
 * Payouts: money to a cardholder's stored card, as a PAYOUT transaction with one PAYOUT
 * operation through the payment pipeline — asynchronous (callback) or synchronous (needs the
 * syncPayout approval, checked by the route).
 */
import type { Static } from '@sinclair/typebox';
import type { Effect } from '../../shared/effect.js';
import { EXISTING, FieldErrorCollector } from '../../shared/errors.js';
import { type OverloadSignal, refuseWhenOverloaded } from '../../shared/overload.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { CallbackUrlChecker } from '../moto/moto.service.js';
import type { PaymentRequest } from '../transactions/payment-engine.js';
import type { NotificationReader, NotificationWebhook } from '../transactions/notification.js';
import type { Transaction } from '../transactions/transaction.js';
import type { PayoutBody, SyncPayoutBody } from './payouts.schemas.js';

export interface PayoutsDeps {
  pointsOfSale: { find(accountId: string, id: string): Promise<PointOfSale | null> };
  paymentMethods: { find(accountId: string, id: string): Promise<PaymentMethod | null> };
  payments: { authorize(request: PaymentRequest): Promise<Transaction>; submit(request: PaymentRequest): Promise<Transaction> };
  notifications: NotificationReader;
  urlPolicy: CallbackUrlChecker;
  /** The backlog bound: while it is reached, an asynchronous payout is refused (503); a synchronous one is not asked. */
  overload: OverloadSignal;
}

type SyncInput = Static<typeof SyncPayoutBody>;

export class PayoutsService {
  constructor(private readonly deps: PayoutsDeps) {}

  /** Accepted: the PENDING transaction; the outcome is sent to notificationUrl. */
  async payout(accountId: string, body: Static<typeof PayoutBody>, effect: Effect | null = null): Promise<Transaction> {
    await refuseWhenOverloaded(this.deps.overload);
    const request = await this.request(accountId, body, body.notificationUrl);
    return this.deps.payments.submit({ ...request, effect });
  }

  async payoutSync(accountId: string, body: SyncInput, effect: Effect | null = null): Promise<NotificationWebhook> {
    const request = await this.request(accountId, body, null);
    return this.deps.notifications.build(await this.deps.payments.authorize({ ...request, effect }));
  }

  private async request(accountId: string, body: SyncInput, notificationUrl: string | null): Promise<PaymentRequest> {
    const errors = new FieldErrorCollector();
    const [pointOfSale, paymentMethod] = await Promise.all([
      this.deps.pointsOfSale.find(accountId, body.pointOfSaleId),
      this.deps.paymentMethods.find(accountId, body.paymentMethodId),
    ]);
    if (!pointOfSale) errors.add('pointOfSaleId', EXISTING, 'is not a point of sale of this account');
    if (!paymentMethod) errors.add('paymentMethodId', EXISTING, 'is not a stored payment method of this account');
    else if (paymentMethod.type !== 'CARD') errors.add('paymentMethodId', 'in:CARD', 'payouts go to cards only');
    errors.throwIfAny();
    if (notificationUrl) await this.deps.urlPolicy.check('notificationUrl', notificationUrl, pointOfSale!.domain);
    return {
      accountId,
      pointOfSaleId: pointOfSale!.id,
      flow: 'PAYOUT',
      type: 'PAYOUT',
      operation: 'PAYOUT',
      amount: body.amount,
      currency: body.currency,
      paymentMethod: paymentMethod!,
      reference: body.reference,
      textOnStatement: body.textOnStatement,
      notificationUrl,
      customerId: paymentMethod!.customerId,
      attributes: body.attributes,
      clientIp: body.customer?.ip ?? null,
      descriptor: pointOfSale!.descriptor,
    };
  }
}
