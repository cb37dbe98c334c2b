/**
 * The functions a V8 CPU profile (.cpuprofile: `node --cpu-prof`, or the inspector's
 * Profiler.stop) spent their own time in: samples summed by function name and script.
 */
import path from 'node:path';
import { REPO_ROOT } from './stores.js';

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number }>;
  /** µs */
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  /** `name (script)`; anonymous functions keep their line and column so that they stay apart. */
  frame: string;
  samples: number;
  /** Estimated from the samples' share of the profile's duration. */
  ms: number;
  /** Of the samples that were not (idle). */
  share: number;
}

function script(url: string): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  return file.startsWith(REPO_ROOT) ? path.relative(REPO_ROOT, file) : file;
}

/** Self time by function, most first; (idle) is left out of the list and of the shares. */
export function selfTimes(profile: CpuProfile): { top: SelfTime[]; busySamples: number; idleSamples: number; seconds: number } {
  const bySelf = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    total += hits;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += hits;
      continue;
    }
    const where = script(url);
    const frame = `${functionName || '(anonymous)'}${where ? ` (${where}${functionName ? '' : `:${lineNumber + 1}:${columnNumber + 1}`})` : ''}`;
    bySelf.set(frame, (bySelf.get(frame) ?? 0) + hits);
  }
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  const msPerSample = total ? (seconds * 1000) / total : 0;
  const busy = total - idle;
  const top = [...bySelf]
    .map(([frame, samples]) => ({ frame, samples, ms: samples * msPerSample, share: busy ? samples / busy : 0 }))
    .sort((a, b) => b.samples - a.samples);
  return { top, busySamples: busy, idleSamples: idle, seconds };
}
