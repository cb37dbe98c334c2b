/**
 * The acquirer port. Every money movement goes through it; results are values, never exceptions:
 * approved, declined (with a code), pending (the acquirer will answer later) or timeout (unknown
 * outcome: NOT a decline — the caller keeps the record PROCESSING and asks again with `inquire`).
 * Implementations: the sandbox simulator (./simulator). Calls are made outside any DB transaction.
 */
import type { ExternalStatusCodes } from '../modules/transactions/transaction.js';

/** What the acquirer needs to know about the instrument. The PAN is opened from the vault just for the call. */
export type Instrument =
  | { kind: 'card'; pan: string; expiryMonth: number; expiryYear: number; cvc: string | null; holderName: string | null }
  | { kind: 'wallet'; paymentMethodType: string };

/** Why the money moves; decides simulator rules such as "every later MIT declined". */
export type Initiator = 'CIT' | 'MIT' | 'MOTO' | 'TERMINAL';

export interface ScaResult {
  rejected: boolean;
  type: string | null;
  verification: string | null;
}

export type AcquirerResult =
  | { outcome: 'approved'; acquirerReference: string; externalStatusCodes: ExternalStatusCodes; sca?: ScaResult }
  | { outcome: 'declined'; errorCode: string; message: string; externalStatusCodes: ExternalStatusCodes; sca?: ScaResult }
  | { outcome: 'pending'; acquirerReference: string; externalStatusCodes: ExternalStatusCodes }
  | { outcome: 'timeout' };

export interface AuthorizeRequest {
  /** Our transaction id: the acquirer's idempotency key for the authorization. */
  transactionId: string;
  /** 1 for the first try; a retry after a timeout sends the same transactionId with attempt + 1. */
  attempt: number;
  amount: number;
  currency: string;
  instrument: Instrument;
  initiator: Initiator;
  scaMode: string | null;
  /** An instant capture (physical SALE): authorization and capture in one. */
  capture: boolean;
}

export interface OperationRequest {
  transactionId: string;
  /** Our operation id: the acquirer's idempotency key for this operation. */
  operationId: string;
  attempt: number;
  amount: number;
  currency: string;
  instrument: Instrument;
}

export interface Acquirer {
  readonly name: string;
  authorize(request: AuthorizeRequest): Promise<AcquirerResult>;
  capture(request: OperationRequest): Promise<AcquirerResult>;
  refund(request: OperationRequest): Promise<AcquirerResult>;
  void(request: OperationRequest): Promise<AcquirerResult>;
  renew(request: OperationRequest): Promise<AcquirerResult>;
  payout(request: OperationRequest): Promise<AcquirerResult>;
}

export const noExternalCodes = (): ExternalStatusCodes => ({ terminal: null, acquirer: null, network: null, sca: null });
