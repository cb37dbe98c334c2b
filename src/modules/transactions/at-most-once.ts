/**
 * At most once on the wire (INTERFACE §12.4). An acquirer without idempotency keys (Clearhaus) may
 * move the money again for a request sent twice, so before such a request goes out its fact is
 * committed (acquirer_requests): a process that finds it later — a drive job run again after a
 * crash, or the safety net of a synchronous payment whose call is still under way — never sends it
 * again. It waits while the first sender may still be waiting for its answer, then calls the
 * outcome in doubt. A request that provably never left (connection refused) is forgotten, so the
 * drive job may send it later. Repeatable connectors (the simulator) are called as they are.
 *
 * A request that names the latest authorization of a card's series (INTERFACE §12.3) claims the
 * series first, and is sent with the reference the claim read: while one is on the
 * wire, the next payment of the card waits (`wait`), so it names the authorization that one leaves.
 */
import type { Clock } from '../../clock.js';
import type { AcquirerCall, AcquirerResult } from '../../connectors/acquirer.js';
import type { AcquirerRoute } from './acquirer-routing.js';
import type { AcquirerRequestsRepository } from './acquirer-requests.repository.js';
import type { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository.js';
import type { Operation, Transaction } from './transaction.js';

/** An acquirer's final answer. */
export type Answer = Extract<AcquirerResult, { outcome: 'approved' | 'declined' }>;

/**
 * What sending came to: the acquirer's result, or `wait` — another sender's request may still be
 * answered before `untilMs`, or (`seriesHeld`) another payment of the card is on the wire: nothing
 * was written, nothing sent.
 */
export type Sent = AcquirerResult | { outcome: 'wait'; untilMs: number; seriesHeld?: true };

/** Beyond the connector's own timeout, how long a sender may take to record its answer before nobody expects it. */
export const SENDER_GRACE_MS = 15_000;

/** How soon a payment whose card's series is on the wire looks again (an answer usually takes well under a second). */
export const SERIES_WAIT_MS = 250;

/** The stored card whose series a request names (its latest approved authorization is read when it is claimed). */
export interface SeriesOf {
  paymentMethodId: string;
}

export interface AtMostOnceDeps<R> {
  transaction<T>(fn: (repos: R) => Promise<T>): Promise<T>;
  requests: AcquirerRequestsRepository;
  clock: Clock;
}

type Repos = {
  acquirerRequests: AcquirerRequestsRepository;
  paymentMethods: Pick<PaymentMethodsRepository, 'releaseSeries'>;
};

export class AtMostOnce<R extends Repos> {
  constructor(private readonly deps: AtMostOnceDeps<R>) {}

  /**
   * Sends `call` at most once. `series`: the request names the latest authorization of that card's
   * series; `send` gets the reference read when the series was claimed.
   */
  async send(
    route: AcquirerRoute,
    call: AcquirerCall,
    tx: Transaction,
    op: Operation,
    send: (seriesReference: string | null) => Promise<AcquirerResult>,
    series?: SeriesOf,
  ): Promise<Sent> {
    if (route.acquirer.isRepeatable(call)) return send(null);
    const nowMs = this.deps.clock.now();
    const sentAt = new Date(nowMs).toISOString();
    // The record (with the series claim) is written by itself, without a transaction to hold a connection for.
    const request = {
      operationId: op.id,
      accountId: tx.accountId,
      transactionId: tx.id,
      acquirer: route.acquirer.name,
      call,
      amount: op.amount,
      currency: tx.currency,
      sentAt,
    };
    let reference: string | null = null;
    let recorded: boolean;
    if (series) {
      const staleBefore = new Date(nowMs - route.acquirer.callTimeoutMs - SENDER_GRACE_MS).toISOString();
      ({ reference, recorded } = await this.deps.requests.recordSendingInSeries(request, { paymentMethodId: series.paymentMethodId, staleBefore }));
      if (reference === null) return { outcome: 'wait', untilMs: nowMs + SERIES_WAIT_MS, seriesHeld: true };
    } else {
      recorded = await this.deps.requests.recordSending(request);
    }
    if (!recorded) return this.sentBefore(route, op);
    const result = await send(reference);
    if (result.outcome === 'not_sent') {
      await this.deps.transaction(async (repos) => {
        await repos.acquirerRequests.forgetUnsent(op.id);
        if (series) await repos.paymentMethods.releaseSeries(tx.accountId, series.paymentMethodId, op.id);
      });
    }
    return result;
  }

  /** A request for `op` was recorded before: its answer may still come to its sender, or it never will. */
  private async sentBefore(route: AcquirerRoute, op: Operation): Promise<Sent> {
    const earlier = await this.deps.requests.find(op.id);
    if (earlier?.inDoubtAt) return { outcome: 'in_doubt', reason: earlier.inDoubtReason ?? 'in doubt', acquirerReference: earlier.acquirerReference };
    const sentAt = earlier?.sentAt ?? this.deps.clock.nowIso();
    const untilMs = Date.parse(sentAt) + route.acquirer.callTimeoutMs + SENDER_GRACE_MS;
    if (this.deps.clock.now() < untilMs) return { outcome: 'wait', untilMs };
    return {
      outcome: 'in_doubt',
      reason: `a request sent at ${sentAt} has no recorded answer (its sender stopped before recording one)`,
      acquirerReference: null,
    };
  }
}
