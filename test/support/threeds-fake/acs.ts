/**
 * The fake issuer ACS: the pages a browser posts to (shared/acquirers/3dsecure-io.md §1.4, §1.6,
 * §2.5; §5 items 10–14, 20–25). They take browser form POSTs, need no API key, and refuse what is
 * wrong with HTTP 400 and an Erro (errorComponent A) that names the element, so that a test sees
 * why.
 *
 *   POST /acs/3dsmethod          form threeDSMethodData = base64url (no padding) of
 *                                {threeDSServerTransID (issued, < 80 s, card with a method URL,
 *                                before /auth), threeDSMethodNotificationURL (https or loopback http,
 *                                ≤ 256)}. Answers a page that auto-posts threeDSMethodData =
 *                                base64url({"threeDSServerTransID": …}) to the notification URL,
 *                                or, when the card's method times out, a page that never posts.
 *   POST /acs/challenge          form creq = base64url (no padding) CReq {messageType CReq,
 *                                messageVersion of the ARes, threeDSServerTransID and acsTransID of
 *                                an ARes C (dsTransID, if sent, the ARes's), challengeWindowSize
 *                                01–05}, within 30 s of the ARes, once; optional threeDSSessionData
 *                                (1–1024 base64url characters, echoed). Answers per challenge mode:
 *                                pass / fail / cancel auto-post cres (+ threeDSSessionData) to the
 *                                AReq's notificationURL; cres-mismatch posts a CRes Y while the
 *                                RReq says N (the RReq must win, §5 item 29); manual shows a page
 *                                with three buttons;
 *                                erro auto-posts an Erro as `cres` [INFERENCE: the field name];
 *                                abandon shows a page that never posts.
 *   POST /acs/challenge/manual   the manual page's buttons: acsTransID, outcome Y | N | cancel.
 *                                After 10 min on the page the challenge has timed out (RReq N,
 *                                challengeCancel 04).
 *
 * What the fake can observe of the 3DS Method: that its page was served for a transaction (and
 * whether that page posts back), not whether the browser then delivered the notification to the
 * requestor. /auth's threeDSCompInd check rests on that (api.ts).
 */
import type { ChallengeMode } from './cases.js';
import { type ChallengeResult, cres, rreq } from './messages.js';
import type { ThreeDSTransaction, TransactionStore } from './state.js';
import {
  autoPostPage,
  choicePage,
  decodeBase64urlJson,
  encodeBase64urlJson,
  type ErrorCode,
  erroMessage,
  htmlReply,
  jsonReply,
  type Message,
  Refusal,
  type Reply,
  silentPage,
  urlProblem,
  UUID,
} from './wire.js';

export const ACS_PATHS = { method: '/acs/3dsmethod', challenge: '/acs/challenge', manual: '/acs/challenge/manual' } as const;

export interface AcsContext {
  store: TransactionStore;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Pad the base64url the ACS posts back (threeDSMethodData, cres), to test the receiver's tolerance. */
  padNotifications: boolean;
  /** The key of the method notification's JSON (§1.4: the sandbox's sample used `threeDSMethodData`). */
  methodNotificationKey: 'threeDSServerTransID' | 'threeDSMethodData';
  /** How the challenge of this transaction ends: a mode set for its PAN, else the case's 4th digit. */
  challengeMode(tx: ThreeDSTransaction): ChallengeMode;
}

export interface AcsAnswer {
  reply: Reply;
  threeDSServerTransID?: string;
}

const refusal = (code: ErrorCode, field: string, reason: string) => new Refusal(code, field, { component: 'A', reason });

function uuidField(data: Message, field: string): string {
  const value = data[field];
  if (value === undefined) throw refusal('201', field, `${field} is required`);
  if (typeof value !== 'string' || !UUID.test(value)) throw refusal('203', field, `${field} must be a UUID`);
  return value.toLowerCase();
}

function refused(err: unknown, tx: ThreeDSTransaction | undefined, errorMessageType?: string): AcsAnswer {
  if (!(err instanceof Refusal)) throw err;
  const body = erroMessage(err, {
    messageVersion: tx?.messageVersion,
    threeDSServerTransID: tx?.threeDSServerTransID,
    acsTransID: tx?.acsTransID,
    errorMessageType,
  });
  return { reply: jsonReply(400, body), threeDSServerTransID: tx?.threeDSServerTransID };
}

/** §1.4: the 3DS Method page. */
export function methodPage(ctx: AcsContext, form: Record<string, string>): AcsAnswer {
  let tx: ThreeDSTransaction | undefined;
  try {
    const data = decodeBase64urlJson('threeDSMethodData', form.threeDSMethodData);
    const id = uuidField(data, 'threeDSServerTransID');
    const found = ctx.store.get(id);
    if (!found) throw refusal('301', 'threeDSServerTransID', 'threeDSServerTransID was not issued by /preauth');
    tx = found;
    if (ctx.store.preauthExpired(tx)) throw refusal('301', 'threeDSServerTransID', 'threeDSServerTransID expired: /preauth was more than 80 s ago');
    if (tx.case.method === 'absent') throw refusal('305', 'threeDSServerTransID', 'no threeDSMethodURL was offered for this card');
    if (tx.authAtMs !== undefined) throw refusal('305', 'threeDSServerTransID', 'the AReq was already sent: the 3DS Method runs before /auth');
    const notificationURL = data.threeDSMethodNotificationURL;
    if (notificationURL === undefined) throw refusal('201', 'threeDSMethodNotificationURL', 'threeDSMethodNotificationURL is required');
    if (typeof notificationURL !== 'string') throw refusal('203', 'threeDSMethodNotificationURL', 'threeDSMethodNotificationURL must be a string');
    const problem = urlProblem(notificationURL, 256);
    if (problem) throw refusal('203', 'threeDSMethodNotificationURL', `threeDSMethodNotificationURL ${problem}`);

    tx.methodServed = true;
    tx.methodNotificationURL = notificationURL;
    if (tx.case.method === 'timeout') {
      tx.methodPostedBack = false;
      return { reply: htmlReply(silentPage('3DS Method', 'Collecting browser data…')), threeDSServerTransID: tx.threeDSServerTransID };
    }
    tx.methodPostedBack = true;
    const threeDSMethodData = encodeBase64urlJson({ [ctx.methodNotificationKey]: tx.threeDSServerTransID }, ctx.padNotifications);
    return { reply: htmlReply(autoPostPage('3DS Method', notificationURL, { threeDSMethodData })), threeDSServerTransID: tx.threeDSServerTransID };
  } catch (err) {
    return refused(err, tx);
  }
}

const notificationURLOf = (tx: ThreeDSTransaction) => tx.areq!.notificationURL as string;

/** The end of a challenge: the RReq is stored for /postauth and the CRes auto-posted to notificationURL. */
function finish(
  ctx: AcsContext,
  tx: ThreeDSTransaction,
  decision: 'Y' | 'N' | 'cancel' | 'timeout',
  interactionCounter: string,
  cresStatus?: 'Y' | 'N',
): AcsAnswer {
  const challenge = tx.challenge!;
  const result: ChallengeResult =
    decision === 'Y'
      ? { transStatus: 'Y', interactionCounter }
      : decision === 'N'
        ? { transStatus: 'N', transStatusReason: '01', interactionCounter }
        : decision === 'cancel'
          ? { transStatus: 'N', transStatusReason: '26', challengeCancel: '01', interactionCounter }
          : { transStatus: 'N', transStatusReason: '14', challengeCancel: '04', interactionCounter };
  tx.rreq = rreq(tx, result);
  tx.rreqAtMs = ctx.store.now();
  tx.state = 'completed';
  challenge.decision = decision;
  challenge.cres = cres(tx, cresStatus ?? result.transStatus);
  return post(ctx, tx, challenge.cres, 'Challenge complete');
}

function post(ctx: AcsContext, tx: ThreeDSTransaction, body: Message, title: string): AcsAnswer {
  const challenge = tx.challenge!;
  const fields: Record<string, string> = { cres: encodeBase64urlJson(body, ctx.padNotifications) };
  if (challenge.sessionData !== undefined) fields.threeDSSessionData = challenge.sessionData;
  challenge.posted = { action: notificationURLOf(tx), fields };
  return { reply: htmlReply(autoPostPage(title, notificationURLOf(tx), fields)), threeDSServerTransID: tx.threeDSServerTransID };
}

function manualPage(ctx: AcsContext, tx: ThreeDSTransaction): AcsAnswer {
  const areq = tx.areq!;
  const intro =
    `Fake issuer ACS (a stand-in for the 3dsecure.io sandbox). Merchant: ${String(areq.merchantName ?? '')}. ` +
    `Amount: ${String(areq.purchaseAmount ?? '')} in minor units of currency ${String(areq.purchaseCurrency ?? '')}.`;
  const html = choicePage('Authenticate this purchase', intro, `${ctx.origin}${ACS_PATHS.manual}`, { acsTransID: tx.acsTransID! }, [
    { name: 'outcome', value: 'Y', label: 'Authenticate' },
    { name: 'outcome', value: 'N', label: 'Fail authentication' },
    { name: 'outcome', value: 'cancel', label: 'Cancel' },
  ]);
  return { reply: htmlReply(html), threeDSServerTransID: tx.threeDSServerTransID };
}

/** §1.6: the challenge page, posted the CReq. */
export function challengePage(ctx: AcsContext, form: Record<string, string>): AcsAnswer {
  let tx: ThreeDSTransaction | undefined;
  try {
    const sessionData = form.threeDSSessionData;
    if (sessionData !== undefined && !/^[A-Za-z0-9_-]{1,1024}$/.test(sessionData)) {
      throw refusal('203', 'threeDSSessionData', 'threeDSSessionData must be 1 to 1024 base64url characters, without padding');
    }
    const creq = decodeBase64urlJson('creq', form.creq);
    if (creq.messageType === undefined) throw refusal('201', 'messageType', 'messageType is required');
    if (creq.messageType !== 'CReq') throw refusal('101', 'messageType', 'the challenge page takes a CReq: messageType must be CReq');
    const id = uuidField(creq, 'threeDSServerTransID');
    const acsTransID = uuidField(creq, 'acsTransID');
    const found = ctx.store.get(id);
    if (!found || found.ares?.transStatus !== 'C') throw refusal('301', 'threeDSServerTransID', 'no ARes with transStatus C has this threeDSServerTransID');
    tx = found;
    if (acsTransID !== tx.acsTransID) throw refusal('301', 'acsTransID', "acsTransID is not the ARes's");
    if (creq.messageVersion === undefined) throw refusal('201', 'messageVersion', 'messageVersion is required');
    if (creq.messageVersion !== tx.messageVersion) throw refusal('102', 'messageVersion', `messageVersion must be the ARes's (${tx.messageVersion})`);
    if (creq.dsTransID !== undefined && (typeof creq.dsTransID !== 'string' || creq.dsTransID.toLowerCase() !== tx.dsTransID)) {
      throw refusal('301', 'dsTransID', "dsTransID is not the ARes's");
    }
    const windowSize = creq.challengeWindowSize;
    if (windowSize === undefined) throw refusal('201', 'challengeWindowSize', 'challengeWindowSize is required');
    if (typeof windowSize !== 'string' || !/^0[1-5]$/.test(windowSize)) throw refusal('203', 'challengeWindowSize', 'challengeWindowSize must be 01–05');
    if (tx.state !== 'challenge') throw refusal('305', 'threeDSServerTransID', 'a CReq was already received for this transaction');
    if (ctx.store.creqLate(tx)) throw refusal('402', 'CReq', 'the CReq came more than 30 s after the ARes');

    const mode = ctx.challengeMode(tx);
    tx.challenge = { mode, creq, creqAtMs: ctx.store.now(), windowSize, sessionData };
    tx.state = 'challenging';
    switch (mode) {
      case 'pass':
        return finish(ctx, tx, 'Y', '00');
      case 'fail':
        return finish(ctx, tx, 'N', '00');
      case 'cancel':
        return finish(ctx, tx, 'cancel', '00');
      case 'cres-mismatch':
        return finish(ctx, tx, 'N', '00', 'Y');
      case 'manual':
        return manualPage(ctx, tx);
      case 'abandon':
        return { reply: htmlReply(silentPage('Challenge', 'Waiting for the cardholder…')), threeDSServerTransID: tx.threeDSServerTransID };
      case 'erro': {
        const erro = erroMessage(refusal('403', 'ACS', 'the ACS could not run the challenge (fake: setChallengeMode erro)'), {
          messageVersion: tx.messageVersion,
          threeDSServerTransID: tx.threeDSServerTransID,
          acsTransID: tx.acsTransID,
          errorMessageType: 'CReq',
        });
        tx.state = 'erro-posted';
        tx.challenge.decision = 'erro';
        tx.challenge.cres = erro;
        return post(ctx, tx, erro, 'Challenge error');
      }
    }
  } catch (err) {
    return refused(err, tx, 'CReq');
  }
}

/** The manual page's buttons. */
export function manualDecision(ctx: AcsContext, form: Record<string, string>): AcsAnswer {
  let tx: ThreeDSTransaction | undefined;
  try {
    const acsTransID = uuidField(form, 'acsTransID');
    const found = ctx.store.byAcsTransID(acsTransID);
    if (!found || found.challenge?.mode !== 'manual') throw refusal('301', 'acsTransID', 'no manual challenge has this acsTransID');
    tx = found;
    if (tx.state !== 'challenging') throw refusal('305', 'acsTransID', 'this challenge has ended');
    const outcome = form.outcome;
    if (outcome !== 'Y' && outcome !== 'N' && outcome !== 'cancel') throw refusal('203', 'outcome', 'outcome must be Y, N or cancel');
    return finish(ctx, tx, ctx.store.challengeScreenExpired(tx) ? 'timeout' : outcome, '01');
  } catch (err) {
    return refused(err, tx);
  }
}
