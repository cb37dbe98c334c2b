/**
 * What the 3DS fake remembers: one transaction per /preauth, bound to its PAN (card data, kept in
 * memory only), and the timers of shared/acquirers/3dsecure-io.md §1.9 read on the injected clock:
 * the id lives 80 s after /preauth, the CReq must come within 30 s of the ARes, a challenge screen
 * waits 10 min, and /postauth serves the RReq for 300 s.
 */
import crypto from 'node:crypto';
import type { ChallengeMode, ThreeDSCase } from './cases.js';
import type { Message, MessageVersion } from './wire.js';

export const PREAUTH_TTL_MS = 80_000;
export const CREQ_WINDOW_MS = 30_000;
export const CHALLENGE_SCREEN_MS = 10 * 60_000;
export const RREQ_TTL_MS = 300_000;

/**
 * issued       /preauth answered; the id waits for /auth (80 s)
 * refused      /auth used the id up and answered an Erro (validation, version, DS timeout)
 * frictionless /auth answered a final ARes (Y N A R I U)
 * challenge    /auth answered ARes C; waiting for the CReq (30 s)
 * challenging  the CReq was taken and the challenge page shown (manual, or abandoned)
 * completed    the challenge ended: the CRes was posted and the RReq is at /postauth (300 s)
 * erro-posted  the challenge ended with an Erro posted to notificationURL (no RReq)
 */
export type TransactionState = 'issued' | 'refused' | 'frictionless' | 'challenge' | 'challenging' | 'completed' | 'erro-posted';

export interface ChallengeRecord {
  mode: ChallengeMode;
  /** The decoded CReq, as sent. */
  creq: Message;
  creqAtMs: number;
  windowSize: string;
  /** The requestor's threeDSSessionData, echoed back. */
  sessionData?: string;
  /** How it ended: the button pressed on the manual page, or the automatic outcome. */
  decision?: 'Y' | 'N' | 'cancel' | 'timeout' | 'erro';
  /** The decoded CRes (or Erro) posted to notificationURL. */
  cres?: Message;
  /** The form the final page posted: `cres` and `threeDSSessionData`, and where to. */
  posted?: { action: string; fields: Record<string, string> };
}

export interface ThreeDSTransaction {
  threeDSServerTransID: string;
  /** The card number /preauth was called with (in memory only). */
  pan: string;
  case: ThreeDSCase;
  state: TransactionState;
  preauthAtMs: number;
  /** The threeDSMethodURL offered in the CRD (undefined for the no-method case). */
  methodURL?: string;
  /** Whether the fake ACS's 3DS Method page was served with valid threeDSMethodData for this transaction. */
  methodServed: boolean;
  /** Whether that page auto-posts to the notification URL (false in the timeout case: it never calls back). */
  methodPostedBack: boolean;
  methodNotificationURL?: string;
  /** When /auth reached this transaction (its id is then used up). */
  authAtMs?: number;
  /** The AReq exactly as received: its raw text and the parsed JSON. */
  areqRaw?: string;
  areq?: Message;
  /** The version of the ARes (that of the AReq). */
  messageVersion?: MessageVersion;
  ares?: Message;
  aresAtMs?: number;
  acsTransID?: string;
  dsTransID?: string;
  /** The Erro /auth answered. */
  erro?: Message;
  challenge?: ChallengeRecord;
  rreq?: Message;
  rreqAtMs?: number;
}

export class TransactionStore {
  private readonly byId = new Map<string, ThreeDSTransaction>();

  constructor(readonly now: () => number) {}

  issue(pan: string, threeDSCase: ThreeDSCase, methodURL: string | undefined): ThreeDSTransaction {
    const tx: ThreeDSTransaction = {
      threeDSServerTransID: crypto.randomUUID(),
      pan,
      case: threeDSCase,
      state: 'issued',
      preauthAtMs: this.now(),
      methodURL,
      methodServed: false,
      methodPostedBack: false,
    };
    this.byId.set(tx.threeDSServerTransID, tx);
    return tx;
  }

  get(id: string): ThreeDSTransaction | undefined {
    return this.byId.get(id.toLowerCase());
  }

  byAcsTransID(acsTransID: string): ThreeDSTransaction | undefined {
    const id = acsTransID.toLowerCase();
    for (const tx of this.byId.values()) if (tx.acsTransID === id) return tx;
    return undefined;
  }

  all(): ThreeDSTransaction[] {
    return [...this.byId.values()];
  }

  clear(): void {
    this.byId.clear();
  }

  /** More than 80 s since /preauth. */
  preauthExpired(tx: ThreeDSTransaction): boolean {
    return this.now() - tx.preauthAtMs > PREAUTH_TTL_MS;
  }

  /** More than 30 s since the ARes C. */
  creqLate(tx: ThreeDSTransaction): boolean {
    return tx.aresAtMs === undefined || this.now() - tx.aresAtMs > CREQ_WINDOW_MS;
  }

  /** More than 10 min since the challenge page was shown. */
  challengeScreenExpired(tx: ThreeDSTransaction): boolean {
    return tx.challenge !== undefined && this.now() - tx.challenge.creqAtMs > CHALLENGE_SCREEN_MS;
  }

  /** More than 300 s since the RReq. */
  rreqExpired(tx: ThreeDSTransaction): boolean {
    return tx.rreqAtMs !== undefined && this.now() - tx.rreqAtMs > RREQ_TTL_MS;
  }
}
