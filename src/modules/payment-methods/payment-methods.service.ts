/**
 * The card vault and payment methods. `storeCard` validates and seals the card number; only
 * `instrumentFor` opens it again, for the acquirer call of the moment.
 *
 * API used by other modules: storeCard, storeWallet, instrumentFor, cardInstrument, get, find,
 * list, delete, validateCard.
 */
import { randomBytes } from 'node:crypto';
import type { Instrument } from '../../connectors/acquirer.js';
import type { Clock } from '../../clock.js';
import type { Sealer } from '../../security/secret-box.js';
import { FieldErrorCollector, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { type CardInput, cardDisplayText, detectBrand, expiryDate, validateCard } from './card.js';
import type { PaymentMethod, PaymentMethodType } from './payment-method.js';
import type { PaymentMethodsRepository } from './payment-methods.repository.js';

export const WALLET_TYPES = ['VIPPS_MOBILEPAY', 'APPLE_PAY', 'GOOGLE_PAY', 'KLARNA', 'VIABILL'] as const;
export type WalletType = (typeof WALLET_TYPES)[number];

const WALLET_NAMES: Record<WalletType, string> = {
  VIPPS_MOBILEPAY: 'Vipps MobilePay',
  APPLE_PAY: 'Apple Pay',
  GOOGLE_PAY: 'Google Pay',
  KLARNA: 'Klarna',
  VIABILL: 'ViaBill',
};

/** A Payment Account Reference (29 characters, EMVCo): random per stored card in the sandbox. */
const newPar = (): string => `S001${randomBytes(13).toString('hex').toUpperCase().slice(0, 25)}`;

/** Repositories a deletion needs in one commit (at runtime: the store's full set). */
export interface PaymentMethodRepos {
  paymentMethods: PaymentMethodsRepository;
}

/** Runs inside the commit that deletes a payment method (subscriptions on it become INVALID). */
export type DeletionListener = (repos: PaymentMethodRepos, accountId: string, paymentMethodId: string) => Promise<void>;

export interface PaymentMethodsDeps {
  paymentMethods: PaymentMethodsRepository;
  sealer: Sealer;
  clock: Clock;
  /** One database transaction; without it a deletion runs on the pool (no listeners can join it). */
  transaction?: <T>(fn: (repos: PaymentMethodRepos) => Promise<T>) => Promise<T>;
}

export class PaymentMethodsService {
  private readonly deletionListeners: DeletionListener[] = [];

  constructor(private readonly deps: PaymentMethodsDeps) {}

  /** Composition-time hook: `listener` runs in the deletion's commit (services.ts). */
  onDeleted(listener: DeletionListener): void {
    this.deletionListeners.push(listener);
  }

  /** Adds card failures under `prefix` to `errors` (the caller throws them with its other fields). */
  validateCard(card: CardInput, prefix: string, errors: FieldErrorCollector): void {
    validateCard(card, prefix, this.deps.clock.now(), errors);
  }

  /** Validates (422 under `prefix`), seals the number and stores the card. */
  async storeCard(accountId: string, input: { customerId: string | null; card: CardInput }, prefix = 'card'): Promise<PaymentMethod> {
    const errors = new FieldErrorCollector();
    this.validateCard(input.card, prefix, errors);
    errors.throwIfAny();
    const { number, expiryMonth, expiryYear } = input.card;
    const brand = detectBrand(number);
    const paymentMethod: PaymentMethod = {
      id: newId(),
      accountId,
      type: 'CARD',
      subType: brand,
      expiry: expiryDate(expiryMonth, expiryYear),
      displayText: cardDisplayText(number.slice(-4)),
      holderName: input.card.holderName ?? null,
      customerId: input.customerId,
      createdAt: this.deps.clock.nowIso(),
      deletedAt: null,
      card: {
        bin: number.slice(0, 6),
        last4: number.slice(-4),
        length: number.length,
        expiryMonth,
        expiryYear,
        scheme: brand.toUpperCase(),
        par: newPar(),
        issuer: 'Sandbox Bank',
        country: 'DK',
        segment: 'CONSUMER',
        funding: 'CREDIT',
      },
    };
    await this.deps.paymentMethods.insert(paymentMethod, this.deps.sealer.seal(number));
    return paymentMethod;
  }

  async storeWallet(accountId: string, input: { customerId: string | null; type: WalletType }): Promise<PaymentMethod> {
    const paymentMethod: PaymentMethod = {
      id: newId(),
      accountId,
      type: input.type as PaymentMethodType,
      subType: input.type,
      expiry: null,
      displayText: WALLET_NAMES[input.type],
      holderName: null,
      customerId: input.customerId,
      createdAt: this.deps.clock.nowIso(),
      deletedAt: null,
      card: null,
    };
    await this.deps.paymentMethods.insert(paymentMethod, null);
    return paymentMethod;
  }

  /**
   * The instrument for an acquirer call: the card number opened from the vault (no CVC: it is
   * never stored), or the wallet type. Works on deleted methods too, for running transactions.
   */
  /** The instrument of a stored method by id, read once with its sealed number; null when there is no such method. */
  async instrumentById(accountId: string, id: string): Promise<Instrument | null> {
    const found = await this.deps.paymentMethods.findWithSealedPan(accountId, id);
    return found ? this.instrumentFor(found.paymentMethod, found.panSealed) : null;
  }

  /** `sealed`: the sealed number when the caller already read it (else it is read here). */
  async instrumentFor(paymentMethod: Pick<PaymentMethod, 'id' | 'type' | 'holderName' | 'card'>, sealedPan?: string | null): Promise<Instrument> {
    if (paymentMethod.type !== 'CARD' || !paymentMethod.card) return { kind: 'wallet', paymentMethodType: paymentMethod.type };
    const sealed = sealedPan ?? (await this.deps.paymentMethods.sealedPan(paymentMethod.id));
    if (!sealed) throw new Error(`payment method ${paymentMethod.id} has no card number in the vault`);
    return {
      kind: 'card',
      pan: this.deps.sealer.open(sealed),
      expiryMonth: paymentMethod.card.expiryMonth,
      expiryYear: paymentMethod.card.expiryYear,
      cvc: null,
      holderName: paymentMethod.holderName,
    };
  }

  /** The instrument straight from a card the customer just gave (with its CVC, for this one call). */
  cardInstrument(card: CardInput): Instrument {
    return {
      kind: 'card',
      pan: card.number,
      expiryMonth: card.expiryMonth,
      expiryYear: card.expiryYear,
      cvc: card.cvc,
      holderName: card.holderName ?? null,
    };
  }

  async get(accountId: string, id: string): Promise<PaymentMethod> {
    const found = await this.deps.paymentMethods.findById(accountId, id);
    if (!found) throw notFound('payment method');
    return found;
  }

  /** Null instead of 404; `withDeleted` for work on existing transactions. */
  find(accountId: string, id: string, withDeleted = false): Promise<PaymentMethod | null> {
    return this.deps.paymentMethods.findById(accountId, id, withDeleted);
  }

  list(accountId: string, customerId: string | null, page: { offset: number; limit: number }) {
    return this.deps.paymentMethods.list(accountId, customerId, page.offset, page.limit);
  }

  /** DELETE: hidden from every read from now on, and the listeners' effects in the same commit. */
  async delete(accountId: string, id: string): Promise<void> {
    const run = this.deps.transaction ?? ((fn) => fn({ paymentMethods: this.deps.paymentMethods }));
    await run(async (repos) => {
      const deleted = await repos.paymentMethods.markDeleted(accountId, id, this.deps.clock.nowIso());
      if (!deleted) throw notFound('payment method');
      for (const listener of this.deletionListeners) await listener(repos, accountId, id);
    });
  }
}
