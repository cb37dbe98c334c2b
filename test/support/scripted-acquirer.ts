/**
 * A scripted acquirer for tests: approves everything unless a transaction has scripted answers
 * for a kind of call (consumed in order, then approve again). Records every call, and can hold
 * calls for a while so that concurrent requests really overlap.
 */
import type { Acquirer, AcquirerCall, AcquirerResult, AuthorizeRequest, OperationRequest } from '../../src/connectors/acquirer.js';

export type CallKind = 'authorize' | 'capture' | 'refund' | 'void' | 'renew' | 'payout';
/** `timeout`: in doubt (asked again only while the call is repeatable); `unsent`: provably never sent; `in_doubt_named`: in doubt with an id (a Clearhaus 50000). */
export type ScriptedAnswer = 'approve' | 'decline' | 'timeout' | 'unsent' | 'in_doubt_named' | 'pending' | 'throw';

export interface RecordedCall {
  kind: CallKind;
  transactionId: string;
  operationId: string | null;
  attempt: number;
  amount: number;
  pan: string | null;
  /** The acquirer's id of the authorization the call went against (captures, refunds, voids). */
  authorizationReference?: string | null;
}

const codes = { terminal: null, acquirer: '00', network: '00', sca: null };

export class ScriptedAcquirer implements Acquirer {
  readonly name = 'scripted';
  readonly calls: RecordedCall[] = [];
  callTimeoutMs = 1_000;
  /** Link stored-card payments by series, as Clearhaus (default: no, as the simulator). */
  seriesReferences = false;
  /** Void part of an authorization, as the simulator. */
  partialVoids = true;
  voidsAfterCapture = true;
  /** Calls that may be sent again when in doubt (default: all, as the simulator). */
  repeatable: ReadonlySet<AcquirerCall> = new Set<AcquirerCall>(['authorize', 'capture', 'refund', 'void', 'renew', 'payout']);

  isRepeatable(call: AcquirerCall): boolean {
    return this.repeatable.has(call);
  }
  private readonly scripts = new Map<string, ScriptedAnswer[]>();
  /** Milliseconds every call takes. */
  latencyMs = 0;

  /** The next answers for `kind` calls on `transactionId`. */
  script(transactionId: string, kind: CallKind, answers: ScriptedAnswer[]): void {
    this.scripts.set(`${transactionId}:${kind}`, [...answers]);
  }

  /** The next answers for `kind` calls of any transaction without a script of its own (for transactions not created yet). */
  scriptAny(kind: CallKind, answers: ScriptedAnswer[]): void {
    this.scripts.set(`*:${kind}`, [...answers]);
  }

  callsOf(transactionId: string, kind?: CallKind): RecordedCall[] {
    return this.calls.filter((c) => c.transactionId === transactionId && (kind === undefined || c.kind === kind));
  }

  authorize(request: AuthorizeRequest): Promise<AcquirerResult> {
    return this.answer(
      'authorize',
      request.transactionId,
      null,
      request.attempt,
      request.amount,
      request.instrument.kind === 'card' ? request.instrument.pan : null,
    );
  }

  capture(r: OperationRequest): Promise<AcquirerResult> {
    return this.operation('capture', r);
  }

  refund(r: OperationRequest): Promise<AcquirerResult> {
    return this.operation('refund', r);
  }

  void(r: OperationRequest): Promise<AcquirerResult> {
    return this.operation('void', r);
  }

  renew(r: OperationRequest): Promise<AcquirerResult> {
    return this.operation('renew', r);
  }

  payout(r: OperationRequest): Promise<AcquirerResult> {
    return this.operation('payout', r);
  }

  private operation(kind: CallKind, r: OperationRequest): Promise<AcquirerResult> {
    return this.answer(
      kind,
      r.transactionId,
      r.operationId,
      r.attempt,
      r.amount,
      r.instrument.kind === 'card' ? r.instrument.pan : null,
      r.authorizationReference,
    );
  }

  private async answer(
    kind: CallKind,
    transactionId: string,
    operationId: string | null,
    attempt: number,
    amount: number,
    pan: string | null,
    authorizationReference: string | null = null,
  ): Promise<AcquirerResult> {
    this.calls.push({ kind, transactionId, operationId, attempt, amount, pan, authorizationReference });
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    // The declined test card of INTERFACE §9 declines authorizations here too (FAILED MOTO payments).
    const fallback: ScriptedAnswer = kind === 'authorize' && pan === '4000000000000002' ? 'decline' : 'approve';
    const own = this.scripts.get(`${transactionId}:${kind}`);
    const next = (own?.length ? own.shift() : this.scripts.get(`*:${kind}`)?.shift()) ?? fallback;
    switch (next) {
      case 'approve':
        return { outcome: 'approved', acquirerReference: `REF-${operationId ?? transactionId}`, externalStatusCodes: codes };
      case 'decline':
        return {
          outcome: 'declined',
          errorCode: 'DECLINED_BY_ISSUER_OR_SCHEME',
          message: 'Declined by the issuer or the card scheme.',
          externalStatusCodes: { ...codes, acquirer: '05', network: '05' },
        };
      case 'pending':
        return { outcome: 'pending', acquirerReference: `REF-${operationId ?? transactionId}`, externalStatusCodes: codes };
      case 'timeout':
        return { outcome: 'in_doubt', reason: 'scripted timeout', acquirerReference: null };
      case 'unsent':
        return { outcome: 'not_sent', reason: 'scripted: connection refused' };
      case 'in_doubt_named':
        return {
          outcome: 'in_doubt',
          reason: 'scripted 50000',
          acquirerReference: `REF-${operationId ?? transactionId}`,
          errorCode: 'ACQUIRER_DOWN',
          externalStatusCodes: { ...codes, acquirer: '50000' },
        };
      case 'throw':
        throw new Error('connection reset by the acquirer');
    }
  }
}
