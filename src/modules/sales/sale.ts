/**
 * An in-person sale on a card terminal: the terminal side of a transaction with flow 'SALE'.
 * The transaction carries the payment state (PENDING → PROCESSING → SUCCESS | FAILED); the
 * terminal sale carries where the device is, which decides what tap, abort and expiry may do.
 * Tap, abort and expiry race for the same sale; each claims it with a conditional update of
 * `stage` from the one stage the table allows, so exactly one of them wins.
 */
import type { TransactionErrorCode } from '../../shared/errors.js';
import type { TransactionEvent } from '../transactions/transaction.js';

export const SALE_STAGES = ['QUEUED', 'WAITING_FOR_CARD', 'CARD_PRESENTED', 'COMPLETED', 'ABORTED', 'EXPIRED'] as const;
export type SaleStage = (typeof SALE_STAGES)[number];

export type SaleEvent = 'dispatch' | 'tap' | 'complete' | 'abort' | 'expire';

/**
 * What the merchant asked of the terminal app with the sale (INTERFACE §11.6), kept with the
 * terminal side of the sale and shown by the sandbox's virtual terminal.
 */
export interface TerminalRequest {
  /** The terminal app shows no notifications of its own while the sale runs. */
  suppressAppNotifications: boolean;
  /** Milliseconds after the sale before the terminal switches back to `activityToResume`; null: the app's default. */
  switchBackTimeout: number | null;
  /** The app activity the terminal returns to after the sale; null: none. */
  activityToResume: string | null;
  /** Offer the card surcharge; null: the terminal's setting. */
  surcharge: boolean | null;
  /** Offer dynamic currency conversion; null: the terminal's setting. */
  dcc: boolean | null;
}

export const DEFAULT_TERMINAL_REQUEST: TerminalRequest = {
  suppressAppNotifications: false,
  switchBackTimeout: null,
  activityToResume: null,
  surcharge: null,
  dcc: null,
};

export interface TerminalSale {
  transactionId: string;
  accountId: string;
  terminalId: string;
  stage: SaleStage;
  request: TerminalRequest;
  dispatchedAt: string | null;
  /** When an untapped sale expires (service clock): dispatchedAt + the terminal timeout. */
  expiresAt: string | null;
  cardPresentedAt: string | null;
  endedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The transition table: stage × event → next stage, and the transaction event it causes
 * (null: the transaction is moved by someone else — the payment pipeline after a tap).
 */
export const SALE_TRANSITIONS: Record<SaleStage, Partial<Record<SaleEvent, { next: SaleStage; transaction: TransactionEvent | null }>>> = {
  // Created; the dispatch job has not reached the terminal yet.
  QUEUED: { dispatch: { next: 'WAITING_FOR_CARD', transaction: 'dispatch' } },
  // The terminal shows the amount and waits for a card.
  WAITING_FOR_CARD: {
    tap: { next: 'CARD_PRESENTED', transaction: null },
    abort: { next: 'ABORTED', transaction: 'abort' },
    expire: { next: 'EXPIRED', transaction: 'expire' },
  },
  // A card was presented: the payment pipeline owns the transaction until it is final.
  CARD_PRESENTED: { complete: { next: 'COMPLETED', transaction: null } },
  COMPLETED: {},
  ABORTED: {},
  EXPIRED: {},
};

export function saleTransition(stage: SaleStage, event: SaleEvent): { next: SaleStage; transaction: TransactionEvent | null } | null {
  return SALE_TRANSITIONS[stage][event] ?? null;
}

/** The stage an event must find the sale in (the `from` of its conditional claim). */
export function stageFor(event: SaleEvent): SaleStage {
  const from = SALE_STAGES.find((stage) => SALE_TRANSITIONS[stage][event]);
  if (!from) throw new Error(`no stage accepts ${event}`);
  return from;
}

/** The transaction errorCode a terminal-side ending leaves. */
export const ENDING_ERROR_CODES: Partial<Record<SaleEvent, TransactionErrorCode>> = {
  abort: 'MANUAL_ABORTED',
  expire: 'EXPIRED',
};

/** Why abort is refused in a stage (seed §4.1: after the tap, and before the sale reached the terminal). */
export const ABORT_REFUSALS: Record<SaleStage, string | null> = {
  QUEUED: 'The sale has not reached the terminal yet.',
  WAITING_FOR_CARD: null,
  CARD_PRESENTED: 'A card has already been presented on the terminal.',
  COMPLETED: 'The sale has already been paid or declined on the terminal.',
  ABORTED: 'The sale has already been aborted.',
  EXPIRED: 'The sale has already expired on the terminal.',
};

/** Default time a terminal waits for a card (service clock). */
export const DEFAULT_TERMINAL_TIMEOUT_MS = 2 * 60_000;
