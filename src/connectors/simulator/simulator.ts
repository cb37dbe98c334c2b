/**
 * The sandbox acquirer: answers every call from the scenario table in ./test-cards.ts after a
 * configurable delay (PAYMENTS_SANDBOX_LATENCY_MS). Deterministic: the same request gives the
 * same answer, so every call is repeatable — a call in doubt (the timeout card) is asked again and
 * answered as an acquirer with idempotent replay would.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Acquirer, AcquirerCall, AcquirerResult, AuthorizeRequest, Initiator, Instrument, OperationRequest, ScaResult } from '../acquirer.js';
import { type CardScenario, DECLINE_MESSAGES, type OperationKind, type Outcome, RAW_CODES, TEST_CARDS } from './test-cards.js';

const APPROVE: Outcome = { kind: 'approve' };
/** INTERFACE §11.1: no SCA tried; a 3-D Secure challenge passed; one failed. */
const NO_SCA: ScaResult = { rejected: false, type: 'UNKNOWN', verification: 'NONE' };
const CHALLENGED: ScaResult = { rejected: false, type: '3DS', verification: 'CHALLENGED' };
const CHALLENGE_FAILED: ScaResult = { rejected: true, type: '3DS', verification: 'CHALLENGED' };
/** The 3-D Secure transStatus of a challenge (externalStatusCodes.sca): authenticated or not. */
const SCA_CODE = { passed: 'Y', failed: 'N' } as const;
const REJECTED_BY_SCA: Outcome = { kind: 'decline', errorCode: 'REJECTED_BY_SCA' };

function scenarioOf(instrument: Instrument): CardScenario | null {
  return instrument.kind === 'card' ? (TEST_CARDS[instrument.pan] ?? null) : null;
}

/** The table lookup: the initiator-specific authorization row wins over the generic one. */
export function outcomeFor(instrument: Instrument, kind: OperationKind, initiator: Initiator | null): Outcome {
  const scenario = scenarioOf(instrument);
  if (!scenario) return APPROVE;
  if (kind === 'authorize' && initiator && scenario.authorizeBy?.[initiator]) return scenario.authorizeBy[initiator];
  return scenario.outcomes[kind] ?? APPROVE;
}

/** A reference the acquirer would give: stable for the same (transaction, operation). */
function reference(key: string): string {
  return `SBX${createHash('sha256').update(key).digest('hex').slice(0, 17).toUpperCase()}`;
}

export class SimulatorAcquirer implements Acquirer {
  readonly name = 'sandbox';
  readonly callTimeoutMs: number;
  /** The sandbox keeps no series: its MITs need no reference to an earlier authorization. */
  readonly seriesReferences = false;
  readonly partialVoids = true;
  readonly voidsAfterCapture = true;

  /** `ledgerPath`: the acquirer's own record of authorizations (one JSON line each), read by crash tests. */
  constructor(
    private readonly latencyMs: number,
    private readonly ledgerPath: string | null = null,
  ) {
    this.callTimeoutMs = latencyMs + 1_000;
  }

  /** Every call: the same request gets the same answer. */
  isRepeatable(_call: AcquirerCall): boolean {
    return true;
  }

  async authorize(request: AuthorizeRequest): Promise<AcquirerResult> {
    const scenario = scenarioOf(request.instrument);
    // SCA applies to CIT with scaMode NORMAL or FORCE; every other flow sends SKIP (or null).
    const challenge = scenario?.scaChallenge && (request.scaMode === 'NORMAL' || request.scaMode === 'FORCE') ? scenario.scaChallenge : null;
    const sca = challenge === 'pass' ? CHALLENGED : challenge === 'fail' ? CHALLENGE_FAILED : NO_SCA;
    const outcome = challenge === 'fail' ? REJECTED_BY_SCA : outcomeFor(request.instrument, 'authorize', request.initiator);
    const scaCode = challenge === 'pass' ? SCA_CODE.passed : challenge === 'fail' ? SCA_CODE.failed : null;
    const result = await this.answer(outcome, request.attempt, `${request.transactionId}:authorize`, { sca, scaCode });
    if (this.ledgerPath) {
      // Synchronous append: the line is on disk before the service sees the answer, so a crash right after cannot lose it.
      const entry = {
        pid: process.pid,
        transactionId: request.transactionId,
        attempt: request.attempt,
        initiator: request.initiator,
        amount: request.amount,
        outcome: result.outcome,
        acquirerReference: result.outcome === 'approved' ? result.acquirerReference : null,
      };
      appendFileSync(this.ledgerPath, `${JSON.stringify(entry)}\n`);
    }
    return result;
  }

  capture(request: OperationRequest): Promise<AcquirerResult> {
    return this.operation('capture', request);
  }

  refund(request: OperationRequest): Promise<AcquirerResult> {
    return this.operation('refund', request);
  }

  void(request: OperationRequest): Promise<AcquirerResult> {
    return this.operation('void', request);
  }

  renew(request: OperationRequest): Promise<AcquirerResult> {
    return this.operation('renew', request);
  }

  payout(request: OperationRequest): Promise<AcquirerResult> {
    return this.operation('payout', request);
  }

  private operation(kind: OperationKind, request: OperationRequest): Promise<AcquirerResult> {
    return this.answer(outcomeFor(request.instrument, kind, null), request.attempt, `${request.operationId}:${kind}`, null);
  }

  /** `authentication`: the SCA result of an authorization and its raw code (null for other operations). */
  private async answer(
    outcome: Outcome,
    attempt: number,
    key: string,
    authentication: { sca: ScaResult; scaCode: string | null } | null,
  ): Promise<AcquirerResult> {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const sca = authentication?.sca;
    const scaCode = authentication?.scaCode ?? null;
    if (outcome.kind === 'timeout' && attempt <= outcome.attempts)
      return { outcome: 'in_doubt', reason: 'the sandbox acquirer did not answer in time', acquirerReference: null };
    if (outcome.kind === 'decline') {
      const raw = RAW_CODES[outcome.errorCode] ?? RAW_CODES.DECLINED_BY_ISSUER_OR_SCHEME!;
      return {
        outcome: 'declined',
        errorCode: outcome.errorCode,
        message: DECLINE_MESSAGES[outcome.errorCode] ?? 'Declined by the acquirer.',
        externalStatusCodes: { terminal: null, acquirer: raw.acquirer, network: raw.network, sca: scaCode },
        ...(sca ? { sca } : {}),
      };
    }
    const raw = RAW_CODES.APPROVED!;
    return {
      outcome: 'approved',
      acquirerReference: reference(key),
      externalStatusCodes: { terminal: null, acquirer: raw.acquirer, network: raw.network, sca: scaCode },
      ...(sca ? { sca } : {}),
    };
  }
}
