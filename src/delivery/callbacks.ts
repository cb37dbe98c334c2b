/**
 * Callback delivery (INTERFACE §8). The payment pipeline enqueues one `callback.deliver` job per
 * final state in the commit that reached it; this job fixes the NotificationWebhook body on its
 * first run (so every retry sends the same document under the same X-Delivery-Id), POSTs it with
 * the point of sale's Authorization value, records every attempt, and retries on the schedule of
 * §8 (attempt n ≥ 3 after 2^n s, capped at 3 h; 25 attempts in all), spread so that a failing
 * receiver's retries do not all come back in the same instant:
 * - attempt n ≥ 3: 2^n s ± 10 % (uniform), never above the 3 h cap;
 * - attempt 2: not in the instant attempt 1 ended but 250–1000 ms after it (uniform). §8 says
 *   "attempts 1 and 2 at once"; we read that as "no backoff before attempt 2" and keep it prompt,
 *   but it goes back through the queue and the delivery gate like any attempt — rather than
 *   retrying in the same runner slot, back to back, against a receiver that just failed.
 * Each attempt waits at most 5 s (http-sender.ts). The delivery gate (delivery-gate.ts) bounds
 * the deliveries under way per merchant and per destination; a callback that finds it full is put
 * back in the queue (Deferred) without counting an attempt, so the 25 attempts stay real ones.
 */
import type { Clock } from '../clock.js';
import { defineJob, newJob } from '../jobs/catalogue.js';
import type { JobContext, JobDefinition, JobQueue, NewJob } from '../jobs/job.js';
import { callbackRetryDelay } from '../jobs/retry-schedules.js';
import type { DeliveryGate } from './delivery-gate.js';
import { notFound } from '../shared/errors.js';
import { type EventsLog, hostOf } from '../shared/events-log.js';
import { newId } from '../shared/ids.js';
import type { UnitKind } from '../shared/unit-of-work.js';
import type { PointOfSaleWithSecret } from '../modules/points-of-sale/point-of-sale.js';
import { secretsInForce, signatureHeaders, type SigningSecrets } from '../shared/signing.js';
import { CALLBACK_JOB, CALLBACK_MAX_ATTEMPTS, type CallbackJobPayload, callbackJob, type KnownToCallback } from '../modules/transactions/payment-engine.js';
import type { NotificationBuilder } from '../modules/transactions/notification.js';
import type { Transaction } from '../modules/transactions/transaction.js';
import type { TransactionsRepository } from '../modules/transactions/transactions.repository.js';
import type { HttpSender } from './http-sender.js';
import type { Notification, NotificationAttempt, NotificationsRepository } from './notification.js';

// The schedule lives with the job catalogue; re-exported for the delivery's users.
export { callbackBackoff, callbackRetryDelay, RETRY_JITTER, SECOND_ATTEMPT_DELAY_MS } from '../jobs/retry-schedules.js';

/** `resend`: a merchant-requested resend, sent even when an earlier attempt was delivered. */
export type CallbackJobData = CallbackJobPayload;

/** What writing a callback in the commit of a final state needs (the pipeline's repositories). */
export interface CallbackRepos {
  transactions: TransactionsRepository;
  notifications: NotificationsRepository;
  jobs: JobQueue;
  pointsOfSale: { findById(accountId: string, id: string): Promise<{ webhookAuthenticationSealed: string } | null> };
}

export interface CallbackDeps<R extends CallbackRepos> {
  notifications: NotificationsRepository;
  /** One commit: an attempt, the notification's counters and the job's outcome (a 'delivery-record'). */
  transaction<T>(fn: (repos: R) => Promise<T>, kind?: UnitKind): Promise<T>;
  findTransaction(accountId: string, id: string): Promise<Transaction | null>;
  pointsOfSale: {
    /** Only for callbacks queued before their row kept the Authorization value (migration 013). */
    getWithSecret(accountId: string, id: string): Promise<PointOfSaleWithSecret | null>;
    /** The secrets that sign the point of sale's callbacks (INTERFACE §11.10), read at most once a second per process. */
    signingSecrets(accountId: string, id: string): Promise<SigningSecrets | null>;
  };
  builder: NotificationBuilder<R>;
  sender: HttpSender;
  /** Opens the sealed Authorization value kept with the row. */
  sealer: { open(sealed: string): string };
  /** Bounds deliveries per merchant and per destination; none: unbounded. */
  gate?: DeliveryGate;
  clock: Clock;
  /** One `callback.attempt` line per recorded attempt. */
  events?: EventsLog;
}

export interface NotificationView {
  notification: Notification;
  attempts: NotificationAttempt[];
}

export class CallbackDelivery<R extends CallbackRepos> {
  constructor(private readonly deps: CallbackDeps<R>) {}

  job(): JobDefinition<CallbackJobData> {
    return defineJob(CALLBACK_JOB, (payload, ctx) => this.deliver(payload, ctx));
  }

  /**
   * In the commit that made `tx` final (the pipeline calls it): the delivery row with its complete
   * NotificationWebhook body and the sealed Authorization value, and its job. Once per final state.
   * `known`: what the caller already read (the engine's drive read): not read again. `queuedAt`: the
   * job's place in the queue (callbackJob), by default now.
   */
  async scheduleInCommit(repos: R, tx: Transaction, known: KnownToCallback = {}, queuedAt?: number, entered = false): Promise<void> {
    const job = await this.writeInCommit(repos, tx, known, queuedAt, entered);
    if (job) await repos.jobs.enqueue(job);
  }

  /** scheduleInCommit without the enqueue: the row is written, its job is the caller's to enqueue (null: no callback). */
  async writeInCommit(repos: R, tx: Transaction, known: KnownToCallback = {}, queuedAt?: number, entered = false): Promise<NewJob | null> {
    if (!tx.notificationUrl) return null;
    const authorization =
      known.webhookAuthenticationSealed !== undefined
        ? known.webhookAuthenticationSealed
        : ((await repos.pointsOfSale.findById(tx.accountId, tx.pointOfSaleId))?.webhookAuthenticationSealed ?? null);
    const now = this.deps.clock.nowIso();
    const body = JSON.stringify(await this.deps.builder.build(tx, repos, known));
    const notification = this.newNotification(tx, tx.state, body, now, authorization);
    // Written without asking whether the row is new (addIfAbsent): a second schedule of the same state finds the row
    // and the job's dedupe key taken, and a job whose row was not inserted does nothing.
    await repos.notifications.addIfAbsent(notification);
    // A row of a state the transaction has just entered is new: its job, handed to this process's
    // runner, starts from it (NewJob.known) instead of reading it back.
    return callbackJob(tx, notification.id, queuedAt, entered ? notification : undefined);
  }

  /**
   * One attempt. The attempt, the row's counters and the job's outcome (done, retry or dead) are
   * one commit. Throws Deferred (nothing sent, nothing recorded) when the delivery gate is full for
   * the merchant or destination.
   */
  async deliver(payload: CallbackJobData, ctx: Pick<JobContext, 'attempt' | 'settleIn'> & { job?: { known?: Notification } }): Promise<void> {
    const { deps } = this;
    // Before any read: a merchant at its bound costs the queue one claim and one update, no more.
    deps.gate?.check({ merchant: payload.accountId });
    const notification =
      ctx.job?.known ??
      (payload.notificationId ? await deps.notifications.findById(payload.accountId, payload.notificationId) : await this.legacyNotification(payload));
    if (!notification) return;
    if (notification.state === 'DELIVERED' && !payload.resend) return;
    deps.gate?.check({ merchant: notification.accountId, url: notification.url });
    const signing = await this.signingSecretsOf(notification);
    const send = async () => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-delivery-id': notification.id,
        'user-agent': 'payments-service-callbacks/1',
      };
      const authorization = await this.authorizationOf(notification);
      if (authorization !== null) headers.authorization = authorization;
      // Signed at the attempt (INTERFACE §11.10): the timestamp is the service time it is sent at,
      // with the secrets in force then (the replaced one too, for a day after a rotation).
      if (signing) {
        const now = deps.clock.now();
        Object.assign(headers, signatureHeaders(notification.id, notification.body, secretsInForce(signing, now), now));
      }
      return deps.sender.post(notification.url, headers, notification.body);
    };
    const result = deps.gate ? await deps.gate.run({ merchant: notification.accountId, url: notification.url }, send) : await send();
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const exhausted = ctx.attempt >= CALLBACK_MAX_ATTEMPTS;
    const now = deps.clock.now();
    const retryAt = delivered || exhausted ? null : now + callbackRetryDelay(ctx.attempt);
    const at = new Date(now).toISOString();
    const error = delivered ? null : (result.error ?? `HTTP ${result.status}`);
    await deps.transaction(async (repos) => {
      await repos.notifications.recordAttempt(
        {
          id: newId(),
          notificationId: notification.id,
          statusCode: result.status,
          error,
          durationMs: result.durationMs,
          createdAt: at,
        },
        {
          state: delivered ? 'DELIVERED' : exhausted ? 'FAILED' : 'PENDING',
          lastStatus: result.status,
          lastError: error,
          nextAttemptAt: retryAt === null ? null : new Date(retryAt).toISOString(),
          deliveredAt: delivered ? at : null,
          updatedAt: at,
        },
        { resend: payload.resend === true },
      );
      await ctx.settleIn(repos.jobs, delivered ? { done: true } : { error: `callback not delivered: ${error}`, retryAt });
    }, 'delivery-record');
    deps.events?.logEvent('callback.attempt', {
      transactionId: notification.transactionId,
      accountId: notification.accountId,
      notificationId: notification.id,
      callbackEvent: notification.event,
      host: hostOf(notification.url),
      status: result.status,
      durationMs: Math.round(result.durationMs),
      attempt: notification.attempts + 1,
      delivered,
      exhausted: !delivered && exhausted,
    });
  }

  /**
   * The signing secrets of the callback's point of sale. Its id is the body's (the NotificationWebhook
   * names it: no read of the transaction); a body without it falls back to the transaction.
   */
  private async signingSecretsOf(notification: Notification): Promise<SigningSecrets | null> {
    let pointOfSaleId: unknown;
    try {
      pointOfSaleId = (JSON.parse(notification.body) as { transaction?: { pointOfSaleId?: unknown } }).transaction?.pointOfSaleId;
    } catch {
      pointOfSaleId = undefined;
    }
    if (typeof pointOfSaleId !== 'string') {
      pointOfSaleId = (await this.deps.findTransaction(notification.accountId, notification.transactionId))?.pointOfSaleId;
    }
    return typeof pointOfSaleId === 'string' ? this.deps.pointsOfSale.signingSecrets(notification.accountId, pointOfSaleId) : null;
  }

  private async authorizationOf(notification: Notification): Promise<string | null> {
    if (notification.authorizationSealed) return this.deps.sealer.open(notification.authorizationSealed);
    const tx = await this.deps.findTransaction(notification.accountId, notification.transactionId);
    const pointOfSale = tx ? await this.deps.pointsOfSale.getWithSecret(tx.accountId, tx.pointOfSaleId) : null;
    return pointOfSale?.webhookAuthentication ?? null;
  }

  /** A job queued before rows were written in the final commit: its row, created with its body on the first attempt. */
  private async legacyNotification(payload: CallbackJobData): Promise<Notification | null> {
    const tx = await this.deps.findTransaction(payload.accountId, payload.transactionId);
    if (!tx || !tx.notificationUrl) return null;
    const existing = (await this.deps.notifications.listForTransaction(tx.accountId, tx.id)).find((n) => n.event === payload.event);
    if (existing) return existing;
    const body = JSON.stringify(await this.deps.builder.build(tx));
    return this.deps.notifications.insertOnce(this.newNotification(tx, payload.event, body, this.deps.clock.nowIso(), null));
  }

  private newNotification(tx: Transaction, event: string, body: string, now: string, authorizationSealed: string | null): Notification {
    return {
      id: newId(),
      accountId: tx.accountId,
      transactionId: tx.id,
      event,
      url: tx.notificationUrl!,
      state: 'PENDING',
      body,
      attempts: 0,
      lastStatus: null,
      lastError: null,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
      deliveredAt: null,
      authorizationSealed,
    };
  }

  async list(accountId: string, transactionId: string): Promise<NotificationView[]> {
    const tx = await this.deps.findTransaction(accountId, transactionId);
    if (!tx) throw notFound('transaction');
    const notifications = await this.deps.notifications.listForTransaction(accountId, transactionId);
    const attempts = await this.deps.notifications.attemptsOf(notifications.map((n) => n.id));
    return notifications.map((notification) => ({ notification, attempts: attempts.filter((a) => a.notificationId === notification.id) }));
  }

  /** Sends the same notification again (same X-Delivery-Id), with a fresh retry schedule. */
  async resend(accountId: string, transactionId: string, notificationId: string): Promise<NotificationView> {
    const notification = await this.deps.notifications.findById(accountId, notificationId);
    if (!notification || notification.transactionId !== transactionId) throw notFound('notification');
    const at = this.deps.clock.nowIso();
    const payload: CallbackJobData = { accountId, transactionId, event: notification.event, notificationId, resend: true };
    await this.deps.transaction(async ({ notifications, jobs }) => {
      await notifications.markPending(notification.id, at);
      await jobs.enqueue(newJob(CALLBACK_JOB, payload, { dedupeKey: `${CALLBACK_JOB}:resend:${newId()}` }));
    });
    const view = (await this.list(accountId, transactionId)).find((v) => v.notification.id === notificationId);
    return view!;
  }
}

declare module '../jobs/catalogue.js' {
  interface KnownByKind {
    /** The delivery row the scheduling commit wrote (a state the transaction had just entered). */
    'callback.deliver': Notification;
  }
}
