import type { Clock } from '../../clock.js';
import type { DeliveryGate } from '../../delivery/delivery-gate.js';
import { newJob } from '../../jobs/catalogue.js';
import { RetryLater } from '../../jobs/job.js';
import type { Sealer } from '../../security/secret-box.js';
import { FieldErrorCollector, fieldError, notFound } from '../../shared/errors.js';
import type { EventsLog } from '../../shared/events-log.js';
import { newId } from '../../shared/ids.js';
import {
  loadSigningSecrets,
  newSigningSecret,
  openSigningSecrets,
  rotateSigningSecrets,
  type SealedSigningSecrets,
  secretsInForce,
  signatureHeaders,
  type SigningSecretsPort,
} from '../../shared/signing.js';
import { approvedDomainRule, isOnApprovedDomain } from '../points-of-sale/point-of-sale.js';
import {
  type DeliveryAttempt,
  errorRateWindowStart,
  exceedsErrorRate,
  isPaused,
  isWebhookEvent,
  MAX_WEBHOOKS_PER_MERCHANT,
  type Webhook,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookEvent,
} from './webhook.js';
import type { DeliveryWithAttempts, OutboxEventRow, StoredWebhook, UnfannedFrom, WebhooksRepository, WebhooksUnitOfWork } from './webhooks.repository.js';

export const WEBHOOK_DELIVER_JOB = 'webhooks.deliver';

/** One outbound POST; the delivery engine's sender (URL policy at connect, 5 s timeout) does the network part. */
export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}
export interface OutboundResult {
  /** Any 2xx. */
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}
export type WebhookSender = (request: OutboundRequest) => Promise<OutboundResult>;

/** The retry schedule shared with callbacks (INTERFACE §8). */
export interface RetrySchedule {
  maxAttempts: number;
  timeoutMs: number;
  /** Delay before attempt `attempt` (1-based), counted from the end of the previous one. */
  delayBeforeAttemptMs(attempt: number): number;
}

/** The delivery engine's URL policy: throws a 422 on `field` for a URL that must not be called. */
export type UrlCheck = (field: string, url: string, domain: string) => Promise<void>;

export interface WebhooksDeps {
  webhooks: WebhooksRepository;
  transaction<T>(fn: (uow: WebhooksUnitOfWork) => Promise<T>): Promise<T>;
  /** The merchant's points of sale, whose approved domains webhook URLs must be on. */
  pointsOfSale: { list(accountId: string, offset: number, limit: number): Promise<{ items: Array<{ domain: string }>; total: number }> };
  checkUrl: UrlCheck;
  sender: WebhookSender;
  /** Bounds deliveries per merchant and per destination (shared with callbacks); none: unbounded. */
  gate?: DeliveryGate;
  schedule: RetrySchedule;
  clock: Clock;
  sealer: Sealer;
  /** One `webhook.paused` line per pause, after its commit. */
  events?: EventsLog;
}

export interface CreateWebhookInput {
  url: string;
  events: string[];
  secret: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A webhook as its owner sees it alone (create, GET, rotation; never the list): with the secret that signs its deliveries. */
export interface WebhookDetail extends Webhook {
  signingSecret: string;
}

export class WebhooksService {
  constructor(private readonly deps: WebhooksDeps) {}

  async create(accountId: string, input: CreateWebhookInput): Promise<WebhookDetail> {
    const errors = new FieldErrorCollector();
    // The schema already limits names to the catalogue; this keeps the service safe on its own.
    input.events.forEach((name, i) => {
      if (!isWebhookEvent(name)) errors.add(`events.${i}`, `in:${WEBHOOK_EVENTS.join(',')}`, `unknown event ${name}`);
    });
    const domains = await this.approvedDomains(accountId);
    const domain = domains.find((d) => isOnApprovedDomain(input.url, d));
    if (domain === undefined) {
      errors.add('url', 'url', approvedDomainRule(domains));
    }
    errors.throwIfAny();
    await this.deps.checkUrl('url', input.url, domain!);

    const now = this.deps.clock.nowIso();
    const webhook: Webhook = {
      id: newId(),
      accountId,
      url: input.url,
      events: [...new Set(input.events as WebhookEvent[])],
      pausedAt: null,
      pauseReason: null,
      resumedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const sealed = this.deps.sealer.seal(input.secret);
    const signingSecret = newSigningSecret();
    const signingSealed = this.deps.sealer.seal(signingSecret);
    await this.deps.transaction(async ({ webhooks }) => {
      await webhooks.lockAccount(accountId);
      await requireRoomForActive(webhooks, accountId);
      await webhooks.insert(webhook, sealed, signingSealed);
    });
    return { ...webhook, signingSecret };
  }

  private async approvedDomains(accountId: string): Promise<string[]> {
    const domains = new Set<string>();
    for (let offset = 0; ; offset += 500) {
      const page = await this.deps.pointsOfSale.list(accountId, offset, 500);
      for (const p of page.items) domains.add(p.domain);
      if (page.items.length === 0 || offset + page.items.length >= page.total) return [...domains];
    }
  }

  async get(accountId: string, id: string): Promise<Webhook> {
    const found = await this.deps.webhooks.findById(accountId, id);
    if (!found) throw notFound('webhook');
    return found;
  }

  /** The webhook with the secret that signs its deliveries. */
  async detail(accountId: string, id: string): Promise<WebhookDetail> {
    const loaded = await loadSigningSecrets(this.signingPort(accountId, id), this.deps.sealer);
    if (!loaded) throw notFound('webhook');
    return { ...publicOf(loaded.stored), signingSecret: loaded.secrets.current };
  }

  /** A new secret for its deliveries; the replaced one keeps signing for 24 hours of service time. */
  async rotateSigningSecret(accountId: string, id: string): Promise<WebhookDetail> {
    const rotated = await rotateSigningSecrets(this.signingPort(accountId, id), this.deps.sealer, () => this.deps.clock.now());
    if (!rotated) throw notFound('webhook');
    return { ...(await this.get(accountId, id)), signingSecret: rotated.current };
  }

  private signingPort(accountId: string, id: string): SigningSecretsPort<StoredWebhook> {
    const { webhooks, clock } = this.deps;
    return {
      read: () => webhooks.findById(accountId, id),
      fill: (sealed) => webhooks.fillSigningSecret(accountId, id, sealed),
      replace: (expected, next) => webhooks.replaceSigningSecrets(accountId, id, expected, next, clock.nowIso()),
    };
  }

  list(accountId: string, offset: number, limit: number): Promise<{ items: Webhook[]; total: number }> {
    return this.deps.webhooks.list(accountId, offset, limit);
  }

  /** Deletes the webhook and cancels its pending deliveries in one commit: queued retries send nothing. */
  async delete(accountId: string, id: string): Promise<void> {
    const now = this.deps.clock.nowIso();
    const deleted = await this.deps.transaction(async ({ webhooks }) => {
      await webhooks.lockWebhook(id);
      if (!(await webhooks.markDeleted(accountId, id, now))) return false;
      await webhooks.cancelPending(id, now);
      return true;
    });
    if (!deleted) throw notFound('webhook');
  }

  async pause(accountId: string, id: string): Promise<Webhook> {
    const webhook = await this.get(accountId, id);
    if (!isPaused(webhook)) {
      const now = this.deps.clock.nowIso();
      const paused = await this.deps.transaction(async ({ webhooks }) => {
        await webhooks.lockWebhook(id);
        if (!(await webhooks.pause(id, 'PAUSED_BY_MERCHANT', now))) return false;
        await webhooks.cancelPending(id, now);
        return true;
      });
      if (paused) this.deps.events?.logEvent('webhook.paused', { webhookId: id, accountId, reason: 'PAUSED_BY_MERCHANT' });
    }
    return this.get(accountId, id);
  }

  /** Un-pauses; the error-rate window restarts now, so old failures do not pause it again at once. */
  async resume(accountId: string, id: string): Promise<Webhook> {
    const webhook = await this.get(accountId, id);
    if (isPaused(webhook)) {
      await this.deps.transaction(async ({ webhooks }) => {
        await webhooks.lockAccount(accountId);
        await requireRoomForActive(webhooks, accountId);
        await webhooks.resume(accountId, id, this.deps.clock.nowIso());
      });
    }
    return this.get(accountId, id);
  }

  async deliveries(accountId: string, webhookId: string, offset: number, limit: number): Promise<{ items: DeliveryWithAttempts[]; total: number }> {
    await this.get(accountId, webhookId);
    return this.deps.webhooks.listDeliveries(webhookId, offset, limit);
  }

  /**
   * Fan-out: each outbox event not handled yet becomes one delivery (and one job) per active
   * webhook of its merchant subscribed to it. A batch is one commit: the "handled" marks, the
   * deliveries and their jobs together. Returns the events read (the last one is where a drain
   * continues: `{ after }`); an event committed late, behind it, is found by a later run's look-back.
   */
  async fanOut(limit: number, from: UnfannedFrom): Promise<OutboxEventRow[]> {
    const events = await this.deps.webhooks.unfannedEvents(limit, from);
    if (events.length === 0) return events;
    const now = this.deps.clock.nowIso();
    await this.deps.transaction(async ({ webhooks, jobs }) => {
      const byAccount = new Map<string, Webhook[]>();
      const fanned: Array<{ event: OutboxEventRow; targets: Webhook[] }> = [];
      for (const event of events) {
        let live = byAccount.get(event.accountId);
        if (!live) byAccount.set(event.accountId, (live = await webhooks.activeWebhooks(event.accountId)));
        // Webhooks registered after the event do not get it, whenever the relay runs.
        fanned.push({ event, targets: live.filter((w) => w.createdAt <= event.createdAt && (w.events as string[]).includes(event.event)) });
      }
      // Another relay run may have handled some events meanwhile: then it owns their deliveries.
      const claimed = await webhooks.claimFanouts(
        fanned.map(({ event, targets }) => ({ event, deliveries: targets.length })),
        now,
      );
      const deliveries: WebhookDelivery[] = [];
      for (const { event, targets } of fanned) {
        if (!claimed.has(event.id) || targets.length === 0) continue;
        const body = JSON.stringify({ event: event.event, data: event.data });
        for (const w of targets) {
          deliveries.push({
            id: newId(),
            webhookId: w.id,
            accountId: event.accountId,
            eventId: event.id,
            event: event.event,
            body,
            state: 'PENDING',
            attempts: 0,
            nextAttemptAt: now,
            lastAttemptAt: null,
            createdAt: now,
            finishedAt: null,
          });
        }
      }
      await webhooks.insertDeliveries(deliveries);
      // One job per delivery: a slow or failing receiver holds only its own job.
      await jobs.enqueueMany(deliveries.map((d) => newJob(WEBHOOK_DELIVER_JOB, { deliveryId: d.id }, { dedupeKey: `${WEBHOOK_DELIVER_JOB}:${d.id}` })));
    });
    return events;
  }

  /**
   * One attempt of a delivery. Sends nothing when the delivery is no longer pending or its webhook
   * is deleted or paused. A failed attempt before the last throws RetryLater with the schedule's delay.
   * When the delivery gate is full for the merchant or the webhook's host:port it throws Deferred:
   * nothing sent, nothing recorded, and the job's attempt not counted.
   */
  async deliver(deliveryId: string): Promise<void> {
    const { webhooks } = this.deps;
    const found = await webhooks.findDeliveryWithWebhook(deliveryId);
    if (!found || found.delivery.state !== 'PENDING') return;
    const { delivery, webhook } = found;
    this.deps.gate?.check({ merchant: delivery.accountId });
    if (!webhook || webhook.deletedAt !== null || isPaused(webhook)) {
      const now = this.deps.clock.nowIso();
      await this.deps.transaction(async (uow) => {
        await uow.webhooks.lockWebhook(delivery.webhookId);
        await uow.webhooks.cancelPending(delivery.webhookId, now);
      });
      return;
    }

    const { schedule, clock } = this.deps;
    const attemptNo = delivery.attempts + 1;
    const signing = await this.signingOf(webhook);
    let attemptedAt = clock.now();
    const send = () => {
      attemptedAt = clock.now();
      return this.deps.sender({
        url: webhook.url,
        headers: {
          authorization: this.deps.sealer.open(webhook.secretSealed),
          'content-type': 'application/json',
          'x-delivery-id': delivery.id,
          'x-event-id': delivery.eventId,
          // Signed at the attempt (INTERFACE §11.10): its timestamp is the service time it is sent at.
          ...signatureHeaders(delivery.id, delivery.body, secretsInForce(signing, attemptedAt), attemptedAt),
        },
        body: delivery.body,
      });
    };
    const result = this.deps.gate ? await this.deps.gate.run({ merchant: delivery.accountId, url: webhook.url }, send) : await send();

    const finishedAt = clock.now();
    const last = attemptNo >= schedule.maxAttempts;
    const retryInMs = result.ok || last ? null : schedule.delayBeforeAttemptMs(attemptNo + 1);
    const attempt: DeliveryAttempt = {
      id: newId(),
      deliveryId: delivery.id,
      webhookId: webhook.id,
      attempt: attemptNo,
      success: result.ok,
      httpStatus: result.status,
      error: result.ok ? null : (result.error ?? `HTTP ${result.status ?? 'no answer'}`).slice(0, 500),
      durationMs: Math.max(0, Math.round(result.durationMs)),
      attemptedAt: iso(attemptedAt),
    };
    if (result.ok) {
      // Nothing follows a delivered attempt, whatever its guarded update finds (another worker
      // recorded it, or a pause or delete racing it cancelled the delivery): its record needs no
      // answer, and on PostgreSQL goes as one statement. It takes no webhook lock — else every
      // delivery of a webhook would queue behind that one row lock, each holding it for a commit.
      await this.deps.transaction((uow) =>
        uow.webhooks.recordAttemptUnanswered(attempt, { state: 'DELIVERED', nextAttemptAt: null, finishedAt: iso(finishedAt) }),
      );
      return;
    }
    const { stillPending, paused } = await this.deps.transaction(async (uow) => {
      // A failed attempt may pause the webhook and cancel its pending deliveries: it takes the
      // webhook lock first (the order every such commit keeps: webhook, then deliveries).
      await uow.webhooks.lockWebhook(webhook.id);
      const state = await uow.webhooks.recordAttempt(attempt, {
        state: last ? 'FAILED' : 'PENDING',
        nextAttemptAt: retryInMs === null ? null : iso(finishedAt + retryInMs),
        finishedAt: retryInMs === null ? iso(finishedAt) : null,
      });
      if (state === null) return { stillPending: false, paused: null }; // another worker recorded this attempt; it owns what follows
      const pause = await this.autoPause(uow, webhook, finishedAt);
      if (pause) return { stillPending: false, paused: pause.pausedNow ? pause.stats : null };
      return { stillPending: state === 'PENDING', paused: null };
    });
    if (paused) {
      this.deps.events?.logEvent('webhook.paused', {
        webhookId: webhook.id,
        accountId: webhook.accountId,
        reason: 'ERROR_RATE_TOO_HIGH',
        failedAttempts: paused.failed,
        totalAttempts: paused.total,
      });
    }
    if (stillPending && retryInMs !== null) throw new RetryLater(`webhook delivery attempt ${attemptNo} failed: ${attempt.error}`, retryInMs);
  }

  /** The webhook's signing secrets, read with it; a webhook older than signing gets its secret now. */
  private async signingOf(webhook: StoredWebhook) {
    if (webhook.signingSecretSealed !== null) return openSigningSecrets(webhook as StoredWebhook & SealedSigningSecrets, this.deps.sealer);
    const loaded = await loadSigningSecrets(this.signingPort(webhook.accountId, webhook.id), this.deps.sealer);
    if (!loaded) throw new Error(`webhook ${webhook.id}: no signing secret`);
    return loaded.secrets;
  }

  /**
   * INTERFACE §8: pauses the webhook when the window's failure rate is too high; null when it is
   * not (`pausedNow`: this commit paused it, rather than a concurrent one).
   */
  private async autoPause(
    uow: WebhooksUnitOfWork,
    webhook: Webhook,
    now: number,
  ): Promise<{ pausedNow: boolean; stats: { failed: number; total: number } } | null> {
    const stats = await uow.webhooks.deliveryStats(webhook.id, errorRateWindowStart(webhook, now));
    if (!exceedsErrorRate(stats)) return null;
    const nowIso = iso(now);
    const pausedNow = await uow.webhooks.pause(webhook.id, 'ERROR_RATE_TOO_HIGH', nowIso);
    if (pausedNow) await uow.webhooks.cancelPending(webhook.id, nowIso);
    return { pausedNow, stats };
  }
}

const publicOf = ({
  secretSealed: _s,
  deletedAt: _d,
  signingSecretSealed: _c,
  previousSigningSecretSealed: _p,
  previousSigningSecretExpiresAt: _e,
  ...webhook
}: StoredWebhook): Webhook => webhook;

/** At most 10 active (not paused) webhooks per merchant (seed §6): 422 otherwise. Call under the account lock. */
async function requireRoomForActive(webhooks: WebhooksRepository, accountId: string): Promise<void> {
  if ((await webhooks.countActive(accountId)) >= MAX_WEBHOOKS_PER_MERCHANT) {
    throw fieldError(
      'webhooks',
      `max:${MAX_WEBHOOKS_PER_MERCHANT}`,
      `a merchant has at most ${MAX_WEBHOOKS_PER_MERCHANT} active webhooks; delete or pause one first`,
    );
  }
}
