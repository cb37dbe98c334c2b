/**
 * CPU time that process.cpuUsage() does not split out, read from Linux's /proc: one thread's (the
 * service's main thread, the event loop that bounds its throughput on SQLite), and the local
 * PostgreSQL server's (every process named postgres: the backends that run the service's
 * statements, the WAL writer, ...). Null where /proc is not there to read.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { ServiceSample } from './service-process.js';
import type { StoreKind } from './stores.js';

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux as built). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a /proc stat line, µs; the command name in parentheses may hold spaces. */
function statMicros(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

/** CPU time of thread `tid` of process `pid` (the main thread: tid = pid), µs. */
export function threadCpuMicros(pid = process.pid, tid = pid): number | null {
  try {
    return statMicros(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * CPU time of every process named postgres on this machine, µs (null: none, or no /proc). A
 * backend that exits between two readings takes its time with it: the service's pool keeps its
 * connections for the whole of a bench window.
 */
export function postgresCpuMicros(): number | null {
  let total = 0;
  let found = false;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!stat.includes('(postgres)')) continue;
    found = true;
    total += statMicros(stat);
  }
  return found ? total : null;
}

/**
 * Starts measuring a window's CPU beyond the service process's total, at its first sample `start`:
 * `where(end, mits)` then says, per MIT, what the service's main thread and (PostgreSQL) the
 * local server spent over the window — "" when /proc could tell neither. The server is read here,
 * in the bench's process, so that reading /proc is not counted as the service's CPU.
 */
export function cpuByWhere(kind: StoreKind, start: ServiceSample): { where(end: ServiceSample, mits: number): string } {
  const serverStart = kind === 'postgres' ? postgresCpuMicros() : null;
  return {
    where(end, mits) {
      const serverEnd = serverStart === null ? null : postgresCpuMicros();
      const windowMicros = (end.at - start.at) * 1000;
      const parts: Array<[string, number | null]> = [
        ['the service main thread', end.mainThreadMicros !== null && start.mainThreadMicros !== null ? end.mainThreadMicros - start.mainThreadMicros : null],
        ['the PostgreSQL server (every postgres process here)', serverStart !== null && serverEnd !== null ? serverEnd - serverStart : null],
      ];
      return parts
        .filter((part): part is [string, number] => part[1] !== null)
        .map(([label, micros]) => `${label} ${(micros / 1000 / mits).toFixed(3)} ms per MIT (${((micros / windowMicros) * 100).toFixed(0)} % of one CPU)`)
        .join('; ');
    },
  };
}
