/**
 * The payment window's 3-D Secure flow (INTERFACE §13), between the Pay button and the payment
 * engine: /preauth when the customer presses Pay, the 3DS Method's notification, the AReq with the
 * browser's fields, the challenge's CRes and the RReq. Each step answers what the window shows next;
 * the last one answers the decision (decision.ts) and the card, which the window hands to
 * SessionsService.pay. An attempt is correlated by the 3DS Server's transaction id and our attempt
 * id in URLs, never by cookies; it finishes once (a CRes posted twice authorizes nothing twice).
 */
import type { Clock } from '../../clock.js';
import type { AcquirerMerchantAccount } from '../../connectors/acquirer.js';
import type { ThreeDSFailure, ThreeDSServer } from '../../connectors/threeds/three-d-secure.js';
import type { Sealer } from '../../security/secret-box.js';
import { newId } from '../../shared/ids.js';
import type { AcquirerCredentials } from '../acquirer-agreements/acquirer-agreement.js';
import type { CardInput } from '../payment-methods/card.js';
import { type BrowserInfo, buildAReq, type MerchantAtAcquirer } from './areq.js';
import { decide, type ThreeDSDecision, type ThreeDSOutcome } from './decision.js';
import { METHOD_WAIT_MS, type ThreeDSAttempt, type ThreeDSStep } from './three-ds-attempt.js';
import type { ThreeDSAttemptsRepository } from './three-ds-attempts.repository.js';

/** The acquirer's view of the merchant, for the AReq (Clearhaus `GET /account`). */
export type AcquirerAccount = AcquirerMerchantAccount;

export interface ThreeDSecureDeps {
  attempts: ThreeDSAttemptsRepository;
  /** The 3DS Server of a provider (3dsecure.io); null: this deployment has none. */
  server: ThreeDSServer | null;
  agreements: { currentFor(accountId: string): Promise<AcquirerCredentials | null> };
  /** The merchant's account at its acquirer, or null when it cannot be read now. */
  acquirerAccount(credentials: AcquirerCredentials): Promise<AcquirerAccount | null>;
  sealer: Sealer;
  clock: Clock;
}

/** The URLs of this service the 3DS Server and the ACS are given. */
export interface FlowUrls {
  methodNotification(attemptId: string): string;
  challengeNotification: string;
  /** The merchant's website (threeDSRequestorURL). */
  requestor: string;
}

export interface PaymentToAuthenticate {
  accountId: string;
  sessionId: string;
  scaMode: string | null;
  amount: number;
  currency: string;
  card: CardInput;
}

export type Started =
  /** No 3-D Secure for this payment (no provider, SKIP): pay as without. */
  | { kind: 'none' }
  /** Decided at /preauth (not enrolled, no answer): pay with the decision. */
  | { kind: 'decided'; decision: ThreeDSDecision }
  /** The window runs the 3DS Method (when `methodData`), then posts the browser's fields. */
  | { kind: 'method'; attempt: ThreeDSAttempt; methodData: string | null };

export type Authenticated =
  | { kind: 'challenge'; acsUrl: string; creq: string; sessionData: string }
  | { kind: 'decided'; decision: ThreeDSDecision; card: CardInput; amount: number; sessionId: string; attemptId: string }
  /** Unknown, finished already, or of another session: nothing to do. */
  | { kind: 'gone' };

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** A base64url JSON object, padded or not (ACSs send both, 3dsecure-io.md §1.4, §1.6); null when it is not one. */
export function decodeBase64urlJson(value: string | undefined): Record<string, unknown> | null {
  if (!value || !/^[A-Za-z0-9_-]+={0,2}$/.test(value)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value.replace(/=+$/, ''), 'base64url').toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export class ThreeDSecureService {
  constructor(private readonly deps: ThreeDSecureDeps) {}

  /** Pay was pressed: /preauth, and what the window does next. */
  async start(payment: PaymentToAuthenticate, urls: FlowUrls): Promise<Started> {
    if (payment.scaMode === 'SKIP') return { kind: 'none' };
    const credentials = await this.deps.agreements.currentFor(payment.accountId);
    const provider = credentials?.threeDSecure;
    if (!credentials || !provider || !this.deps.server) return { kind: 'none' };
    const range = await this.deps.server.versioning(provider.apiKey, payment.card.number);
    if (range.kind === 'not_enrolled') return { kind: 'decided', decision: decide({ kind: 'not_enrolled' }, payment.scaMode) };
    if (range.kind !== 'card_range') return { kind: 'decided', decision: decide({ kind: 'no_result', reason: `preauth: ${range.kind}` }, payment.scaMode) };
    const now = this.deps.clock.nowIso();
    const attempt: ThreeDSAttempt = {
      id: newId(),
      accountId: payment.accountId,
      sessionId: payment.sessionId,
      threeDSServerTransID: range.threeDSServerTransID,
      messageVersion: range.messageVersion,
      methodUrl: range.threeDSMethodURL,
      state: 'METHOD',
      cardSealed: this.deps.sealer.seal(JSON.stringify(payment.card)),
      amount: payment.amount,
      acsUrl: null,
      acsTransId: null,
      methodCompletedAt: null,
      transactionId: null,
      steps: [
        { step: 'PREAUTH', at: now, status: null, detail: `version ${range.messageVersion}, ${range.threeDSMethodURL ? 'a 3DS Method' : 'no 3DS Method'}` },
      ],
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.attempts.insert(attempt);
    const methodData = attempt.methodUrl
      ? base64url({ threeDSServerTransID: attempt.threeDSServerTransID, threeDSMethodNotificationURL: urls.methodNotification(attempt.id) })
      : null;
    return { kind: 'method', attempt, methodData };
  }

  /** The ACS's 3DS Method notification: recorded when it came within METHOD_WAIT_MS of /preauth. */
  async methodCompleted(attemptId: string): Promise<void> {
    const attempt = await this.deps.attempts.find(attemptId);
    if (!attempt || attempt.state !== 'METHOD') return;
    if (this.deps.clock.now() - Date.parse(attempt.createdAt) > METHOD_WAIT_MS) return;
    await this.deps.attempts.markMethodCompleted(attempt.id, this.deps.clock.nowIso());
  }

  /** The browser's fields came (after the 3DS Method, or without one): the AReq, and what it answered. */
  async authenticate(
    attemptId: string,
    sessionId: string,
    scaMode: string | null,
    currency: string,
    browser: BrowserInfo,
    urls: FlowUrls,
  ): Promise<Authenticated> {
    const attempt = await this.deps.attempts.find(attemptId);
    if (!attempt || attempt.sessionId !== sessionId || attempt.state !== 'METHOD' || !attempt.cardSealed) return { kind: 'gone' };
    const card = this.openCard(attempt.cardSealed);
    const credentials = await this.deps.agreements.currentFor(attempt.accountId);
    const provider = credentials?.threeDSecure;
    const steps = [...attempt.steps];
    const finish = async (outcome: ThreeDSOutcome): Promise<Authenticated> => {
      const decision = decide(outcome, scaMode);
      const at = this.deps.clock.nowIso();
      if (!(await this.deps.attempts.finish(attempt.id, 'METHOD', [...steps, decisionStep(decision, outcome, at)], at))) return { kind: 'gone' };
      return { kind: 'decided', decision, card, amount: attempt.amount, sessionId: attempt.sessionId, attemptId: attempt.id };
    };
    if (!credentials || !provider || !this.deps.server) return finish({ kind: 'no_result', reason: 'the 3-D Secure provider is gone' });
    const account = await this.deps.acquirerAccount(credentials);
    const merchant = account && merchantFor(account, card.number);
    const completed = attempt.methodCompletedAt !== null && Date.parse(attempt.methodCompletedAt) - Date.parse(attempt.createdAt) <= METHOD_WAIT_MS;
    if (attempt.methodUrl)
      steps.push({
        step: 'METHOD',
        at: attempt.methodCompletedAt ?? this.deps.clock.nowIso(),
        status: completed ? 'Y' : 'N',
        detail: completed ? 'notified in time' : 'no notification within 10 s',
      });
    const areq =
      merchant &&
      buildAReq({
        threeDSServerTransID: attempt.threeDSServerTransID,
        messageVersion: attempt.messageVersion,
        threeDSCompInd: attempt.methodUrl ? (completed ? 'Y' : 'N') : 'U',
        scaMode,
        notificationURL: urls.challengeNotification,
        requestorURL: urls.requestor,
        card: { pan: card.number, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, holderName: card.holderName ?? null },
        amount: attempt.amount,
        currency,
        nowMs: this.deps.clock.now(),
        merchant,
        browser,
      });
    if (!areq) return finish({ kind: 'no_result', reason: 'no AReq: the merchant, currency or country is not known' });
    const answer = await this.deps.server.authenticate(provider.apiKey, areq);
    const answeredAt = this.deps.clock.nowIso();
    if (answer.kind !== 'message') {
      steps.push({ step: 'ARES', at: answeredAt, status: null, detail: failureText(answer) });
      return finish({ kind: 'no_result', reason: answer.kind });
    }
    const { message } = answer;
    steps.push({ step: 'ARES', at: answeredAt, status: message.transStatus, detail: message.transStatusReason ? `reason ${message.transStatusReason}` : null });
    if (message.transStatus === 'C' && message.acsURL) {
      steps.push({ step: 'CHALLENGE', at: answeredAt, status: null, detail: `ACS ${new URL(message.acsURL).origin}` });
      if (!(await this.deps.attempts.toChallenge(attempt.id, { acsUrl: message.acsURL, acsTransId: message.acsTransID }, steps, answeredAt)))
        return { kind: 'gone' };
      const creq = {
        threeDSServerTransID: message.threeDSServerTransID,
        acsTransID: message.acsTransID,
        messageType: 'CReq',
        messageVersion: message.messageVersion,
        challengeWindowSize: '05',
      };
      return { kind: 'challenge', acsUrl: message.acsURL, creq: base64url(creq), sessionData: Buffer.from(attempt.id, 'utf8').toString('base64url') };
    }
    if (!message.transStatus || message.transStatus === 'C' || message.transStatus === 'D') {
      return finish({ kind: 'no_result', reason: `ARes ${message.transStatus ?? 'without a status'}` });
    }
    return finish({ kind: 'message', messageType: 'ARes', transStatus: message.transStatus, raw: answer.raw });
  }

  /**
   * The ACS posted the CRes to our notification URL (through the customer's browser: not proof).
   * It names the attempt; the RReq fetched from the 3DS Server is the result.
   */
  async challengeCompleted(cres: string | undefined, scaModeOf: (sessionId: string) => Promise<string | null>): Promise<Authenticated> {
    const decoded = decodeBase64urlJson(cres);
    const id = typeof decoded?.threeDSServerTransID === 'string' ? decoded.threeDSServerTransID : null;
    const attempt = id ? await this.deps.attempts.findByServerTransId(id) : null;
    if (!attempt || attempt.state !== 'CHALLENGE' || !attempt.cardSealed) return { kind: 'gone' };
    const card = this.openCard(attempt.cardSealed);
    const scaMode = await scaModeOf(attempt.sessionId);
    const steps = [...attempt.steps];
    const result = await this.challengeOutcome(attempt, decoded);
    steps.push(result.step);
    const decision = decide(result.outcome, scaMode);
    const at = this.deps.clock.nowIso();
    if (!(await this.deps.attempts.finish(attempt.id, 'CHALLENGE', [...steps, decisionStep(decision, result.outcome, at)], at))) return { kind: 'gone' };
    return { kind: 'decided', decision, card, amount: attempt.amount, sessionId: attempt.sessionId, attemptId: attempt.id };
  }

  /** The payment the attempt led to: its timeline shows the steps. */
  linkTransaction(attemptId: string, transactionId: string): Promise<void> {
    return this.deps.attempts.linkTransaction(attemptId, transactionId);
  }

  /** The RReq of a challenge whose CRes came (the CRes only names it: it is not proof). */
  private async challengeOutcome(attempt: ThreeDSAttempt, cres: Record<string, unknown> | null): Promise<{ outcome: ThreeDSOutcome; step: ThreeDSStep }> {
    const at = this.deps.clock.nowIso();
    const none = (reason: string) => ({
      outcome: { kind: 'no_result', reason } as ThreeDSOutcome,
      step: { step: 'RREQ' as const, at, status: null, detail: reason },
    });
    if (cres?.acsTransID !== undefined && attempt.acsTransId !== null && cres.acsTransID !== attempt.acsTransId) return none('a CRes of another challenge');
    const credentials = await this.deps.agreements.currentFor(attempt.accountId);
    const provider = credentials?.threeDSecure;
    if (!provider || !this.deps.server) return none('the 3-D Secure provider is gone');
    const answer = await this.deps.server.challengeResult(provider.apiKey, attempt.threeDSServerTransID);
    if (answer.kind !== 'message') return none(failureText(answer));
    const { message } = answer;
    const status = message.transStatus;
    if (!status) return none('an RReq without a status');
    const detail = [message.transStatusReason && `reason ${message.transStatusReason}`, message.challengeCancel && `challengeCancel ${message.challengeCancel}`]
      .filter(Boolean)
      .join(', ');
    return {
      outcome: { kind: 'message', messageType: 'RReq', transStatus: status, raw: answer.raw },
      step: { step: 'RREQ', at, status, detail: detail || null },
    };
  }

  /** The card as typed, kept sealed between the steps. */
  private openCard(sealed: string): CardInput {
    return JSON.parse(this.deps.sealer.open(sealed)) as CardInput;
  }
}

/** A failed call in words: the Erro's code and description, or why nothing came. */
function failureText(failure: ThreeDSFailure): string {
  return failure.kind === 'erro' ? `Erro ${failure.errorCode}: ${failure.errorDescription}`.slice(0, 200) : failure.reason.slice(0, 200);
}

function decisionStep(decision: ThreeDSDecision, outcome: ThreeDSOutcome, at: string): ThreeDSStep {
  const why = outcome.kind === 'no_result' ? outcome.reason : outcome.kind === 'not_enrolled' ? 'not enrolled' : `transStatus ${outcome.transStatus}`;
  return decision.action === 'authorize'
    ? {
        step: 'DECISION',
        at,
        status: 'AUTHORIZE',
        detail: `${decision.authentication ? `with the ${decision.authentication.kind === 'ares' ? 'ARes' : 'RReq'}` : 'without 3-D Secure'} (${why})`,
      }
    : { step: 'DECISION', at, status: 'REFUSE', detail: `${decision.errorCode} (${why})` };
}

/** The acquirer's merchant as the AReq names it: the BIN of the card's scheme (Visa 4, Mastercard 2 and 5). */
function merchantFor(account: AcquirerAccount, pan: string): MerchantAtAcquirer | null {
  const bin = pan.startsWith('4') ? account.visaBin : /^[25]/.test(pan) ? account.mastercardBin : (account.visaBin ?? account.mastercardBin);
  if (!bin) return null;
  return { acquirerBin: bin, merchantId: account.merchantId, mcc: account.mcc, country: account.country, name: account.name };
}
