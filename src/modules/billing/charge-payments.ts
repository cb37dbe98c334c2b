/**
 * ChargePayments over the shared payment pipeline: an attempt of a charge is an MIT
 * authorization on the agreement's subscription, submitted like POST /mit (PENDING, driven by
 * the pipeline's job) with billingAgreementChargeId set and the charge's writes in its commit.
 * Charges send no callback: their outcome is reported by the charge-* webhook events.
 */
import { fieldError } from '../../shared/errors.js';
import type { Chargeable } from '../subscriptions/subscriptions.repository.js';
import type { PaymentRequest, PipelineRepos } from '../transactions/payment-engine.js';
import type { Transaction } from '../transactions/transaction.js';
import type { BillingRepos, ChargeAttemptInput, ChargePayments } from './billing.ports.js';

export interface PipelineChargePaymentsDeps<R extends PipelineRepos & BillingRepos> {
  /** The subscription with its payment method and point of sale, in one read (as a MIT reads it). */
  subscriptions: { requireChargeable(accountId: string, subscriptionId: string): Promise<Chargeable> };
  payments: { submit(request: PaymentRequest<R>): Promise<Transaction> };
}

export class PipelineChargePayments<R extends PipelineRepos & BillingRepos> implements ChargePayments<R> {
  constructor(private readonly deps: PipelineChargePaymentsDeps<R>) {}

  async submitAttempt(input: ChargeAttemptInput, inCommit: (repos: R, transactionId: string) => Promise<void>): Promise<string> {
    const { subscription, paymentMethod, pointOfSale, sealed } = await this.deps.subscriptions.requireChargeable(input.accountId, input.subscriptionId);
    if (!pointOfSale) throw fieldError('subscriptionId', 'in:ACTIVE', 'the point of sale of this subscription no longer exists');
    const transaction = await this.deps.payments.submit({
      accountId: input.accountId,
      pointOfSaleId: subscription.pointOfSaleId,
      flow: 'MIT',
      type: 'PAYMENT',
      operation: 'AUTHORIZATION',
      amount: input.amount,
      currency: input.currency,
      paymentMethod,
      reference: input.reference,
      notificationUrl: null,
      customerId: subscription.customerId,
      instantCapture: input.instantCapture,
      // No SCA on a merchant-initiated payment: the customer is not present.
      scaMode: null,
      exemptions: null,
      descriptor: pointOfSale.descriptor,
      subscriptionId: subscription.id,
      billingAgreementChargeId: input.billingAgreementChargeId,
      // The drive needs nothing else: handed to this process's runner, it reads nothing.
      driveRead: { subscription, panSealed: sealed.pan, webhookAuthenticationSealed: sealed.webhookAuthentication },
      // The attempt's final answer moves its charge in the same commit (billing.module: attemptFinished).
      effects: 'BILLING_CHARGE',
      inCommit: (repos, tx) => inCommit(repos, tx.id),
    });
    return transaction.id;
  }
}
