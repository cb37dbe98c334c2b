/**
 * MOTO: a card-not-present authorization with the card typed in by the merchant. The card is
 * validated, stored sealed (later captures and refunds need it), authorized synchronously
 * through the payment pipeline, and the NotificationWebhook is the answer.
 */
import type { Static } from '@sinclair/typebox';
import type { Effect } from '../../shared/effect.js';
import { EXISTING, FieldErrorCollector } from '../../shared/errors.js';
import type { PaymentMethodsService } from '../payment-methods/payment-methods.service.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { PaymentRequest } from '../transactions/payment-engine.js';
import type { Transaction } from '../transactions/transaction.js';
import type { NotificationReader, NotificationWebhook } from '../transactions/notification.js';
import type { MotoBody } from './moto.schemas.js';

export interface CallbackUrlChecker {
  /** 422 on `field` unless the URL may receive callbacks for this domain. */
  check(field: string, url: string, domain: string): Promise<void>;
}

export interface MotoDeps {
  pointsOfSale: { find(accountId: string, id: string): Promise<PointOfSale | null> };
  paymentMethods: PaymentMethodsService;
  payments: {
    authorize(request: PaymentRequest): Promise<Transaction>;
    recover(accountId: string, effect: Effect | null): Promise<Transaction | null>;
  };
  notifications: NotificationReader;
  urlPolicy: CallbackUrlChecker;
}

export class MotoService {
  constructor(private readonly deps: MotoDeps) {}

  async authorize(accountId: string, body: Static<typeof MotoBody>, effect: Effect | null = null): Promise<NotificationWebhook> {
    // A retry after a crash: the card was stored and the payment created already.
    const recovered = await this.deps.payments.recover(accountId, effect);
    if (recovered) return this.deps.notifications.build(recovered);
    const { transaction: t, card } = body;
    const errors = new FieldErrorCollector();
    this.deps.paymentMethods.validateCard(card, 'card', errors);
    const pointOfSale = await this.deps.pointsOfSale.find(accountId, t.pointOfSaleId);
    if (!pointOfSale) errors.add('transaction.pointOfSaleId', EXISTING, 'is not a point of sale of this account');
    errors.throwIfAny();
    if (t.notificationUrl) await this.deps.urlPolicy.check('transaction.notificationUrl', t.notificationUrl, pointOfSale!.domain);

    const paymentMethod = await this.deps.paymentMethods.storeCard(accountId, { customerId: t.customerId ?? null, card }, 'card');
    const transaction = await this.deps.payments.authorize({
      accountId,
      pointOfSaleId: pointOfSale!.id,
      flow: 'MOTO',
      type: 'MOTO',
      operation: 'AUTHORIZATION',
      amount: t.amount,
      currency: t.currency,
      paymentMethod,
      // The typed-in card with its CVC goes to this one acquirer call; the CVC is never stored.
      instrument: this.deps.paymentMethods.cardInstrument(card),
      reference: t.reference,
      textOnStatement: t.textOnStatement,
      notificationUrl: t.notificationUrl,
      customerId: t.customerId,
      attributes: t.attributes,
      instantCapture: t.instantCapture ?? 'OFF',
      descriptor: pointOfSale!.descriptor,
      effect,
    });
    return this.deps.notifications.build(transaction);
  }
}
