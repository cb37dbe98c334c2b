/**
 * The sandbox acquirer: answers every call from the scenario table in ./test-cards.ts after a
 * configurable delay (PAYMENTS_SANDBOX_LATENCY_MS). Deterministic: the same request gives the
 * same answer, so retries after a timeout behave like a real acquirer's idempotent replay.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Acquirer, AcquirerResult, AuthorizeRequest, Initiator, Instrument, OperationRequest, ScaResult } from '../acquirer.js';
import { type CardScenario, DECLINE_MESSAGES, type OperationKind, type Outcome, RAW_CODES, TEST_CARDS } from './test-cards.js';

const APPROVE: Outcome = { kind: 'approve' };
const NO_SCA: ScaResult = { rejected: false, type: null, verification: null };
const CHALLENGED: ScaResult = { rejected: false, type: 'CHALLENGE', verification: 'CHALLENGED' };

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

  /** `ledgerPath`: the acquirer's own record of authorizations (one JSON line each), read by crash tests. */
  constructor(
    private readonly latencyMs: number,
    private readonly ledgerPath: string | null = null,
  ) {}

  async authorize(request: AuthorizeRequest): Promise<AcquirerResult> {
    const scenario = scenarioOf(request.instrument);
    // The caller passes scaMode only where SCA applies (CIT); MIT and MOTO send null.
    const challenged = scenario?.scaChallenge === true && (request.scaMode === 'NORMAL' || request.scaMode === 'FORCE');
    const sca = challenged ? CHALLENGED : NO_SCA;
    const outcome = outcomeFor(request.instrument, 'authorize', request.initiator);
    const result = await this.answer(outcome, request.attempt, `${request.transactionId}:authorize`, sca);
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
    return this.answer(outcomeFor(request.instrument, kind, null), request.attempt, `${request.operationId}:${kind}`, undefined);
  }

  private async answer(outcome: Outcome, attempt: number, key: string, sca: ScaResult | undefined): Promise<AcquirerResult> {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const scaCode = sca && sca.verification ? sca.verification : null;
    if (outcome.kind === 'timeout' && attempt <= outcome.attempts) return { outcome: 'timeout' };
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
