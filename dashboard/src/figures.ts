/** The overview's figures, computed from the listed transactions (pure: unit-tested in test/dashboard/export.test.ts). */
import type { Transaction } from './types.js';

export interface DayFigures {
  day: string;
  count: number;
  succeeded: number;
  failed: number;
  /** Sum of SUCCESS amounts per currency, minor units. */
  volume: Record<string, number>;
}

export interface OverviewFigures {
  days: DayFigures[];
  total: number;
  successRate: number | null;
  declines: Array<[string, number]>;
  byMethod: Array<[string, number]>;
  byCurrency: Array<[string, number, number]>;
}

/** The figures of the overview from a list of transactions (pure; the view shows them beside the charts). */
export function summarize(transactions: Transaction[]): OverviewFigures {
  const days = new Map<string, DayFigures>();
  const declines = new Map<string, number>();
  const methods = new Map<string, number>();
  const currencies = new Map<string, [number, number]>();
  let succeeded = 0;
  let failed = 0;
  for (const tx of transactions) {
    const day = tx.createdAt.slice(0, 10);
    const d = days.get(day) ?? { day, count: 0, succeeded: 0, failed: 0, volume: {} };
    d.count++;
    if (tx.state === 'SUCCESS') {
      d.succeeded++;
      succeeded++;
      d.volume[tx.currency] = (d.volume[tx.currency] ?? 0) + tx.amount;
    } else if (tx.state === 'FAILED') {
      d.failed++;
      failed++;
      const reason = tx.errorCode ?? 'UNKNOWN';
      declines.set(reason, (declines.get(reason) ?? 0) + 1);
    }
    days.set(day, d);
    const method = tx.paymentMethodType ?? 'NONE';
    methods.set(method, (methods.get(method) ?? 0) + 1);
    const c = currencies.get(tx.currency) ?? [0, 0];
    c[0]++;
    if (tx.state === 'SUCCESS') c[1] += tx.amount;
    currencies.set(tx.currency, c);
  }
  const desc = <T>(m: Map<string, T>, value: (v: T) => number) => [...m.entries()].sort((a, b) => value(b[1]) - value(a[1]));
  return {
    days: [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1)),
    total: transactions.length,
    successRate: succeeded + failed === 0 ? null : succeeded / (succeeded + failed),
    declines: desc(declines, (v) => v).slice(0, 10),
    byMethod: desc(methods, (v) => v),
    byCurrency: desc(currencies, (v) => v[0]).map(([k, [n, vol]]) => [k, n, vol]),
  };
}
