import type { JobQueue } from '../../jobs/job.js';
import type { SealedSigningSecrets, StoredSigningSecrets } from '../../shared/signing.js';
import type { DeliveryAttempt, DeliveryState, PauseReason, Webhook, WebhookDelivery } from './webhook.js';

/** What an attempt leaves its delivery in (applied only while the delivery is PENDING). */
export type AttemptOutcome = Pick<WebhookDelivery, 'state' | 'nextAttemptAt' | 'finishedAt'>;

export interface StoredWebhook extends Webhook, StoredSigningSecrets {
  secretSealed: string;
  deletedAt: string | null;
}

/** An event of the outbox (migration 004), as the fan-out reads it. */
export interface OutboxEventRow {
  id: string;
  accountId: string;
  event: string;
  data: unknown;
  createdAt: string;
}

export interface DeliveryWithAttempts extends WebhookDelivery {
  attemptLog: DeliveryAttempt[];
}

/** Where a fan-out reads from: a look-back behind the newest event fanned out, or after a drain's last event. */
export type UnfannedFrom = { lookbackMs: number } | { after: Pick<OutboxEventRow, 'id' | 'createdAt'> };

export interface WebhooksRepository {
  /** Serializes webhook creation per merchant (the 10-webhook limit); a no-op where writes are already serial. */
  lockAccount(accountId: string): Promise<void>;
  /**
   * Locks the webhook row until commit. Every commit that changes a webhook and its deliveries
   * takes this first, so that they always lock in the same order (webhook, then deliveries).
   */
  lockWebhook(id: string): Promise<void>;
  /** Webhooks not deleted (paused included). */
  /** Webhooks neither deleted nor paused: the ones the limit of 10 counts. */
  countActive(accountId: string): Promise<number>;
  /** Without `signingSecretSealed` the webhook gets its signing secret on first need (as one stored before migration 028). */
  insert(webhook: Webhook, secretSealed: string, signingSecretSealed?: string): Promise<void>;
  /** Sets the signing secret of a webhook stored before migration 028, only where none is. */
  fillSigningSecret(accountId: string, id: string, signingSecretSealed: string): Promise<void>;
  /** Replaces its signing secrets while the current one is still `expected` (and it is not deleted); false otherwise. */
  replaceSigningSecrets(accountId: string, id: string, expected: string, next: SealedSigningSecrets, now: string): Promise<boolean>;
  /** A webhook of this merchant that is not deleted. */
  findById(accountId: string, id: string): Promise<StoredWebhook | null>;
  list(accountId: string, offset: number, limit: number): Promise<{ items: Webhook[]; total: number }>;
  markDeleted(accountId: string, id: string, now: string): Promise<boolean>;
  /** Pauses when not paused yet (and not deleted); false when nothing changed. */
  pause(id: string, reason: PauseReason, now: string): Promise<boolean>;
  resume(accountId: string, id: string, now: string): Promise<boolean>;

  /** Live, unpaused webhooks of the merchant. */
  activeWebhooks(accountId: string): Promise<Webhook[]>;
  /**
   * Outbox events not fanned out yet, oldest first: from `lookbackMs` before the newest event fanned
   * out (all of them when none is), or, in the middle of a drain, after the last event of the
   * previous batch (so a long drain reads each event once).
   */
  unfannedEvents(limit: number, from: UnfannedFrom): Promise<OutboxEventRow[]>;
  /**
   * Marks each event as fanned out to its `deliveries` webhooks, in one statement; returns the ids
   * of those this call marked (the others another relay run had marked already).
   */
  claimFanouts(claims: Array<{ event: Pick<OutboxEventRow, 'id' | 'createdAt'>; deliveries: number }>, now: string): Promise<Set<string>>;
  insertDeliveries(deliveries: WebhookDelivery[]): Promise<void>;

  /** A delivery with its webhook in one read, the webhook deleted or not (null when its row is gone): what a delivery job decides from. */
  findDeliveryWithWebhook(id: string): Promise<{ delivery: WebhookDelivery; webhook: StoredWebhook | null } | null>;
  /**
   * Records one attempt, guarded by the attempt count it was read with (two workers never record
   * the same attempt), and applies the new state only while the delivery is still PENDING (a
   * delete during the send has already cancelled it). Returns the delivery's state afterwards,
   * or null when the guard did not match and nothing was recorded.
   */
  recordAttempt(attempt: DeliveryAttempt, update: AttemptOutcome): Promise<DeliveryState | null>;
  /**
   * recordAttempt for a caller that needs nothing back (a delivered attempt: whatever the guard
   * finds, nothing follows): the same writes, sent with the commit — on PostgreSQL a commit of it
   * alone is one statement, without BEGIN and COMMIT.
   */
  recordAttemptUnanswered(attempt: DeliveryAttempt, update: AttemptOutcome): Promise<void>;
  /** Cancels every PENDING delivery of the webhook; returns how many. */
  cancelPending(webhookId: string, now: string): Promise<number>;
  /** Deliveries of the webhook attempted since `since` (inclusive), and how many of them no attempt there delivered. */
  deliveryStats(webhookId: string, since: string): Promise<{ total: number; failed: number }>;
  listDeliveries(webhookId: string, offset: number, limit: number): Promise<{ items: DeliveryWithAttempts[]; total: number }>;
}

/** The repositories a webhook use case needs inside one database transaction. */
export interface WebhooksUnitOfWork {
  webhooks: WebhooksRepository;
  jobs: JobQueue;
}
