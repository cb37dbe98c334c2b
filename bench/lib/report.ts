/**
 * Printing shared by every benchmark: each figure beside the baseline measured in the same run,
 * with its ratio, and the targets checked at the end. Ratios are figure / baseline: for req/s
 * below 1 is slower, for latencies above 1 is slower.
 */
import os from 'node:os';
import type { Measurement } from './load.js';

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');
const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

const LABEL = 58;

export interface TargetResult {
  label: string;
  met: boolean;
  detail: string;
}

export class Report {
  readonly targets: TargetResult[] = [];
  readonly broken: string[] = [];
  readonly skipped: string[] = [];

  section(title: string): void {
    process.stdout.write(`\n== ${title}\n`);
  }

  note(text: string): void {
    process.stdout.write(`   ${text}\n`);
  }

  /** Column heads for the figure lines that follow. */
  header(): void {
    process.stdout.write(
      `   ${pad('', LABEL)}${lpad('req/s', 9)}${lpad('×base', 8)}${lpad('p50 ms', 9)}${lpad('×base', 8)}${lpad('p99 ms', 9)}${lpad('×base', 8)}\n`,
    );
  }

  baseline(label: string, m: Measurement): void {
    this.check(label, m);
    this.line(`BASELINE ${label}`, m, m);
  }

  /**
   * `refusalsExpected`: the run offers more than the service accepts, and 503 SERVICE_UNAVAILABLE
   * (the backlog bound) is the answer it must give to the excess: counted and printed, not broken.
   */
  figure(label: string, m: Measurement, baseline: Measurement, options: { refusalsExpected?: boolean } = {}): void {
    const refused = options.refusalsExpected ? (m.non2xx['503'] ?? 0) : 0;
    if (refused) {
      const rest = Object.fromEntries(Object.entries(m.non2xx).filter(([code]) => code !== '503'));
      process.stdout.write(`   ${label}: ${refused} refused with 503 by the backlog bound (${m.requests} accepted)\n`);
      this.check(label, { ...m, non2xx: rest });
    } else this.check(label, m);
    this.line(label, m, baseline);
  }

  /** A target: printed at once and again in the summary. */
  target(label: string, met: boolean, detail: string): void {
    this.targets.push({ label, met, detail });
    process.stdout.write(`   ${met ? 'target met   ' : 'TARGET MISSED'}  ${label}: ${detail}\n`);
  }

  skip(label: string, reason: string): void {
    this.skipped.push(`${label}: ${reason}`);
    process.stdout.write(`   SKIPPED ${label}: ${reason}\n`);
  }

  summary(): void {
    process.stdout.write('\n== Summary\n');
    for (const t of this.targets) process.stdout.write(`   ${t.met ? 'met   ' : 'MISSED'}  ${t.label}: ${t.detail}\n`);
    for (const s of this.skipped) process.stdout.write(`   skipped ${s}\n`);
    for (const b of this.broken) process.stdout.write(`   BROKEN  ${b}\n`);
    const met = this.targets.filter((t) => t.met).length;
    process.stdout.write(`   ${met} of ${this.targets.length} targets met${this.broken.length ? `, ${this.broken.length} broken measurements` : ''}\n`);
  }

  private line(label: string, m: Measurement, base: Measurement): void {
    process.stdout.write(
      `   ${pad(label, LABEL)}${lpad(m.rps.toFixed(0), 9)}${lpad(ratio(m.rps, base.rps), 8)}${lpad(ms(m.p50), 9)}${lpad(ratio(m.p50, base.p50), 8)}${lpad(ms(m.p99), 9)}${lpad(ratio(m.p99, base.p99), 8)}\n`,
    );
  }

  /** A run with failed requests measures the wrong thing; it is flagged, never silently averaged. */
  private check(label: string, m: Measurement): void {
    const bad = Object.entries(m.non2xx);
    if (bad.length || m.errors || m.requests === 0) {
      const text = `${label}: ${m.requests} ok, ${m.errors} connection errors, non-2xx ${JSON.stringify(m.non2xx)}`;
      this.broken.push(text);
      process.stdout.write(`   BROKEN ${text}\n`);
    }
  }
}

/** The host's load average: figures taken while other work shares the CPUs are lower. */
export function loadNote(): string {
  const [one, five] = os.loadavg();
  return `host load average ${one!.toFixed(1)} (1 min), ${five!.toFixed(1)} (5 min) on ${os.cpus().length} CPUs`;
}

export const formatMs = ms;
export const formatRatio = ratio;
