/**
 * The sandbox scenario table (INTERFACE §9): one row per test card, the outcome of every kind of
 * acquirer call as data. The simulator only looks rows up; it holds no card-specific logic.
 * A card that is not in the table (but valid) is approved for everything; so are wallets.
 */
import type { Initiator } from '../acquirer.js';

/** The acquirer calls the simulator answers. */
export type OperationKind = 'authorize' | 'capture' | 'refund' | 'void' | 'renew' | 'payout';

export type Outcome =
  | { kind: 'approve' }
  /** The first `attempts` tries time out (outcome unknown); later tries are approved. */
  | { kind: 'timeout'; attempts: number }
  | { kind: 'decline'; errorCode: string };

export interface CardScenario {
  brand: string;
  /** Outcome per operation kind; a kind not named is approved. */
  outcomes: Partial<Record<OperationKind, Outcome>>;
  /** Authorization outcome by initiator, over `outcomes.authorize` (e.g. "every MIT declined"). */
  authorizeBy?: Partial<Record<Initiator, Outcome>>;
  /**
   * With scaMode NORMAL or FORCE the customer meets a 3-D Secure challenge: `pass` goes on to the
   * outcome of the table, `fail` ends the authorization declined REJECTED_BY_SCA (`sca.rejected`).
   */
  scaChallenge?: 'pass' | 'fail';
}

const APPROVE: Outcome = { kind: 'approve' };
const decline = (errorCode: string): Outcome => ({ kind: 'decline', errorCode });

export const TEST_CARDS: Readonly<Record<string, CardScenario>> = {
  '4111111111111111': { brand: 'Visa', outcomes: {} },
  '5555555555554444': { brand: 'Mastercard', outcomes: {} },
  '4242424242424242': { brand: 'Visa', outcomes: {} },
  '4000000000000002': { brand: 'Visa', outcomes: { authorize: decline('DECLINED_BY_ISSUER_OR_SCHEME'), payout: decline('DECLINED_BY_ISSUER_OR_SCHEME') } },
  '4000000000009995': { brand: 'Visa', outcomes: { authorize: decline('INSUFFICIENT_FUNDS') } },
  '4000000000000069': { brand: 'Visa', outcomes: { authorize: decline('CARD_EXPIRED'), payout: decline('CARD_EXPIRED') } },
  '4000000000000119': { brand: 'Visa', outcomes: { authorize: { kind: 'timeout', attempts: 1 } } },
  '4000000000000341': { brand: 'Visa', outcomes: { authorize: APPROVE }, authorizeBy: { MIT: decline('DECLINED_BY_ISSUER_OR_SCHEME') } },
  '4000000000000259': { brand: 'Visa', outcomes: { capture: decline('DECLINED_BY_ISSUER_OR_SCHEME') } },
  '4000000000003220': { brand: 'Visa', outcomes: {}, scaChallenge: 'pass' },
  // INTERFACE §11.1: the transaction error codes added there that a card produces.
  '4000000000003238': { brand: 'Visa', outcomes: {}, scaChallenge: 'fail' },
  '4000000000000465': { brand: 'Visa', outcomes: { authorize: decline('CARD_CLOSED'), payout: decline('CARD_CLOSED') } },
  '4000000000000994': { brand: 'Visa', outcomes: { authorize: decline('REJECTED_UNKNOWN') } },
  '4000000000000523': { brand: 'Visa', outcomes: { authorize: APPROVE }, authorizeBy: { MIT: decline('INVALID_AGREEMENT') } },
  // The sandbox acquirer has no agreement for JCB: this JCB test card is refused before it reaches an issuer.
  '3530111333300000': {
    brand: 'JCB',
    outcomes: { authorize: decline('MISSING_ACQUIRER_AGREEMENT'), payout: decline('MISSING_ACQUIRER_AGREEMENT') },
  },
};

/**
 * Plausible raw codes per internal error code: the acquirer's ISO 8583 response code and the
 * card network's reason, as a real acquirer would put them in `externalStatusCodes`.
 */
export const RAW_CODES: Readonly<Record<string, { acquirer: string; network: string }>> = {
  APPROVED: { acquirer: '00', network: '00' },
  DECLINED_BY_ISSUER_OR_SCHEME: { acquirer: '05', network: '05' },
  INSUFFICIENT_FUNDS: { acquirer: '51', network: '51' },
  CARD_EXPIRED: { acquirer: '54', network: '54' },
  DO_NOT_HONOR: { acquirer: '05', network: '05' },
  REJECTED_BY_SCA: { acquirer: '05', network: '05' },
  CARD_CLOSED: { acquirer: '46', network: '46' },
  REJECTED_UNKNOWN: { acquirer: '06', network: '06' },
  INVALID_AGREEMENT: { acquirer: 'R1', network: 'R1' },
  MISSING_ACQUIRER_AGREEMENT: { acquirer: '58', network: '58' },
};

export const DECLINE_MESSAGES: Readonly<Record<string, string>> = {
  DECLINED_BY_ISSUER_OR_SCHEME: 'Declined by the issuer or the card scheme.',
  INSUFFICIENT_FUNDS: 'Insufficient funds.',
  CARD_EXPIRED: 'The card has expired.',
  REJECTED_BY_SCA: 'The card holder did not pass the 3-D Secure challenge.',
  CARD_CLOSED: 'The card account is closed.',
  REJECTED_UNKNOWN: 'Rejected; the issuer gave no reason.',
  INVALID_AGREEMENT: 'The stored-credential agreement for this card is not valid.',
  MISSING_ACQUIRER_AGREEMENT: 'The merchant has no acquirer agreement for this card scheme.',
};
