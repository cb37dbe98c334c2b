/**
 * A transaction's whole life as one ordered list (issue 12): creation, state changes, operations
 * and their acquirer answers (raw codes included), the domain events it caused, every callback
 * attempt to its notificationUrl and every webhook delivery attempt of those events.
 *
 * Read-only and assembled in memory: a transaction has a bounded number of each (operations are
 * limited by its amount, callbacks by one per final state and 25 attempts, webhooks by 10 per
 * merchant), so the page is cut from the full, ordered list.
 */
import type { ExternalStatusCodes, Transaction } from './transaction.js';
import type { TransactionsService } from './transactions.service.js';

export interface TimelineCallback {
  id: string;
  event: string;
  url: string;
  state: string;
  createdAt: string;
  attempts: Array<{ id: string; attempt: number; statusCode: number | null; error: string | null; durationMs: number; createdAt: string }>;
}

export interface TimelineOutboxEvent {
  id: string;
  event: string;
  createdAt: string;
  /** The event's `data`, parsed. */
  data: unknown;
}

export interface TimelineWebhookDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  event: string;
  state: string;
  createdAt: string;
  attempts: Array<{ id: string; attempt: number; success: boolean; httpStatus: number | null; error: string | null; durationMs: number; attemptedAt: string }>;
}

/** The storage port the timeline reads through (src/storage/repositories/timeline.ts). */
export interface TimelineRepository {
  callbacksOf(accountId: string, transactionId: string): Promise<TimelineCallback[]>;
  /** Outbox events of the merchant created at or after `since` whose data mentions the transaction id. */
  eventsMentioning(accountId: string, transactionId: string, since: string): Promise<TimelineOutboxEvent[]>;
  deliveriesOf(accountId: string, eventIds: string[]): Promise<TimelineWebhookDelivery[]>;
  /** The 3-D Secure steps in the payment window that led to the transaction (INTERFACE §13), oldest first. */
  threeDSStepsOf(accountId: string, transactionId: string): Promise<TimelineThreeDSStep[]>;
}

/** One 3-D Secure step: its transStatus (or decision) and reason, never an authentication value. */
export interface TimelineThreeDSStep {
  step: string;
  at: string;
  status: string | null;
  detail: string | null;
}

export const TIMELINE_KINDS = [
  'THREE_DS_STEP',
  'TRANSACTION_CREATED',
  'STATE_CHANGED',
  'OPERATION_STARTED',
  'OPERATION_FINISHED',
  'EVENT',
  'CALLBACK_QUEUED',
  'CALLBACK_ATTEMPT',
  'WEBHOOK_DELIVERY_QUEUED',
  'WEBHOOK_DELIVERY_ATTEMPT',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** One entry; fields that do not apply to its kind are null. */
export interface TimelineEntry {
  id: string;
  kind: TimelineKind;
  at: string;
  /** Transaction state (TRANSACTION_CREATED, STATE_CHANGED), operation state, callback or delivery state. */
  state: string | null;
  amount: number | null;
  currency: string | null;
  operationId: string | null;
  operationType: string | null;
  errorCode: string | null;
  /** The acquirer / network / terminal / SCA raw codes of the answer. */
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  /** Event name (EVENT, WEBHOOK_DELIVERY_*) or the final state a callback reports (CALLBACK_*). */
  event: string | null;
  url: string | null;
  webhookId: string | null;
  deliveryId: string | null;
  attempt: number | null;
  /** HTTP status answered by the receiver; null when none came (timeout, refused connection). */
  statusCode: number | null;
  durationMs: number | null;
  /** What went wrong with a delivery attempt (error text or `HTTP <status>`), at most 300 characters. */
  excerpt: string | null;
}

/** At the same instant, the order a payment's life runs in: created, operations, the state they caused, events, deliveries. */
const RANK: Record<TimelineKind, number> = {
  THREE_DS_STEP: -1,
  TRANSACTION_CREATED: 0,
  OPERATION_STARTED: 1,
  OPERATION_FINISHED: 1,
  STATE_CHANGED: 2,
  EVENT: 3,
  CALLBACK_QUEUED: 4,
  CALLBACK_ATTEMPT: 5,
  WEBHOOK_DELIVERY_QUEUED: 6,
  WEBHOOK_DELIVERY_ATTEMPT: 7,
};

/** Every field an entry may leave empty, empty: an entry is these with its own fields over them. */
export const EMPTY_TIMELINE_FIELDS = {
  state: null,
  amount: null,
  currency: null,
  operationId: null,
  operationType: null,
  errorCode: null,
  externalStatusCodes: null,
  acquirerReference: null,
  event: null,
  url: null,
  webhookId: null,
  deliveryId: null,
  attempt: null,
  statusCode: null,
  durationMs: null,
  excerpt: null,
} as const satisfies Omit<TimelineEntry, 'id' | 'kind' | 'at'>;

function entry(kind: TimelineKind, id: string, at: string, fields: Partial<TimelineEntry>): TimelineEntry {
  return { id, kind, at, ...EMPTY_TIMELINE_FIELDS, ...fields };
}

const excerpt = (text: string | null): string | null => (text === null ? null : text.slice(0, 300));

/** True when an event's data is about this transaction (`{transaction: {id}}` or a list of transaction ids). */
function concerns(data: unknown, transactionId: string): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const record = data as { transaction?: { id?: unknown }; transactionIds?: unknown };
  if (record.transaction?.id === transactionId) return true;
  return Array.isArray(record.transactionIds) && record.transactionIds.includes(transactionId);
}

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Chronological order; at the same instant by RANK, operations in the order they were created
 * (an instant capture starts in the millisecond its authorization ends) and each started before
 * it finished, then by id.
 */
export function orderTimeline(entries: TimelineEntry[], operationCreatedAt: ReadonlyMap<string, string> = new Map()): TimelineEntry[] {
  const opKey = (e: TimelineEntry) => (e.operationId === null ? '' : `${operationCreatedAt.get(e.operationId) ?? ''}|${e.operationId}`);
  const step = (e: TimelineEntry) => (e.kind === 'OPERATION_FINISHED' ? 1 : 0);
  return [...entries].sort(
    (a, b) => compare(a.at, b.at) || RANK[a.kind] - RANK[b.kind] || compare(opKey(a), opKey(b)) || step(a) - step(b) || compare(a.id, b.id),
  );
}

export class TimelineService {
  constructor(private readonly deps: { transactions: Pick<TransactionsService, 'detail'>; timeline: TimelineRepository }) {}

  /** The full ordered timeline of the merchant's transaction; NOT_FOUND for anyone else's. */
  async of(accountId: string, transactionId: string): Promise<TimelineEntry[]> {
    const { transaction, operations } = await this.deps.transactions.detail(accountId, transactionId);
    const [callbacks, candidates, threeDS] = await Promise.all([
      this.deps.timeline.callbacksOf(accountId, transaction.id),
      this.deps.timeline.eventsMentioning(accountId, transaction.id, transaction.createdAt),
      this.deps.timeline.threeDSStepsOf(accountId, transaction.id),
    ]);
    const events = candidates.filter((e) => concerns(e.data, transaction.id));
    const deliveries = await this.deps.timeline.deliveriesOf(
      accountId,
      events.map((e) => e.id),
    );

    const entries: TimelineEntry[] = [...transactionEntries(transaction)];
    // `event` names the step (PREAUTH, METHOD, ARES, CHALLENGE, RREQ, DECISION), `state` its transStatus or decision.
    threeDS.forEach((s, i) =>
      entries.push(
        entry('THREE_DS_STEP', `${transaction.id}:3ds:${i}`, s.at, {
          event: s.step,
          state: s.status,
          excerpt: excerpt(s.detail),
          externalStatusCodes: s.step === 'ARES' || s.step === 'RREQ' ? { terminal: null, acquirer: null, network: null, sca: s.status } : null,
        }),
      ),
    );
    for (const op of operations) {
      const common = { operationId: op.id, operationType: op.type, amount: op.amount, currency: transaction.currency };
      entries.push(entry('OPERATION_STARTED', `${op.id}:started`, op.createdAt, { ...common, state: 'PROCESSING' }));
      if (op.finalizedAt) {
        entries.push(
          entry('OPERATION_FINISHED', `${op.id}:finished`, op.finalizedAt, {
            ...common,
            state: op.state,
            errorCode: op.errorCode,
            externalStatusCodes: op.externalStatusCodes,
            acquirerReference: op.acquirerReference,
          }),
        );
      }
    }
    for (const e of events) entries.push(entry('EVENT', e.id, e.createdAt, { event: e.event }));
    for (const cb of callbacks) {
      entries.push(entry('CALLBACK_QUEUED', cb.id, cb.createdAt, { event: cb.event, url: cb.url, state: cb.state }));
      for (const a of cb.attempts) {
        entries.push(
          entry('CALLBACK_ATTEMPT', a.id, a.createdAt, {
            event: cb.event,
            url: cb.url,
            state: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300 ? 'DELIVERED' : 'FAILED',
            attempt: a.attempt,
            statusCode: a.statusCode,
            durationMs: a.durationMs,
            excerpt: excerpt(a.error),
          }),
        );
      }
    }
    for (const d of deliveries) {
      const common = { event: d.event, webhookId: d.webhookId, deliveryId: d.id };
      entries.push(entry('WEBHOOK_DELIVERY_QUEUED', d.id, d.createdAt, { ...common, state: d.state }));
      for (const a of d.attempts) {
        entries.push(
          entry('WEBHOOK_DELIVERY_ATTEMPT', a.id, a.attemptedAt, {
            ...common,
            state: a.success ? 'DELIVERED' : 'FAILED',
            attempt: a.attempt,
            statusCode: a.httpStatus,
            durationMs: a.durationMs,
            excerpt: excerpt(a.error),
          }),
        );
      }
    }
    return orderTimeline(entries, new Map(operations.map((op) => [op.id, op.createdAt])));
  }
}

function transactionEntries(tx: Transaction): TimelineEntry[] {
  const created = entry('TRANSACTION_CREATED', `${tx.id}:created`, tx.createdAt, { amount: tx.amount, currency: tx.currency });
  if (!tx.finalizedAt) return [created];
  return [
    created,
    entry('STATE_CHANGED', `${tx.id}:final`, tx.finalizedAt, {
      state: tx.state,
      amount: tx.amount,
      currency: tx.currency,
      errorCode: tx.errorCode,
      externalStatusCodes: tx.externalStatusCodes,
      acquirerReference: tx.acquirerReference,
    }),
  ];
}
