/**
 * What a 3-D Secure result means for the payment (INTERFACE §13): authorize with the ARes or RReq
 * unchanged, refuse without sending anything to the acquirer, or go on without 3-D Secure. Pure:
 * the window's flow asks, the payment engine does.
 *
 *   Y, A, I                      → authorize, the message sent unchanged
 *   N, R                         → refused, REJECTED_BY_SCA, nothing sent
 *   U, no result, not enrolled   → NORMAL: authorize without 3-D Secure; FORCE: refused
 *
 * "No result" is a provider error or timeout, an Erro at any step, a challenge that ended without
 * an RReq, or a status the flow cannot finish (D, C at the end). The transaction's `sca` and
 * `externalStatusCodes.sca` (the transStatus) say what happened either way.
 */
import type { ScaResult, ThreeDSAuthentication } from '../../connectors/acquirer.js';

/** What the window's 3-D Secure step ended with. */
export type ThreeDSOutcome =
  /** An ARes with a final status (frictionless) or the RReq of a challenge. */
  | { kind: 'message'; messageType: 'ARes' | 'RReq'; transStatus: string; raw: string }
  /** /preauth said 305: the card is in no directory server's range. */
  | { kind: 'not_enrolled' }
  /** An Erro, a timeout, an unreachable provider, an unusable answer or an abandoned challenge. */
  | { kind: 'no_result'; reason: string };

export type ThreeDSDecision =
  | { action: 'authorize'; authentication: ThreeDSAuthentication | null; sca: ScaResult; scaCode: string | null }
  | { action: 'refuse'; errorCode: 'REJECTED_BY_SCA'; message: string; sca: ScaResult; scaCode: string | null };

const AUTHORIZE = new Set(['Y', 'A', 'I']);
const REFUSE = new Set(['N', 'R']);

const NOT_TRIED: ScaResult = { rejected: false, type: 'UNKNOWN', verification: 'NONE' };

export function decide(outcome: ThreeDSOutcome, scaMode: string | null): ThreeDSDecision {
  const force = scaMode === 'FORCE';
  if (outcome.kind === 'message') {
    const verification = outcome.messageType === 'ARes' ? 'FRICTIONLESS' : 'CHALLENGED';
    const status = outcome.transStatus;
    if (AUTHORIZE.has(status)) {
      return {
        action: 'authorize',
        authentication: { kind: outcome.messageType === 'ARes' ? 'ares' : 'rreq', message: outcome.raw },
        sca: { rejected: false, type: '3DS', verification },
        scaCode: status,
      };
    }
    if (REFUSE.has(status)) {
      return { action: 'refuse', errorCode: 'REJECTED_BY_SCA', message: refusal(status), sca: { rejected: true, type: '3DS', verification }, scaCode: status };
    }
    // U (or a status the flow cannot finish): authentication could not be performed.
    const sca: ScaResult = { rejected: force, type: '3DS', verification };
    return force
      ? {
          action: 'refuse',
          errorCode: 'REJECTED_BY_SCA',
          message: 'The card issuer could not authenticate the cardholder, and this payment requires it.',
          sca,
          scaCode: status,
        }
      : { action: 'authorize', authentication: null, sca, scaCode: status };
  }
  const sca: ScaResult = outcome.kind === 'not_enrolled' ? { ...NOT_TRIED, rejected: force } : { rejected: force, type: '3DS', verification: 'UNKNOWN' };
  if (!force) return { action: 'authorize', authentication: null, sca, scaCode: null };
  return {
    action: 'refuse',
    errorCode: 'REJECTED_BY_SCA',
    message:
      outcome.kind === 'not_enrolled'
        ? 'The card does not support 3-D Secure, and this payment requires it.'
        : '3-D Secure could not be completed, and this payment requires it.',
    sca,
    scaCode: null,
  };
}

function refusal(status: string): string {
  return status === 'R' ? 'The card issuer rejected the authentication.' : 'The cardholder was not authenticated.';
}
