import type { CardDetails, CardSeries, PaymentMethod } from './payment-method.js';

/** What the account updater changes on a stored card (INTERFACE §11.4). */
export interface CardUpdate {
  subType: string | null;
  expiry: string;
  displayText: string;
  holderName: string | null;
  card: CardDetails;
  /** A reissued card's sealed number; null keeps the stored one (a new expiry only). */
  panSealed: string | null;
}

/** A card row stored before INTERFACE §11.1 (6-digit BIN, "•••• 1111"), with its sealed number for the upgrade. */
export interface LegacyCardRow {
  id: string;
  card: CardDetails;
  panSealed: string | null;
}

export interface PaymentMethodsRepository {
  /** `panSealed` is the vault's sealed card number (null for wallets). */
  insert(paymentMethod: PaymentMethod, panSealed: string | null): Promise<void>;
  /** Includes deleted rows when `withDeleted` (running transactions still need the instrument). */
  findById(accountId: string, id: string, withDeleted?: boolean): Promise<PaymentMethod | null>;
  /** Any account's live method by id: only for the operator's sandbox controls. */
  findLiveByIdAnyAccount(id: string): Promise<PaymentMethod | null>;
  list(accountId: string, customerId: string | null, offset: number, limit: number): Promise<{ items: PaymentMethod[]; total: number }>;
  /** Marks deleted; false when there was nothing (or nothing live) to delete. */
  markDeleted(accountId: string, id: string, at: string): Promise<boolean>;
  /** Sets the account-updater enrolment of a live CARD method; false when there is no such method. */
  setAccountUpdates(accountId: string, id: string, enabled: boolean): Promise<boolean>;
  /** Applies an account update to a live, enrolled card; false when it is not (or no longer) enrolled or live. */
  applyCardUpdate(id: string, update: CardUpdate): Promise<boolean>;
  /** Up to `limit` card rows still in the format before INTERFACE §11.1. */
  legacyCards(limit: number): Promise<LegacyCardRow[]>;
  /** Rewrites one legacy row's display data (8-digit BIN, masked display text). */
  upgradeLegacyCard(id: string, card: CardDetails, displayText: string): Promise<void>;
  /** Copies the upgraded display text into up to `limit` transactions that kept the old one; returns how many. */
  upgradeLegacyTransactions(limit: number): Promise<number>;
  /** The card's series at its acquirer, after an approved authorization of it (INTERFACE §12.3): deleted methods too. */
  /**
   * The card's series at its acquirer, after an approved authorization of it (INTERFACE §12.3):
   * deleted methods too. With `claimedBy`, only while that operation holds the series (AcquirerRequestsRepository.recordSendingInSeries),
   * which it then releases: an answer that came after its claim was taken over changes nothing.
   */
  recordSeries(accountId: string, id: string, series: CardSeries, claimedBy?: string): Promise<void>;
  /** Gives the series back when `operationId` holds it (its request was declined, in doubt or never sent). */
  releaseSeries(accountId: string, id: string, operationId: string): Promise<void>;
}
