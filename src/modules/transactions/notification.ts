/**
 * The NotificationWebhook (INTERFACE §8): the callback body, and the response of MOTO and of the
 * synchronous payout. Built in this one place; the session, subscription and card sections come
 * from resolvers the owning modules plug in at composition (services.ts), so that this module
 * does not depend on them.
 */
import { Type } from '@sinclair/typebox';
import type { ScaResult } from '../../connectors/acquirer.js';
import { Nullable, StringEnum } from '../../shared/wire.js';
import type { CardObject } from '../payment-methods/card.js';
import type { PaymentMethod } from '../payment-methods/payment-method.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { CardRecord } from '../payment-methods/payment-methods.schemas.js';
import type { Operation, Transaction } from './transaction.js';
import { AcquirerAgreementRecord, AggregatesRecord, OperationRecord, transactionDetailWire, TransactionRecord } from './transactions.schemas.js';
import type { TransactionDetail, TransactionsService } from './transactions.service.js';
import type { TransactionsRepository } from './transactions.repository.js';

/** The `sca` of a payment where no strong customer authentication was tried (INTERFACE §11.1). */
export const NO_SCA = { rejected: false, type: 'UNKNOWN', verification: 'NONE' } as const;

export const SCA_TYPES = ['3DS', 'DELEGATED', 'UNKNOWN'] as const;
export const SCA_VERIFICATIONS = ['NONE', 'FRICTIONLESS', 'CHALLENGED', 'UNKNOWN'] as const;
export type ScaType = (typeof SCA_TYPES)[number];
export type ScaVerification = (typeof SCA_VERIFICATIONS)[number];

export const ScaRecord = Type.Object({
  rejected: Type.Boolean({ description: 'The authentication failed (the payment was refused by SCA).' }),
  type: StringEnum(SCA_TYPES),
  verification: StringEnum(SCA_VERIFICATIONS),
});

/** Spellings of transactions stored before INTERFACE §11.1 (`type` null or "CHALLENGE", `verification` null). */
const LEGACY_SCA_TYPES: Readonly<Record<string, ScaType>> = { CHALLENGE: '3DS', FRICTIONLESS: '3DS' };

/**
 * The NotificationWebhook `sca` of a transaction's stored result: always the object of §11.1,
 * `NO_SCA` when none ran; values of rows written before §11.1 read as their §11.1 names.
 */
export function scaWire(sca: ScaResult | null | undefined): { rejected: boolean; type: ScaType; verification: ScaVerification } {
  if (!sca) return { ...NO_SCA };
  const verification = (SCA_VERIFICATIONS as readonly string[]).includes(sca.verification ?? '') ? (sca.verification as ScaVerification) : 'NONE';
  const type =
    sca.type && (SCA_TYPES as readonly string[]).includes(sca.type)
      ? (sca.type as ScaType)
      : (LEGACY_SCA_TYPES[sca.type ?? ''] ?? (verification === 'NONE' ? 'UNKNOWN' : '3DS'));
  return { rejected: sca.rejected === true, type, verification };
}

export const NotificationWebhookRecord = Type.Object({
  transaction: TransactionRecord,
  aggregates: AggregatesRecord,
  operations: Type.Array(OperationRecord),
  acquirerAgreement: AcquirerAgreementRecord,
  session: Nullable(Type.Unknown({ description: 'The CIT session record, when the payment came from one.' })),
  subscription: Nullable(Type.Unknown({ description: 'The subscription record, when the payment belongs to one.' })),
  sca: ScaRecord,
  card: Nullable(CardRecord),
});

/** The masked card of the sandbox's 4111111111111111, as callbacks show it (INTERFACE §11.1). */
export const CARD_EXAMPLE = {
  pan: '41111111XXXX1111',
  expireMonth: '12',
  expireYear: '30',
  par: 'S0016003394DCDCA3ACB6D8B64A8F',
  Issuer: 'Sandbox Bank',
  Scheme: 'VISA',
  Country: 'DK',
  Segment: 'consumer',
  Funding: 'credit',
};

/** A NotificationWebhook example (no session, no subscription, no SCA) of a transaction and its operations. */
export function notificationExample(transaction: Record<string, unknown>, operations: Array<Record<string, unknown>>, aggregates: Record<string, number>) {
  return {
    transaction,
    aggregates: { authorized: 0, captured: 0, refunded: 0, voided: 0, remaining: 0, paidOut: 0, ...aggregates },
    operations,
    acquirerAgreement: { acquirer: 'sandbox', mcc: '5999' },
    session: null,
    subscription: null,
    sca: { ...NO_SCA },
    card: CARD_EXAMPLE,
  };
}

/** The NotificationWebhook as a route's response, with that route's examples. */
export const notificationResponse = (examples: unknown[]) => Type.Object(NotificationWebhookRecord.properties, { examples });

export interface NotificationSections {
  session: unknown;
  subscription: unknown;
  card: CardObject | null;
}

/** Pure: detail + sections → the wire document. */
export function notificationWebhook(detail: TransactionDetail, sections: NotificationSections) {
  const wire = transactionDetailWire(detail);
  // One literal, not the detail spread and added to: see docs/object-shapes.md.
  return {
    transaction: wire.transaction,
    aggregates: wire.aggregates,
    operations: wire.operations,
    acquirerAgreement: wire.acquirerAgreement,
    session: sections.session ?? null,
    subscription: sections.subscription ?? null,
    sca: scaWire(detail.transaction.sca),
    card: sections.card,
  };
}

export type NotificationWebhook = ReturnType<typeof notificationWebhook>;

/** What flows that answer with the document (MOTO, synchronous payout) need of the builder. */
export type NotificationReader = Pick<NotificationBuilder<never>, 'forTransaction'> & { build(transaction: Transaction): Promise<NotificationWebhook> };

/** `repos`: the repositories of the commit the body is built in (null: read outside any commit). */
type Resolver<T, R> = (transaction: Transaction, repos: R | null) => Promise<T | null>;

/** What the caller of `build` already read or decided: the builder does not read it again. */
export interface KnownSections {
  /** All of the transaction's operations. */
  operations?: Operation[];
  /** The transaction's payment method (null: it has none). */
  paymentMethod?: PaymentMethod | null;
  /** The transaction's subscription as it stands in the commit the body is built in (null: none). */
  subscription?: Subscription | null;
}

/** The sections other modules own, given at construction (services.ts): each reads, or renders one already read. */
export interface SectionSources<R> {
  /** The transaction's session as a wire record (sessions module). */
  session: Resolver<unknown, R>;
  /** The transaction's subscription as a wire record (subscriptions module): read, or of a known one. */
  subscription: Resolver<unknown, R>;
  subscriptionOf(subscription: Subscription): unknown;
  /** The masked card object of the transaction's payment method (payment-methods module): read, or of a known one. */
  card: Resolver<CardObject, R>;
  cardOf(paymentMethod: PaymentMethod | null): CardObject | null;
}

export class NotificationBuilder<R extends { transactions: TransactionsRepository } = { transactions: TransactionsRepository }> {
  constructor(
    private readonly transactions: TransactionsService,
    private readonly sections: SectionSources<R>,
  ) {}

  /**
   * The document; inside a commit (`repos`), read through that commit so it shows what the commit
   * wrote. `known`: what the caller already read (not read again).
   */
  async build(transaction: Transaction, repos: R | null = null, known: KnownSections = {}): Promise<NotificationWebhook> {
    const detail = await this.transactions.detailOf(transaction, repos?.transactions, known.operations);
    const [session, subscription, card] = await Promise.all([
      transaction.sessionId ? this.sections.session(transaction, repos) : null,
      !transaction.subscriptionId
        ? null
        : known.subscription !== undefined
          ? known.subscription && this.sections.subscriptionOf(known.subscription)
          : this.sections.subscription(transaction, repos),
      !transaction.paymentMethodId
        ? null
        : known.paymentMethod !== undefined
          ? this.sections.cardOf(known.paymentMethod)
          : this.sections.card(transaction, repos),
    ]);
    return notificationWebhook(detail, { session, subscription, card });
  }

  async forTransaction(accountId: string, transactionId: string): Promise<NotificationWebhook> {
    return this.build(await this.transactions.get(accountId, transactionId));
  }
}
