/**
 * The 3dsecure.io sandbox's browser cases (shared/acquirers/3dsecure-io.md §2.8, the scheme of repo
 * HEAD since Nov 2023): the last four digits of the PAN select the behaviour, the other digits are
 * free, so the same PANs work against the fake and the real sandbox.
 *
 *   1st  versions       0 all (2.1.0, 2.2.0, 2.3.1)   1 only 2.1.0   2 only 2.2.0   3 only 2.3.1
 *   2nd  3DS Method      0 URL offered, completes      1 no URL       2 URL offered, never calls back
 *   3rd  outcome         0 Y  1 N  2 A  3 R  4 I (2.2+)  5 U  6 DS timeout (Erro 405)  7 challenge C
 *   4th  with 3rd = 7:   0 auto-pass (RReq Y)  1 auto-fail (RReq N)  2 manual page (Y, N or cancel)
 *        otherwise:      3
 *
 * Anything else (e.g. 4111111111111111, last-4 1111), and the generic `9000100111111111`, is
 * not enrolled: /preauth answers Erro 305 `Unknown BIN`. [INFERENCE, §2.8] "matches none of these
 * gives an error". The fake also treats `I` with a 2.1.0-only range (`1x43`) and decoupled (`xx83`,
 * an unmerged branch only) as no case.
 */
import type { MessageVersion } from './wire.js';

export type MethodMode = 'present' | 'absent' | 'timeout';
export type CaseOutcome = 'Y' | 'N' | 'A' | 'R' | 'I' | 'U' | 'ds-timeout' | 'C';
/**
 * How the ACS challenge ends: the PAN's 4th digit (pass, fail, manual), or a mode set for the PAN
 * with `fake.setChallengeMode` — also cancel (cardholder cancels: CRes N, RReq N challengeCancel
 * 01), erro (an Erro posted as `cres`, no RReq), abandon (the page never posts, no RReq) and
 * cres-mismatch (the CRes says Y, the RReq N: §5 item 29, the RReq wins).
 */
export type ChallengeMode = 'pass' | 'fail' | 'manual' | 'cancel' | 'erro' | 'abandon' | 'cres-mismatch';

export interface ThreeDSCase {
  last4: string;
  /** The ACS's protocol versions (the DS's are all three). */
  acsVersions: readonly MessageVersion[];
  method: MethodMode;
  outcome: CaseOutcome;
  /** For outcome C. */
  challenge?: 'pass' | 'fail' | 'manual';
  /** A PAN starting with 5 or 2: ECI 02 / 01 instead of 05 / 06. */
  mastercardLike: boolean;
}

/** What the fake's DS supports. */
export const DS_VERSIONS: readonly MessageVersion[] = ['2.1.0', '2.2.0', '2.3.1'];

const RANGES: Record<string, readonly MessageVersion[]> = { '0': ['2.1.0', '2.2.0', '2.3.1'], '1': ['2.1.0'], '2': ['2.2.0'], '3': ['2.3.1'] };
const METHODS: Record<string, MethodMode> = { '0': 'present', '1': 'absent', '2': 'timeout' };
const OUTCOMES: Record<string, CaseOutcome> = { '0': 'Y', '1': 'N', '2': 'A', '3': 'R', '4': 'I', '5': 'U', '6': 'ds-timeout', '7': 'C' };
const CHALLENGES: Record<string, 'pass' | 'fail' | 'manual'> = { '0': 'pass', '1': 'fail', '2': 'manual' };

/** §2.8: the generic not-enrolled PAN. */
export const NOT_ENROLLED_PAN = '9000100111111111';

/** §2.8: the documented example PANs (all fail Luhn, as the sandbox's do). */
export const SANDBOX_PANS = {
  /** 2.1–2.3.1, method times out (threeDSCompInd N), frictionless Y; Mastercard-like. */
  methodTimeout: '5000100411110203',
  /** 2.2, method, frictionless Y. */
  frictionless: '4000100511112003',
  /** 2.1, no method (threeDSCompInd U), frictionless Y. */
  frictionlessNoMethod: '6000100611111103',
  /** 2.1, method, manual challenge. */
  manualChallenge: '3000100811111072',
  /** 2.2, method, challenge passes (RReq Y). */
  challengePass: '7000100911112070',
  /** 2.1, method, challenge fails (RReq N). */
  challengeFail: '3000101011111071',
  notEnrolled: NOT_ENROLLED_PAN,
} as const;

/** The case a PAN selects, or undefined (not enrolled: Erro 305). */
export function caseOf(pan: string): ThreeDSCase | undefined {
  if (pan === NOT_ENROLLED_PAN || !/^[0-9]{13,19}$/.test(pan)) return undefined;
  const last4 = pan.slice(-4);
  const [d1, d2, d3, d4] = last4.split('') as [string, string, string, string];
  const acsVersions = RANGES[d1];
  const method = METHODS[d2];
  const outcome = OUTCOMES[d3];
  if (!acsVersions || !method || !outcome) return undefined;
  const base = { last4, acsVersions, method, outcome, mastercardLike: /^[25]/.test(pan) };
  if (outcome === 'C') {
    const challenge = CHALLENGES[d4];
    return challenge ? { ...base, challenge } : undefined;
  }
  if (d4 !== '3') return undefined;
  if (outcome === 'I' && !acsVersions.some((v) => v !== '2.1.0')) return undefined;
  return base;
}

export interface SandboxPanSpec {
  versions?: 'all' | '2.1.0' | '2.2.0' | '2.3.1';
  method?: MethodMode;
  outcome: CaseOutcome;
  /** With outcome C (default 'pass'). */
  challenge?: 'pass' | 'fail' | 'manual';
  /** The free leading digits (default `400010051111`, Visa-like; start with 5 or 2 for Mastercard-like). */
  prefix?: string;
}

/** A PAN selecting a case (for tests and browser tests): `sandboxPan({ outcome: 'C', challenge: 'manual' })`. */
export function sandboxPan(spec: SandboxPanSpec): string {
  const d1 = { all: '0', '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' }[spec.versions ?? 'all'];
  const d2 = { present: '0', absent: '1', timeout: '2' }[spec.method ?? 'present'];
  const d3 = Object.entries(OUTCOMES).find(([, o]) => o === spec.outcome)![0];
  const d4 = spec.outcome === 'C' ? { pass: '0', fail: '1', manual: '2' }[spec.challenge ?? 'pass'] : '3';
  const pan = `${spec.prefix ?? '400010051111'}${d1}${d2}${d3}${d4}`;
  if (!caseOf(pan)) throw new Error(`sandboxPan: no such case (${JSON.stringify(spec)})`);
  return pan;
}
