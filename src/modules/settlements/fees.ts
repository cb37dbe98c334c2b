/**
 * The settlement fee schedule: pure data and arithmetic, no I/O. Every fee is computed in
 * integer minor units (bigint) with one explicit rounding step — never a float — so that a
 * settlement row's net is exactly its gross plus its adjustments, and a transfer's totals are
 * exact sums of its rows.
 */
import type { OperationType } from '../transactions/transaction.js';

export const TRANSACTION_FEE_TYPES = ['ACQUIRER_FEE', 'INTERCHANGE_FEE', 'SCHEME_FEE'] as const;
export type TransactionFeeType = (typeof TRANSACTION_FEE_TYPES)[number];
export const TRANSFER_ADJUSTMENT_TYPES = ['FEE', 'RESERVE', 'ADJUSTMENT'] as const;
export type TransferAdjustmentType = (typeof TRANSFER_ADJUSTMENT_TYPES)[number];

/** The operations a settlement run settles; refunds and payouts pay money out (negative gross). */
export const SETTLED_OPERATION_TYPES = ['CAPTURE', 'SALE', 'REFUND', 'PAYOUT'] as const satisfies readonly OperationType[];
export type SettledOperationType = (typeof SETTLED_OPERATION_TYPES)[number];

/**
 * How a percentage part is rounded to a whole minor unit. HALF_UP rounds the magnitude half away
 * from zero (the usual acquirer invoice rule); UP always rounds a fraction up; DOWN truncates.
 */
export type Rounding = 'HALF_UP' | 'UP' | 'DOWN';

export interface FeeRule {
  description: string;
  /** Percentage part in basis points (1/100 %) of the operation's absolute amount; integer ≥ 0. */
  basisPoints: number;
  /** Fixed part in minor units of the settled currency; integer ≥ 0. */
  fixedMinor: number;
  /** Fixed part per currency where the default does not fit (e.g. zero-decimal currencies). */
  fixedMinorByCurrency?: Record<string, number>;
  /** Operation types charged; default all settled types. */
  appliesTo?: readonly SettledOperationType[];
}

export interface FeeSchedule {
  name: string;
  rounding: Rounding;
  /** One rule per settlement-transaction fee type; a missing type is charged nothing (amount 0). */
  transaction: Partial<Record<TransactionFeeType, FeeRule>>;
  /** Fixed transfer-level fee (type FEE) per completed transfer, in minor units; 0 = none. */
  transferFee?: { description: string; fixedMinor: number; fixedMinorByCurrency?: Record<string, number> };
}

/**
 * The sandbox schedule (INTERFACE §9): every settled row carries a non-zero negative ACQUIRER_FEE
 * (its fixed part is at least one minor unit), plus interchange and scheme fees in basis points.
 */
export const SANDBOX_FEE_SCHEDULE: FeeSchedule = {
  name: 'sandbox',
  rounding: 'HALF_UP',
  transaction: {
    ACQUIRER_FEE: { description: 'Acquirer service fee (0.95 % + fixed)', basisPoints: 95, fixedMinor: 10, fixedMinorByCurrency: { JPY: 10, ISK: 10 } },
    INTERCHANGE_FEE: { description: 'Interchange fee (0.20 %)', basisPoints: 20, fixedMinor: 0 },
    SCHEME_FEE: { description: 'Card scheme fee (0.08 %)', basisPoints: 8, fixedMinor: 0 },
  },
  transferFee: { description: 'Transfer fee', fixedMinor: 0 },
};

export interface Adjustment<T extends string = string> {
  type: T;
  /** Minor units; negative for a deduction. */
  amount: bigint;
  description: string;
}

export interface SettledAmounts {
  gross: bigint;
  adjustments: Array<Adjustment<TransactionFeeType>>;
  net: bigint;
}

/** Gross of a settled operation: money in for captures and sales, out for refunds and payouts. */
export function grossOf(type: SettledOperationType, amount: number | bigint): bigint {
  const value = BigInt(amount);
  return type === 'REFUND' || type === 'PAYOUT' ? -value : value;
}

/** value · bps / 10 000 rounded as told; value ≥ 0. */
export function basisPointsOf(value: bigint, basisPoints: number, rounding: Rounding): bigint {
  const numerator = value * BigInt(basisPoints);
  const whole = numerator / 10_000n;
  const rest = numerator % 10_000n;
  if (rest === 0n || rounding === 'DOWN') return whole;
  if (rounding === 'UP') return whole + 1n;
  return rest * 2n >= 10_000n ? whole + 1n : whole;
}

const fixedFor = (rule: { fixedMinor: number; fixedMinorByCurrency?: Record<string, number> }, currency: string): bigint =>
  BigInt(rule.fixedMinorByCurrency?.[currency] ?? rule.fixedMinor);

/**
 * The settlement amounts of one operation: every fee type of the schedule as a deduction
 * (≤ 0, charged on the absolute amount, refunds and payouts included), net = gross + fees.
 */
export function settleAmounts(schedule: FeeSchedule, op: { type: SettledOperationType; amount: number | bigint; currency: string }): SettledAmounts {
  const gross = grossOf(op.type, op.amount);
  const magnitude = gross < 0n ? -gross : gross;
  const adjustments = TRANSACTION_FEE_TYPES.map((type) => {
    const rule = schedule.transaction[type];
    const charged = rule && (!rule.appliesTo || rule.appliesTo.includes(op.type));
    const fee = charged ? basisPointsOf(magnitude, rule.basisPoints, schedule.rounding) + fixedFor(rule, op.currency) : 0n;
    return { type, amount: -fee, description: rule?.description ?? type };
  });
  const net = adjustments.reduce((sum, a) => sum + a.amount, gross);
  return { gross, adjustments, net };
}

/** Transfer-level adjustments of a completed transfer (today only the fixed FEE). */
export function transferAdjustments(schedule: FeeSchedule, currency: string): Array<Adjustment<TransferAdjustmentType>> {
  const fee = schedule.transferFee ? fixedFor(schedule.transferFee, currency) : 0n;
  return fee === 0n ? [] : [{ type: 'FEE', amount: -fee, description: schedule.transferFee!.description }];
}

/** Checks a schedule given as data (e.g. from configuration); returns the problems found. */
export function validateFeeSchedule(schedule: FeeSchedule): string[] {
  const problems: string[] = [];
  const whole = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  if (!['HALF_UP', 'UP', 'DOWN'].includes(schedule.rounding)) problems.push(`rounding ${String(schedule.rounding)}`);
  for (const [type, rule] of Object.entries(schedule.transaction)) {
    if (!(TRANSACTION_FEE_TYPES as readonly string[]).includes(type)) problems.push(`unknown fee type ${type}`);
    if (!rule) continue;
    if (!whole(rule.basisPoints)) problems.push(`${type}.basisPoints must be a whole number ≥ 0`);
    if (!whole(rule.fixedMinor)) problems.push(`${type}.fixedMinor must be a whole number ≥ 0`);
    for (const [c, v] of Object.entries(rule.fixedMinorByCurrency ?? {}))
      if (!whole(v)) problems.push(`${type}.fixedMinorByCurrency.${c} must be a whole number ≥ 0`);
  }
  if (schedule.transferFee && !whole(schedule.transferFee.fixedMinor)) problems.push('transferFee.fixedMinor must be a whole number ≥ 0');
  return problems;
}
