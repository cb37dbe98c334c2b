/**
 * The messages the 3DS fake produces, shaped as shared/acquirers/3dsecure-io.md shows them: the CRD
 * of /preauth (§2.2), the ARes of /auth (§1.5, §2.4), the CRes the ACS posts (§1.6) and the RReq of
 * /postauth (§1.7, §2.6). Keys in alphabetical order, as the docs' examples print them.
 *
 * Values the facts leave open, chosen by the fake [INFERENCE]: transStatusReason 01 for N, 11 for R,
 * 22 for U, 26 for a cancelled challenge, 14 for a timed-out one; no eci and no authenticationValue
 * for N, R, U and I; `acsChallengeMandated` Y only when the requestor asked for a mandated challenge
 * (threeDSRequestorChallengeInd 04); `authenticationType` 01 (2.3.1: `authenticationMethod: ["01"]`).
 */
import crypto from 'node:crypto';
import { DS_VERSIONS, type ThreeDSCase } from './cases.js';
import type { ThreeDSTransaction } from './state.js';
import { message, type Message, type MessageVersion } from './wire.js';

/** §2.4 [REC]: the sandbox's operator and reference numbers. */
export const ACS_REFERENCE = '3dsecureio-standin-acs';
export const DS_REFERENCE = '3dsecureio-standin-ds';
export const ACS_INFO_IND = ['01', '02'] as const;

/** §1.5: a 28-character base64 CAVV/AAV (20 random bytes). */
export const authenticationValue = () => crypto.randomBytes(20).toString('base64');

/** §1.5: Visa-like 05 authenticated / 06 attempted; Mastercard-like (PAN 5…, 2…) 02 / 01. */
export function eciFor(threeDSCase: ThreeDSCase, status: 'Y' | 'A'): string {
  if (threeDSCase.mastercardLike) return status === 'Y' ? '02' : '01';
  return status === 'Y' ? '05' : '06';
}

const REASONS: Record<'N' | 'R' | 'U', string> = { N: '01', R: '11', U: '22' };

/** §2.2: the CRD of /preauth. */
export function crd(tx: ThreeDSTransaction): Message {
  const acs = tx.case.acsVersions;
  return message({
    messageType: 'CRD',
    threeDSServerTransID: tx.threeDSServerTransID,
    scheme: 'standin',
    acsStartProtocolVersion: acs[0],
    acsEndProtocolVersion: acs[acs.length - 1],
    acsProtocolVersions: acs.map((version) => message({ version, threeDSMethodURL: tx.methodURL, acsInfoInd: [...ACS_INFO_IND] })),
    acsInfoInd: [...ACS_INFO_IND],
    dsStartProtocolVersion: DS_VERSIONS[0],
    dsEndProtocolVersion: DS_VERSIONS[DS_VERSIONS.length - 1],
    dsProtocolVersions: [...DS_VERSIONS],
    threeDSServerProtocolVersions: [...DS_VERSIONS],
    threeDSMethodURL: tx.methodURL,
  });
}

/** 2.3.1 renames authenticationType to the array authenticationMethod (§1.5). */
const authenticationKind = (version: MessageVersion) => (version === '2.3.1' ? { authenticationMethod: ['01'] } : { authenticationType: '01' });

/** The fields every ARes, CRes and RReq of a transaction carries. */
function ids(tx: ThreeDSTransaction): Message {
  return { threeDSServerTransID: tx.threeDSServerTransID, acsTransID: tx.acsTransID, messageVersion: tx.messageVersion };
}

/** §1.5, §2.4: the ARes for the case's outcome (not the DS timeout, which is an Erro). */
export function ares(tx: ThreeDSTransaction, acsURL: string): Message {
  const status = tx.case.outcome;
  const version = tx.messageVersion!;
  const common = {
    ...ids(tx),
    messageType: 'ARes',
    dsTransID: tx.dsTransID,
    acsOperatorID: ACS_REFERENCE,
    acsReferenceNumber: ACS_REFERENCE,
    dsReferenceNumber: DS_REFERENCE,
  };
  switch (status) {
    case 'Y':
    case 'A':
      return message({ ...common, transStatus: status, authenticationValue: authenticationValue(), eci: eciFor(tx.case, status) });
    case 'N':
    case 'R':
    case 'U':
      return message({ ...common, transStatus: status, transStatusReason: REASONS[status] });
    case 'I':
      return message({ ...common, transStatus: 'I' });
    case 'C': {
      const challengeInd = tx.areq?.threeDSRequestorChallengeInd;
      const mandated = Array.isArray(challengeInd) ? challengeInd.includes('04') : challengeInd === '04';
      return message({ ...common, transStatus: 'C', acsURL, acsChallengeMandated: mandated ? 'Y' : 'N', ...authenticationKind(version) });
    }
    case 'ds-timeout':
      throw new Error('3DS fake: a DS timeout has no ARes');
  }
}

/** §1.6: the final CRes (BRW): transStatus Y or N. */
export function cres(tx: ThreeDSTransaction, transStatus: 'Y' | 'N'): Message {
  return message({ ...ids(tx), messageType: 'CRes', challengeCompletionInd: 'Y', transStatus });
}

export interface ChallengeResult {
  transStatus: 'Y' | 'N';
  /** RReq challengeCancel: 01 cardholder cancelled, 04 ACS timeout (§1.7). */
  challengeCancel?: '01' | '04';
  transStatusReason?: string;
  interactionCounter: string;
}

/** §1.7, §2.6: the RReq the ACS sends when the challenge ends, served by /postauth. */
export function rreq(tx: ThreeDSTransaction, result: ChallengeResult): Message {
  const y = result.transStatus === 'Y';
  return message({
    ...ids(tx),
    messageType: 'RReq',
    dsTransID: tx.dsTransID,
    messageCategory: tx.areq?.messageCategory,
    interactionCounter: result.interactionCounter,
    transStatus: result.transStatus,
    ...authenticationKind(tx.messageVersion!),
    authenticationValue: y ? authenticationValue() : undefined,
    eci: y ? eciFor(tx.case, 'Y') : undefined,
    transStatusReason: y ? undefined : (result.transStatusReason ?? '01'),
    challengeCancel: result.challengeCancel,
  });
}
