/**
 * The 3DS Server API of the fake: POST /preauth, /auth and /postauth on a parsed JSON body
 * (shared/acquirers/3dsecure-io.md §2.2, §2.4, §2.6; §5 items 5–9, 15–19, 26–28). Each answers a
 * message, or an Erro that the server sends with the fake's Erro status.
 *
 * /auth checks, in this order: messageType AReq (else 101), messageVersion one of 3dsecure.io's
 * (else 102), acctNumber, the threeDSServerTransID (201/203 for its form; 301 when never issued,
 * issued for another acctNumber, already used by an /auth, or older than 80 s). From there the id
 * is used up, whatever the answer [INFERENCE: /auth is not idempotent, §2.10; start over with a
 * new /preauth]. Then messageVersion within the card's ACS and DS ranges (102; and 102 for a case
 * with outcome I asked in 2.1.0, where I does not exist), the field rules of areq.ts (201/203),
 * threeDSCompInd against what the fake saw (305), and finally the case's outcome.
 */
import crypto from 'node:crypto';
import { validateAReqFields } from './areq.js';
import { caseOf, DS_VERSIONS } from './cases.js';
import { ares, crd } from './messages.js';
import type { ThreeDSTransaction, TransactionStore } from './state.js';
import { badFormat, erroMessage, isMessageVersion, type Message, missing, MESSAGE_VERSIONS, Refusal, UUID } from './wire.js';

export interface ApiContext {
  store: TransactionStore;
  /** The fake ACS's 3DS Method page, offered in the CRD. */
  methodURL: string;
  /** The fake ACS's challenge page, the acsURL of an ARes C. */
  acsURL: string;
  purchaseDateToleranceMs: number;
}

/** A message to answer with 200, or an Erro; `dsTimeout` asks the server to wait before answering. */
export interface ApiAnswer {
  ok: boolean;
  body: Message;
  dsTimeout?: boolean;
}

/** §2.2: /preauth's `ds` enum (it includes `upi`, which the AReq's does not). */
const PREAUTH_DS = ['standin', 'visa', 'mastercard', 'jcb', 'upi', 'amex', 'protectbuy', 'sbn'];

function acctNumber(body: Message): string {
  const pan = body.acctNumber;
  if (pan === undefined) throw missing('acctNumber');
  if (typeof pan !== 'string' || !/^[0-9]{13,19}$/.test(pan)) throw badFormat('acctNumber', 'must be 13 to 19 digits');
  return pan;
}

function transactionId(body: Message): string {
  const id = body.threeDSServerTransID;
  if (id === undefined) throw missing('threeDSServerTransID');
  if (typeof id !== 'string' || !UUID.test(id)) throw badFormat('threeDSServerTransID', 'must be a UUID');
  return id;
}

const wellFormedId = (body: Message) =>
  typeof body.threeDSServerTransID === 'string' && UUID.test(body.threeDSServerTransID) ? body.threeDSServerTransID : undefined;

function refused(err: unknown, context: Parameters<typeof erroMessage>[1]): ApiAnswer {
  if (!(err instanceof Refusal)) throw err;
  return { ok: false, body: erroMessage(err, context), dsTimeout: err.errorCode === '405' };
}

/** §2.2: the CRD for an enrolled card, else Erro 305 `Unknown BIN` without a transaction id. */
export function preauth(ctx: ApiContext, body: Message): ApiAnswer {
  try {
    const pan = acctNumber(body);
    if (body.ds !== undefined && (typeof body.ds !== 'string' || !PREAUTH_DS.includes(body.ds))) {
      throw badFormat('ds', `must be one of ${PREAUTH_DS.join(', ')}`);
    }
    const threeDSCase = caseOf(pan);
    if (!threeDSCase) {
      throw new Refusal('305', 'No CRD found, card with BIN ****** is not enrolled with any known DS', {
        description: 'Unknown BIN',
        withTransactionId: false,
      });
    }
    const tx = ctx.store.issue(pan, threeDSCase, threeDSCase.method === 'absent' ? undefined : ctx.methodURL);
    return { ok: true, body: crd(tx) };
  } catch (err) {
    return refused(err, {});
  }
}

/** §5 item 16: the live /preauth transaction of this card, used up by this /auth. */
function bindTransaction(ctx: ApiContext, id: string, pan: string): ThreeDSTransaction {
  const tx = ctx.store.get(id);
  const unknown = (reason: string) => new Refusal('301', 'threeDSServerTransID', { reason });
  if (!tx) throw unknown('threeDSServerTransID was not issued by /preauth');
  if (tx.pan !== pan) throw unknown('threeDSServerTransID was issued by /preauth for a different acctNumber');
  if (tx.authAtMs !== undefined) throw unknown('threeDSServerTransID was already used by an earlier /auth: call /preauth again');
  if (ctx.store.preauthExpired(tx)) throw unknown('threeDSServerTransID expired: /preauth was more than 80 s ago');
  return tx;
}

/** §5 item 17: threeDSCompInd against what the fake ACS saw of the 3DS Method. */
function checkCompInd(tx: ThreeDSTransaction, compInd: unknown): void {
  const inconsistent = (reason: string) => new Refusal('305', 'threeDSCompInd', { reason });
  const { method } = tx.case;
  if (method === 'absent' && compInd !== 'U') throw inconsistent('no threeDSMethodURL was offered for this card: threeDSCompInd must be U');
  if (method !== 'absent' && compInd === 'U') {
    throw inconsistent('a threeDSMethodURL was offered: run the 3DS Method, then send Y (notification received) or N (none within 10 s)');
  }
  if (compInd === 'Y' && method === 'timeout') throw inconsistent('the 3DS Method of this card never sent its notification: threeDSCompInd must be N');
  if (compInd === 'Y' && !tx.methodServed) throw inconsistent('the 3DS Method page was never served for this transaction: Y needs a completed 3DS Method');
}

/** §2.4: the AReq in, the ARes (or an Erro) out. */
export function auth(ctx: ApiContext, body: Message, raw: string): ApiAnswer {
  const version = isMessageVersion(body.messageVersion) ? body.messageVersion : undefined;
  let tx: ThreeDSTransaction | undefined;
  try {
    if (body.messageType === undefined) throw missing('messageType');
    if (body.messageType !== 'AReq') throw new Refusal('101', 'messageType', { reason: '/auth takes an AReq: messageType must be AReq' });
    if (body.messageVersion === undefined) throw missing('messageVersion');
    if (!version) throw new Refusal('102', 'messageVersion', { reason: `messageVersion must be one of ${MESSAGE_VERSIONS.join(', ')}` });
    const pan = acctNumber(body);
    tx = bindTransaction(ctx, transactionId(body), pan);
    tx.authAtMs = ctx.store.now();
    tx.areqRaw = raw;
    tx.areq = body;
    tx.messageVersion = version;

    const range = tx.case.acsVersions.filter((v) => DS_VERSIONS.includes(v));
    if (!range.includes(version)) {
      throw new Refusal('102', 'messageVersion', { reason: `${version} is outside the card's range (${range.join(', ')}; see the CRD)` });
    }
    if (tx.case.outcome === 'I' && version === '2.1.0') {
      throw new Refusal('102', 'messageVersion', { reason: "this card's outcome is transStatus I, which exists from 2.2.0 on" });
    }
    validateAReqFields(body, { version, nowMs: ctx.store.now(), purchaseDateToleranceMs: ctx.purchaseDateToleranceMs });
    checkCompInd(tx, body.threeDSCompInd);
    if (tx.case.outcome === 'ds-timeout') throw new Refusal('405', 'Connection timeout', { description: 'Unable to contact Directory Server' });

    tx.acsTransID = crypto.randomUUID();
    tx.dsTransID = crypto.randomUUID();
    tx.ares = ares(tx, ctx.acsURL);
    tx.aresAtMs = ctx.store.now();
    tx.state = tx.case.outcome === 'C' ? 'challenge' : 'frictionless';
    return { ok: true, body: tx.ares };
  } catch (err) {
    const answer = refused(err, { messageVersion: version, threeDSServerTransID: tx?.threeDSServerTransID ?? wellFormedId(body), errorMessageType: 'AReq' });
    if (tx) {
      tx.state = 'refused';
      tx.erro = answer.body;
    }
    return answer;
  }
}

/** §2.6: the RReq for 300 s after the challenge ended; 305 before, 203 after or for unknown ids. */
export function postauth(ctx: ApiContext, body: Message): ApiAnswer {
  let tx: ThreeDSTransaction | undefined;
  try {
    const id = transactionId(body);
    tx = ctx.store.get(id);
    if (!tx || ctx.store.rreqExpired(tx)) {
      throw new Refusal('203', 'Unknown threeDSServerTransID', { description: 'Unknown threeDSServerTransID' });
    }
    if (!tx.rreq) throw new Refusal('305', 'No response from directory server yet', { description: 'No RReq has been received' });
    return { ok: true, body: tx.rreq };
  } catch (err) {
    return refused(err, { messageVersion: tx?.messageVersion, threeDSServerTransID: wellFormedId(body) });
  }
}
