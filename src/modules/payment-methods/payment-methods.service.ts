/**
 * The card vault and payment methods. `storeCard` validates and seals the card number; only
 * `instrumentFor` opens it again, for the acquirer call of the moment.
 *
 * API used by other modules: storeCard, storeWallet, instrumentFor, cardInstrument, get, find,
 * list, delete, validateCard; a deletion's and an account update's effects in their commit.
 *
 * Account updater (INTERFACE §11.4): a card enrolled with setAccountUpdates takes the issuer's new
 * expiry or reissued card (`applyAccountUpdate`, the sandbox's simulated issuer) at once; every
 * later payment reads the stored method, so it uses the new card.
 */
import { randomBytes } from 'node:crypto';
import type { Instrument } from '../../connectors/acquirer.js';
import type { Clock } from '../../clock.js';
import type { Sealer } from '../../security/secret-box.js';
import { AppError, FieldErrorCollector, fieldError, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { type CardInput, detectBrand, expiryDate, maskCardNumber, maskPan, storedBin, validateCard, validateExpiry } from './card.js';
import { type CardDetails, maskedNumber, type PaymentMethod, type PaymentMethodType } from './payment-method.js';
import type { CardUpdate, PaymentMethodsRepository } from './payment-methods.repository.js';

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

/** What a card's deletion or account update does besides, in the same commit (its subscriptions: CardSubscriptions). */
export interface CardChangeEffects {
  deleted(repos: PaymentMethodRepos, accountId: string, paymentMethodId: string): Promise<unknown>;
  updated(repos: PaymentMethodRepos, paymentMethod: PaymentMethod): Promise<unknown>;
}

/** The sandbox account updater's input: the issuer's new expiry, or the card it reissued (INTERFACE §11.4). */
export interface AccountUpdateInput {
  expiryMonth?: number | undefined;
  expiryYear?: number | undefined;
  card?: { number: string; expiryMonth: number; expiryYear: number; cvc?: string | null | undefined; holderName?: string | null | undefined } | undefined;
}

/** A logger for the start-up upgrade (pino's shape). */
export interface UpgradeLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

const UPGRADE_BATCH = 500;

export interface PaymentMethodsDeps {
  paymentMethods: PaymentMethodsRepository;
  sealer: Sealer;
  clock: Clock;
  /** One database transaction: a deletion or an account update with its effects. */
  transaction: <T>(fn: (repos: PaymentMethodRepos) => Promise<T>) => Promise<T>;
  effects: CardChangeEffects;
  /** Card numbers taken although they fail the Luhn check: the 3-D Secure sandbox's test cards, in sandbox mode only (INTERFACE §13). */
  luhnExempt?: ReadonlySet<string> | undefined;
}

export class PaymentMethodsService {
  constructor(private readonly deps: PaymentMethodsDeps) {}

  /** Adds card failures under `prefix` to `errors` (the caller throws them with its other fields). */
  validateCard(card: CardInput, prefix: string, errors: FieldErrorCollector): void {
    validateCard(card, prefix, this.deps.clock.now(), errors, { luhnExempt: this.deps.luhnExempt });
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
      displayText: maskCardNumber(number),
      holderName: input.card.holderName ?? null,
      customerId: input.customerId,
      accountUpdatesEnabled: false,
      createdAt: this.deps.clock.nowIso(),
      deletedAt: null,
      card: {
        bin: storedBin(number),
        last4: number.slice(-4),
        length: number.length,
        expiryMonth,
        expiryYear,
        scheme: brand.toUpperCase(),
        par: newPar(),
        issuer: 'Sandbox Bank',
        country: 'DK',
        segment: 'consumer',
        funding: 'credit',
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
      accountUpdatesEnabled: false,
      createdAt: this.deps.clock.nowIso(),
      deletedAt: null,
      card: null,
    };
    await this.deps.paymentMethods.insert(paymentMethod, null);
    return paymentMethod;
  }

  /**
   * The instrument for an acquirer call: the card number opened from the vault (no CVC: it is
   * never stored), or the wallet type. `sealed`: the method's sealed number, read with it (the
   * engine's drive read). Works on deleted methods too, for running transactions.
   */
  instrumentFor(paymentMethod: Pick<PaymentMethod, 'id' | 'type' | 'holderName' | 'card'>, sealed: string | null): Instrument {
    if (paymentMethod.type !== 'CARD' || !paymentMethod.card) return { kind: 'wallet', paymentMethodType: paymentMethod.type };
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

  /** DELETE: hidden from every read from now on, and its effects in the same commit. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.deps.transaction(async (repos) => {
      const deleted = await repos.paymentMethods.markDeleted(accountId, id, this.deps.clock.nowIso());
      if (!deleted) throw notFound('payment method');
      await this.deps.effects.deleted(repos, accountId, id);
    });
  }

  /**
   * POST /payment-methods/{id}/account-updates: enrols (or withdraws) a card in the account
   * updater. Cards only (422 on `enabled`); setting the current value again changes nothing.
   */
  async setAccountUpdates(accountId: string, id: string, enabled: boolean): Promise<PaymentMethod> {
    const found = await this.get(accountId, id);
    if (found.type !== 'CARD') throw fieldError('enabled', 'in:CARD', `account updates apply to card payment methods only, not ${found.type}`);
    if (found.accountUpdatesEnabled === enabled) return found;
    if (!(await this.deps.paymentMethods.setAccountUpdates(accountId, id, enabled))) throw notFound('payment method');
    return { ...found, accountUpdatesEnabled: enabled };
  }

  /**
   * The sandbox account updater (INTERFACE §11.4): the issuer's new expiry (`expiryMonth` and
   * `expiryYear`) or reissued card (`card`) replaces the stored one at once, number sealed as at
   * storing. Any merchant's live method (operator control); 404 when there is none, 409 when it is
   * not enrolled, 422 for a card or expiry the card rules refuse.
   */
  async applyAccountUpdate(id: string, input: AccountUpdateInput): Promise<PaymentMethod> {
    const update = this.checkedUpdate(input);
    const found = await this.deps.paymentMethods.findLiveByIdAnyAccount(id);
    if (!found) throw notFound('payment method');
    if (found.type !== 'CARD' || !found.card) throw new AppError('CONFLICT', 'The payment method is not a card; the account updater applies to cards only.');
    if (!found.accountUpdatesEnabled) {
      throw new AppError(
        'CONFLICT',
        'The payment method is not enrolled in account updates; it keeps its card. Enable them with POST /payment-methods/{id}/account-updates.',
      );
    }
    const card: CardDetails = update.number
      ? {
          ...found.card,
          bin: storedBin(update.number),
          last4: update.number.slice(-4),
          length: update.number.length,
          expiryMonth: update.expiryMonth,
          expiryYear: update.expiryYear,
          scheme: detectBrand(update.number).toUpperCase(),
        }
      : { ...found.card, expiryMonth: update.expiryMonth, expiryYear: update.expiryYear };
    const changes: CardUpdate = {
      subType: update.number ? detectBrand(update.number) : found.subType,
      expiry: expiryDate(update.expiryMonth, update.expiryYear),
      displayText: maskedNumber(card),
      holderName: update.holderName === undefined || update.holderName === null ? found.holderName : update.holderName,
      card,
      panSealed: update.number ? this.deps.sealer.seal(update.number) : null,
    };
    const updated: PaymentMethod = { ...found, ...changes, card };
    await this.deps.transaction(async (repos) => {
      // Conditional on the enrolment still holding: a concurrent withdrawal wins, and this answers 409.
      if (!(await repos.paymentMethods.applyCardUpdate(id, changes))) {
        throw new AppError('CONFLICT', 'The payment method is no longer enrolled in account updates (or was deleted meanwhile).');
      }
      await this.deps.effects.updated(repos, updated);
    });
    return updated;
  }

  /** The update's fields, checked as a card (422): one of `card` or both `expiryMonth` and `expiryYear`. */
  private checkedUpdate(input: AccountUpdateInput) {
    const errors = new FieldErrorCollector();
    const now = this.deps.clock.now();
    if (input.card) {
      validateCard(input.card, 'card', now, errors, { cvcOptional: true });
      errors.throwIfAny();
      const { number, expiryMonth, expiryYear, holderName } = input.card;
      return { number, expiryMonth, expiryYear, holderName };
    }
    if (input.expiryMonth === undefined) errors.add('expiryMonth', 'required', 'is required (or send the reissued card as `card`)');
    if (input.expiryYear === undefined) errors.add('expiryYear', 'required', 'is required (or send the reissued card as `card`)');
    errors.throwIfAny();
    const expiry = { expiryMonth: input.expiryMonth!, expiryYear: input.expiryYear! };
    validateExpiry(expiry, '', now, errors);
    errors.throwIfAny();
    return { number: null, ...expiry, holderName: undefined };
  }

  /**
   * Start-up upgrade of cards stored before INTERFACE §11.1: their rows kept a 6-digit BIN and the
   * display text "•••• 1111" (copied into their transactions). The first 8 digits are read from
   * the vault once and kept with the card's display data; the masked number replaces the old text
   * on the method and its transactions. Idempotent, batched; a no-op (one index probe per table)
   * once done. A number the vault cannot open keeps the 6 digits it has (still masked right).
   */
  async upgradeLegacyCards(log?: UpgradeLog): Promise<{ paymentMethods: number; transactions: number }> {
    const repo = this.deps.paymentMethods;
    let methods = 0;
    for (;;) {
      const batch = await repo.legacyCards(UPGRADE_BATCH);
      for (const row of batch) {
        let card = row.card;
        try {
          if (row.panSealed) {
            const number = this.deps.sealer.open(row.panSealed);
            card = { ...row.card, bin: storedBin(number) };
          }
        } catch (err) {
          log?.warn({ err, paymentMethodId: row.id }, 'stored card number could not be opened; its masked number shows 6 digits');
        }
        await repo.upgradeLegacyCard(row.id, card, maskPan(card.bin, card.last4, card.length));
        methods++;
      }
      if (batch.length < UPGRADE_BATCH) break;
    }
    let transactions = 0;
    for (;;) {
      const n = await repo.upgradeLegacyTransactions(UPGRADE_BATCH);
      transactions += n;
      if (n < UPGRADE_BATCH) break;
    }
    if (methods + transactions > 0)
      log?.info({ paymentMethods: methods, transactions }, 'stored cards upgraded to the masked number format of INTERFACE §11.1');
    return { paymentMethods: methods, transactions };
  }
}
