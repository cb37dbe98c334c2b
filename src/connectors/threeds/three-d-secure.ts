/**
 * The 3-D Secure port (INTERFACE §13): a 3DS Server that runs EMV 3-D Secure 2 browser flows for
 * the payment window. One implementation today, 3dsecure.io (`threedsecure-io.ts`); merchants
 * without a provider keep the simulated step of the sandbox acquirer.
 *
 * The port answers what the server said, never a decision about the payment: the decision table
 * (src/modules/sessions/three-d-secure-decision.ts) maps each answer to authorize, refuse or go on
 * without 3-D Secure. Messages keep the exact JSON text the server sent, because the acquirer gets
 * the ARes or RReq unchanged (3dsecure-io.md §4).
 */

/** The EMV versions this service speaks, highest first. 2.3.1 is left out: Clearhaus's raw form cannot carry its values ([INFERENCE] 3dsecure-io.md §4). */
export const SUPPORTED_VERSIONS = ['2.2.0', '2.1.0'] as const;

/** The fields of an ARes or RReq the service reads; the rest travels untouched in `raw`. */
export interface ThreeDSMessage {
  messageType: 'ARes' | 'RReq';
  messageVersion: string;
  threeDSServerTransID: string;
  transStatus: string | null;
  transStatusReason: string | null;
  eci: string | null;
  acsTransID: string | null;
  dsTransID: string | null;
  /** ARes with transStatus C: where the CReq is posted. */
  acsURL: string | null;
  /** RReq: why a challenge ended without a result (01 cancelled by the cardholder, …). */
  challengeCancel: string | null;
  /** Whether an authentication value came (never the value itself). */
  hasAuthenticationValue: boolean;
}

/** An EMV `Erro` message, or a failure of the call itself. */
export type ThreeDSFailure =
  | { kind: 'erro'; errorCode: string; errorComponent: string | null; errorDescription: string; errorDetail: string | null }
  /** No usable answer: unreachable, timed out, refused the API key, or answered something unreadable. */
  | { kind: 'unavailable'; reason: string };

export type VersioningResult =
  | {
      kind: 'card_range';
      threeDSServerTransID: string;
      /** The highest version the service, the ACS and the DS all support. */
      messageVersion: string;
      /** The ACS's 3DS Method page for that version; null: no 3DS Method (threeDSCompInd U). */
      threeDSMethodURL: string | null;
    }
  /** Erro 305 at /preauth: the card is in no directory server's range (no 3-D Secure for it). */
  | { kind: 'not_enrolled' }
  /** The card range supports none of SUPPORTED_VERSIONS. */
  | { kind: 'no_common_version' }
  | ThreeDSFailure;

export type MessageResult = { kind: 'message'; message: ThreeDSMessage; raw: string } | ThreeDSFailure;

export interface ThreeDSServer {
  readonly provider: ThreeDSProvider;
  /** `/preauth`: the card's range and a transaction id (80 s to use it). */
  versioning(apiKey: string, pan: string): Promise<VersioningResult>;
  /** `/auth`: the AReq in, the ARes (or an Erro) out. */
  authenticate(apiKey: string, areq: Record<string, unknown>): Promise<MessageResult>;
  /** `/postauth`: the RReq of a finished challenge. */
  challengeResult(apiKey: string, threeDSServerTransID: string): Promise<MessageResult>;
  close(): Promise<void>;
}

export const THREEDS_PROVIDERS = ['3dsecure.io'] as const;
export type ThreeDSProvider = (typeof THREEDS_PROVIDERS)[number];
