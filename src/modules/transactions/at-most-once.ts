/**
 * At most once on the wire (INTERFACE §12.4). An acquirer without idempotency keys (Clearhaus) may
 * move the money again for a request sent twice, so before such a request goes out its fact is
 * committed (acquirer_requests): a process that finds it later — a drive job run again after a
 * crash, or the safety net of a synchronous payment whose call is still under way — never sends it
 * again. It waits while the first sender may still be waiting for its answer, then calls the
 * outcome in doubt. A request that provably never left (connection refused) is forgotten, so the
 * drive job may send it later. Repeatable connectors (the simulator) are called as they are.
 */
import type { Clock } from '../../clock.js';
import type { AcquirerCall, AcquirerResult } from '../../connectors/acquirer.js';
import type { AcquirerRoute } from './acquirer-routing.js';
import type { AcquirerRequestsRepository } from './acquirer-requests.repository.js';
import type { Operation, Transaction } from './transaction.js';

/** An acquirer's final answer. */
export type Answer = Extract<AcquirerResult, { outcome: 'approved' | 'declined' }>;

/** What sending came to: the acquirer's result, or `wait` — another sender's request may still be answered before `untilMs`. */
export type Sent = AcquirerResult | { outcome: 'wait'; untilMs: number };

/** Beyond the connector's own timeout, how long a sender may take to record its answer before nobody expects it. */
export const SENDER_GRACE_MS = 15_000;

export interface AtMostOnceDeps<R> {
  transaction<T>(fn: (repos: R) => Promise<T>): Promise<T>;
  requests: AcquirerRequestsRepository;
  clock: Clock;
}

export class AtMostOnce<R extends { acquirerRequests: AcquirerRequestsRepository }> {
  constructor(private readonly deps: AtMostOnceDeps<R>) {}

  async send(route: AcquirerRoute, call: AcquirerCall, tx: Transaction, op: Operation, send: () => Promise<AcquirerResult>): Promise<Sent> {
    if (route.acquirer.isRepeatable(call)) return send();
    const sentAt = this.deps.clock.nowIso();
    const recorded = await this.deps.transaction((repos) =>
      repos.acquirerRequests.recordSending({
        operationId: op.id,
        accountId: tx.accountId,
        transactionId: tx.id,
        acquirer: route.acquirer.name,
        call,
        amount: op.amount,
        currency: tx.currency,
        sentAt,
      }),
    );
    if (!recorded) return this.sentBefore(route, op);
    const result = await send();
    if (result.outcome === 'not_sent') await this.deps.transaction((repos) => repos.acquirerRequests.forgetUnsent(op.id));
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
