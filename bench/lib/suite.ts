/**
 * What a benchmark file exports, and what bench/run.ts hands it. A benchmark is a file
 * `bench/<name>.bench.ts` whose default export is a BenchSuite; run.ts runs every such file.
 */
import { measure, measureInterleaved, type Measurement, type RequestTemplate } from './load.js';
import type { Report } from './report.js';

export interface LoadSettings {
  connections: number;
  warmupSeconds: number;
  /** Seconds measured per figure in all (after the warm-up). */
  durationSeconds: number;
  /** compare(): rounds the duration is split into. */
  rounds: number;
}

export interface BenchContext {
  /** BENCH_QUICK=1: smallest data sizes and short durations only. */
  quick: boolean;
  load: LoadSettings;
  report: Report;
  /** Measures a URL with the run's load settings (overridable per call). */
  measure(url: string, headers?: Record<string, string>, overrides?: Partial<LoadSettings>, request?: RequestTemplate): Promise<Measurement>;
  /**
   * Measures several URLs — typically the baseline first, then the figures — in alternating
   * rounds, so that they share whatever else the machine is doing. Same order as given.
   */
  compare(
    targets: Array<{ url: string; headers?: Record<string, string>; request?: RequestTemplate }>,
    overrides?: Partial<LoadSettings>,
  ): Promise<Measurement[]>;
}

export interface BenchSuite {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<void>;
}

export function defineSuite(suite: BenchSuite): BenchSuite {
  return suite;
}

export function createContext(quick: boolean, load: LoadSettings, report: Report): BenchContext {
  return {
    quick,
    load,
    report,
    measure: (url, headers = {}, overrides = {}, request) => measure({ url, headers, ...load, ...overrides, ...(request ? { request } : {}) }),
    compare: (targets, overrides = {}) => {
      const settings = { ...load, ...overrides };
      return measureInterleaved(
        targets.map((t) => ({ url: t.url, headers: t.headers ?? {}, connections: settings.connections, ...(t.request ? { request: t.request } : {}) })),
        settings,
      );
    },
  };
}
