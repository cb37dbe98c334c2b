/**
 * What a payment is, in the words a merchant expects (issue 46): the transaction's state says only
 * whether its authorization (or sale, or payout) went through — a payment refunded in full is still
 * SUCCESS — so the status shown is derived from the state and the aggregates, and the actions
 * offered follow the lifecycle table of the service (src/modules/operations/lifecycle.ts):
 *   capture and void take from the authorization not yet captured or voided, refund from the
 *   captured amount not yet refunded, renew (Klarna, ViaBill) needs an uncaptured balance; a
 *   terminal sale and a payout take none of them. Amounts still in flight (an operation sent to the
 *   acquirer and not answered) are held back from what may be asked next, as the service does.
 * Pure functions: no DOM, no fetch (unit-tested in test/dashboard/payment-status.test.ts).
 */

export interface PaymentFacts {
  state: string;
  type: string;
  /** A terminal sale (captured at the terminal; refunded only with a PAYOUT sale there). */
  terminalId?: string | null;
  paymentMethodType?: string | null;
}

export interface AggregateFacts {
  authorized: number;
  captured: number;
  refunded: number;
  voided: number;
  paidOut: number;
}

/** Amounts of operations sent to the acquirer and not answered yet (PROCESSING), by kind. */
export interface InFlight {
  capture: number;
  void: number;
  refund: number;
}

export const NOTHING_IN_FLIGHT: InFlight = { capture: 0, void: 0, refund: 0 };

export type StatusKey =
  | 'PENDING'
  | 'PROCESSING'
  | 'FAILED'
  | 'AUTHORIZED'
  | 'PARTIALLY_CAPTURED'
  | 'CAPTURED'
  | 'PARTIALLY_REFUNDED'
  | 'REFUNDED'
  | 'VOIDED'
  | 'PAID_OUT'
  | 'SUCCEEDED';

/** The colour family of a status: green only where the money stayed with the merchant. */
export type Tone = 'success' | 'info' | 'warning' | 'neutral' | 'danger';

export interface PaymentStatus {
  key: StatusKey;
  label: string;
  tone: Tone;
  /** What is still under way (an operation in flight), or why the status is what it is; null: nothing to add. */
  note: string | null;
}

const LABEL: Record<StatusKey, [label: string, tone: Tone]> = {
  PENDING: ['Pending', 'warning'],
  PROCESSING: ['Processing', 'warning'],
  FAILED: ['Failed', 'danger'],
  AUTHORIZED: ['Authorized', 'info'],
  PARTIALLY_CAPTURED: ['Partially captured', 'info'],
  CAPTURED: ['Captured', 'success'],
  PARTIALLY_REFUNDED: ['Partially refunded', 'warning'],
  REFUNDED: ['Refunded', 'neutral'],
  VOIDED: ['Voided', 'neutral'],
  PAID_OUT: ['Paid out', 'success'],
  SUCCEEDED: ['Succeeded', 'success'],
};

const RENEWABLE = ['KLARNA', 'VIABILL'];

/** The authorization neither captured nor voided (what capture and void may still take, before amounts in flight). */
export const uncaptured = (a: AggregateFacts): number => Math.max(0, a.authorized - a.captured - a.voided);

function keyOf(tx: PaymentFacts, a: AggregateFacts): StatusKey {
  if (tx.state === 'PENDING') return 'PENDING';
  if (tx.state === 'PROCESSING') return 'PROCESSING';
  if (tx.state !== 'SUCCESS') return 'FAILED';
  if (tx.type === 'PAYOUT') return 'PAID_OUT';
  if (a.captured > 0) {
    if (a.refunded >= a.captured) return 'REFUNDED';
    if (a.refunded > 0) return 'PARTIALLY_REFUNDED';
    return uncaptured(a) > 0 ? 'PARTIALLY_CAPTURED' : 'CAPTURED';
  }
  if (a.authorized === 0) return 'SUCCEEDED'; // e.g. a card stored with amount 0: nothing to move
  return a.voided >= a.authorized ? 'VOIDED' : 'AUTHORIZED';
}

const NOTES: Partial<Record<StatusKey, string>> = {
  PENDING: 'waiting for the customer or the acquirer',
  PROCESSING: 'waiting for the acquirer’s answer',
};

/** The status of a payment from its state and aggregates (and the operations in flight, when known). */
export function paymentStatus(
  tx: PaymentFacts,
  a: AggregateFacts,
  inFlight: InFlight = NOTHING_IN_FLIGHT,
  format: (minor: number) => string = String,
): PaymentStatus {
  const key = keyOf(tx, a);
  const [label, tone] = LABEL[key];
  const busy = [
    inFlight.capture > 0 && `capture of ${format(inFlight.capture)} in progress`,
    inFlight.void > 0 && `void of ${format(inFlight.void)} in progress`,
    inFlight.refund > 0 && `refund of ${format(inFlight.refund)} in progress`,
  ].filter((s): s is string => typeof s === 'string');
  return { key, label, tone, note: busy.length > 0 ? busy.join(', ') : (NOTES[key] ?? null) };
}

export interface ActionLimits {
  /** The most each may take now, in minor units; 0: not offered. */
  capture: number;
  void: number;
  refund: number;
  renew: boolean;
}

/** Which of capture, void, refund and renew the payment allows now, and up to how much. */
export function actionLimits(tx: PaymentFacts, a: AggregateFacts, inFlight: InFlight = NOTHING_IN_FLIGHT): ActionLimits {
  const none: ActionLimits = { capture: 0, void: 0, refund: 0, renew: false };
  if (tx.state !== 'SUCCESS' || tx.type === 'PAYOUT' || tx.terminalId) return none;
  const open = Math.max(0, uncaptured(a) - inFlight.capture - inFlight.void);
  return {
    capture: open,
    void: open,
    refund: Math.max(0, a.captured - a.refunded - inFlight.refund),
    renew: uncaptured(a) > 0 && RENEWABLE.includes(tx.paymentMethodType ?? ''),
  };
}

/** Amounts of the PROCESSING operations of a payment, by kind (GET /transactions/{id} `operations`). */
export function inFlightOf(operations: ReadonlyArray<{ type: string; state: string; amount: number }>): InFlight {
  const sum = (type: string) => operations.filter((o) => o.state === 'PROCESSING' && o.type === type).reduce((n, o) => n + o.amount, 0);
  return { capture: sum('CAPTURE'), void: sum('VOID'), refund: sum('REFUND') };
}
