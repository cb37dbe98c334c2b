import type { AcquirerCall } from '../../connectors/acquirer.js';

/**
 * A request to an acquirer that may not be repeated (INTERFACE §12.4), recorded in a commit of its
 * own before it goes out: whoever finds it later knows the request may have reached the acquirer.
 */
export interface AcquirerRequest {
  operationId: string;
  accountId: string;
  transactionId: string;
  acquirer: string;
  call: AcquirerCall;
  amount: number;
  currency: string;
  sentAt: string;
  /** When the outcome was found to be in doubt (no answer came, or none was recorded); null: not (yet). */
  inDoubtAt: string | null;
  inDoubtReason: string | null;
  /** The id the acquirer named in an answer that left the outcome in doubt. */
  acquirerReference: string | null;
  resolvedAt: string | null;
  resolution: InDoubtResolution | null;
}

/** What the operator found at the acquirer for a request in doubt. */
export type InDoubtResolution = 'SUCCEEDED' | 'FAILED';

export type NewAcquirerRequest = Pick<AcquirerRequest, 'operationId' | 'accountId' | 'transactionId' | 'acquirer' | 'call' | 'amount' | 'currency' | 'sentAt'>;

/** The card series a request names (its latest approved authorization), and when a claim on it is stale. */
export interface SeriesOfRequest {
  paymentMethodId: string;
  /** A claim made before this (ISO) belongs to a sender that stopped: it may be taken over. */
  staleBefore: string;
}

/** `reference`: the series' latest authorization, claimed for the request (null: another operation holds it, nothing written). */
export interface SendingInSeries {
  reference: string | null;
  /** False: a request was recorded before (it may be out already). */
  recorded: boolean;
}

export interface AcquirerRequestsRepository {
  /** Records that the request is about to go out; false (nothing written) when one was recorded before: it may be out already. */
  recordSending(request: NewAcquirerRequest): Promise<boolean>;
  /**
   * Claims the card's series for the request (one request per series on the wire) and, once
   * claimed, records it (as recordSending): one request per series on the wire.
   */
  recordSendingInSeries(request: NewAcquirerRequest, series: SeriesOfRequest): Promise<SendingInSeries>;
  find(operationId: string): Promise<AcquirerRequest | null>;
  /** The request provably never left (connection refused): forgotten, so that it may be sent. */
  forgetUnsent(operationId: string): Promise<void>;
  /** Marks the request in doubt (once: a later call keeps the first time and reason). */
  markInDoubt(operationId: string, reason: string, acquirerReference: string | null, at: string): Promise<void>;
  /** Records the operator's resolution of a request in doubt; false when it was not in doubt or was resolved before. */
  markResolved(operationId: string, resolution: InDoubtResolution, at: string): Promise<boolean>;
  /** Requests in doubt and not resolved, oldest first; of one account when given. */
  listInDoubt(limit: number, accountId?: string): Promise<AcquirerRequest[]>;
  /** Which of these operations are in doubt and not resolved yet. */
  unresolvedInDoubt(operationIds: readonly string[]): Promise<string[]>;
}
