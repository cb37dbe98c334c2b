/**
 * The acquirer port (INTERFACE §12). Every money movement goes through a connector; results are
 * values, never exceptions:
 *   approved · declined (with a code) · pending (the acquirer answers later) ·
 *   not_sent  — the request provably never left (connection refused, DNS, TLS): safe to send again;
 *   in_doubt  — it may have reached the acquirer and no answer came (timeout, reset after sending,
 *               HTTP 5xx): the outcome is unknown. Whether the same call may then be sent again is
 *               the connector's to say (`isRepeatable`): the simulator answers a repeat as the first
 *               time; a real acquirer without idempotency keys (Clearhaus) may move the money twice.
 * Implementations: the sandbox simulator (./simulator), Clearhaus (./clearhaus). Calls are made
 * outside any DB transaction.
 */
import type { ExternalStatusCodes } from '../modules/transactions/transaction.js';

/** What the acquirer needs to know about the instrument. The PAN is opened from the vault just for the call. */
export type Instrument =
  | { kind: 'card'; pan: string; expiryMonth: number; expiryYear: number; cvc: string | null; holderName: string | null }
  | { kind: 'wallet'; paymentMethodType: string };

/** Why the money moves; decides simulator rules such as "every later MIT declined". */
export type Initiator = 'CIT' | 'MIT' | 'MOTO' | 'TERMINAL';

/** The calls of the port, by name (the engine's operation types map onto them). */
export type AcquirerCall = 'authorize' | 'capture' | 'refund' | 'void' | 'renew' | 'payout';

export interface ScaResult {
  rejected: boolean;
  type: string | null;
  verification: string | null;
}

export type AcquirerResult =
  | { outcome: 'approved'; acquirerReference: string; externalStatusCodes: ExternalStatusCodes; sca?: ScaResult }
  | { outcome: 'declined'; errorCode: string; message: string; externalStatusCodes: ExternalStatusCodes; sca?: ScaResult }
  | { outcome: 'pending'; acquirerReference: string; externalStatusCodes: ExternalStatusCodes }
  /** Provably never written to the acquirer: the same call may be made again. */
  | { outcome: 'not_sent'; reason: string }
  /**
   * May have reached the acquirer; no answer came. `acquirerReference`: the id the acquirer named
   * for it, if any (a Clearhaus 50000 answer carries one, which a void can release). `errorCode`:
   * what an authorization that is never repeated ends with (default ACQUIRER_TIMEOUT).
   */
  | { outcome: 'in_doubt'; reason: string; acquirerReference: string | null; errorCode?: string; externalStatusCodes?: ExternalStatusCodes };

/** The merchant's side of a call: what the account's acquirer agreement says (INTERFACE §12.1). */
export interface AgreementCredentials {
  /** The merchant's API key at the acquirer (opened from the vault for the call); null for the simulator. */
  apiKey: string | null;
  mcc: string;
  /** The agreement's default statement text, used when the payment's own does not qualify. */
  textOnStatement: string | null;
}

/**
 * A stored card's series (Clearhaus `series[]`): the first payment that stores it names the type;
 * every later merchant-initiated one references the latest approved authorization of the series.
 */
export type Series = { role: 'first'; type: 'recurring' | 'unscheduled' } | { role: 'subsequent'; previousId: string };

/** A 3-D Secure result for the acquirer (INTERFACE §13): the ARes (frictionless) or RReq (challenge), its exact JSON text. */
export interface ThreeDSAuthentication {
  kind: 'ares' | 'rreq';
  message: string;
}

export interface AuthorizeRequest {
  /** Our transaction id (Clearhaus `reference`). Not an idempotency key: acquirers such as Clearhaus have none. */
  transactionId: string;
  /** 1 for the first try; counts the tries of a repeatable call (the simulator's timeout card answers by it). */
  attempt: number;
  amount: number;
  currency: string;
  instrument: Instrument;
  initiator: Initiator;
  scaMode: string | null;
  /** An instant capture (physical SALE): authorization and capture in one. */
  capture: boolean;
  agreement: AgreementCredentials | null;
  textOnStatement: string | null;
  clientIp: string | null;
  /** Stored-card series; null when the card is neither stored now nor used from storage. */
  series: Series | null;
  /** The customer's 3-D Secure authentication from the payment window, sent unchanged; absent: none. */
  threeDSecure?: ThreeDSAuthentication | null;
}

export interface OperationRequest {
  transactionId: string;
  /** Our operation id. */
  operationId: string;
  attempt: number;
  amount: number;
  currency: string;
  instrument: Instrument;
  /** The acquirer's id of the transaction's authorization (captures, refunds and voids go against it); null for payouts. */
  authorizationReference: string | null;
  agreement: AgreementCredentials | null;
  textOnStatement: string | null;
}

export interface AcquirerMerchantAccount {
  /** As the acquirer writes it (Clearhaus: 15 digits, leading zeros kept). */
  merchantId: string;
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  mcc: string;
  visaBin: string | null;
  mastercardBin: string | null;
}

export interface Acquirer {
  readonly name: string;
  /**
   * Whether a call of this kind whose outcome is in doubt may be sent again. False means at most
   * once on the wire: the engine never repeats it, and an answer that never came stays in doubt.
   */
  isRepeatable(call: AcquirerCall): boolean;
  /** The longest one call may take before the connector gives up (ms): nobody presumes a sender lost before it. */
  readonly callTimeoutMs: number;
  /**
   * Whether stored-card payments are linked by series (Clearhaus `series[]`): the engine then sends
   * the first one as the start of a series and every merchant-initiated one with the latest approved
   * authorization of its card, and keeps that id on the payment method.
   */
  readonly seriesReferences: boolean;
  /** Whether a void may release part of an authorization; false (Clearhaus): a void releases all of what is left. */
  readonly partialVoids: boolean;
  /**
   * Whether an authorization may be voided once part of it was captured; false (Clearhaus, where it
   * is undocumented and refused): the engine releases the uncaptured rest in its books without a
   * request, and the issuer lets the hold lapse.
   */
  readonly voidsAfterCapture: boolean;
  /**
   * The merchant's account at the acquirer, for 3-D Secure's AReq (INTERFACE §13): merchant id, BINs,
   * MCC, country, name. Null when it cannot be read now. Absent: the acquirer has none (sandbox).
   */
  merchantAccount?(agreement: AgreementCredentials): Promise<AcquirerMerchantAccount | null>;
  authorize(request: AuthorizeRequest): Promise<AcquirerResult>;
  capture(request: OperationRequest): Promise<AcquirerResult>;
  refund(request: OperationRequest): Promise<AcquirerResult>;
  void(request: OperationRequest): Promise<AcquirerResult>;
  renew(request: OperationRequest): Promise<AcquirerResult>;
  payout(request: OperationRequest): Promise<AcquirerResult>;
  /**
   * Every connection slot is taken: a call now would wait for one. A job then gives its runner slot
   * back and comes again a little later, so a slow acquirer holds no worker another merchant needs.
   */
  busy?(): boolean;
  /** Requests it takes at once (CLEARHAUS_MAX_IN_FLIGHT); jobs beyond it come back later. Absent: no bound. */
  readonly capacity?: number;
  /** Releases its connections at shutdown (once the workers stopped). */
  close?(): Promise<void>;
}

export const noExternalCodes = (): ExternalStatusCodes => ({ terminal: null, acquirer: null, network: null, sca: null });
