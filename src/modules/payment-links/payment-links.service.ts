/**
 * Payment links: create (a CIT session and its link in one commit), read, list and cancel. The
 * link follows its session: PAID in the engine's commit that completes the session with an
 * approved payment (`sessionPaymentFinal`, part of the SESSION effects), EXPIRED in the commit that expires the session
 * (`onSessionExpired`, plugged into the sessions module's hook). Cancelling ends the session in
 * the same commit, so the payment window refuses payment from then on.
 */
import type { Clock } from '../../clock.js';
import { AppError, notFound, withNewIdsOnCollision } from '../../shared/errors.js';
import { newUnguessableId } from '../../shared/ids.js';
import type { Session } from '../sessions/session.js';
import type { CreateSessionInput, SessionRepos } from '../sessions/sessions.service.js';
import type { Transaction } from '../transactions/transaction.js';
import { nextPaymentLinkState, PAYMENT_LINK_TIMEOUT_MINUTES, type PaymentLink, type PaymentLinkEvent } from './payment-link.js';
import type { PaymentLinkFilter, PaymentLinksRepository } from './payment-links.repository.js';

/** Repositories a link change needs in one commit (the session's and the link's). */
export interface PaymentLinkRepos extends SessionRepos {
  paymentLinks: PaymentLinksRepository;
}

export interface PaymentLinksDeps {
  links: PaymentLinksRepository;
  transaction<T>(fn: (repos: PaymentLinkRepos) => Promise<T>): Promise<T>;
  /** The sessions module: the link's session is created, read (expiry) and cancelled through it. */
  sessions: {
    create(accountId: string, input: CreateSessionInput, inCommit: (repos: PaymentLinkRepos, session: Session) => Promise<void>): Promise<Session>;
    get(accountId: string, id: string): Promise<Session>;
    cancelInCommit(repos: PaymentLinkRepos, accountId: string, sessionId: string): Promise<Session>;
  };
  clock: Clock;
}

/** At most this many overdue links are expired before a list is read (the expiry jobs do the rest). */
const EXPIRE_ON_LIST = 100;

export class PaymentLinksService {
  constructor(private readonly deps: PaymentLinksDeps) {}

  /** POST /payment-links: the body of POST /cit, validated by the sessions module. */
  async create(accountId: string, input: CreateSessionInput): Promise<PaymentLink> {
    let link: PaymentLink | null = null;
    await withNewIdsOnCollision('payment_links', () =>
      this.deps.sessions.create(accountId, { ...input, timeout: input.timeout ?? PAYMENT_LINK_TIMEOUT_MINUTES.default }, async (repos, session) => {
        link = {
          // The transaction-id format (INTERFACE §11.5), every character random: the public page
          // is found by id alone. Links made before it keep their UUID.
          id: newUnguessableId(),
          accountId,
          sessionId: session.id,
          clientKey: session.clientKey,
          pointOfSaleId: session.pointOfSaleId,
          state: 'ACTIVE',
          amount: session.amount,
          currency: session.currency,
          reference: session.reference,
          customerId: session.customerId,
          transactionId: null,
          expiresAt: session.expiresAt,
          stateChangedAt: session.createdAt,
          createdAt: session.createdAt,
          updatedAt: session.createdAt,
        };
        await repos.paymentLinks.insert(link);
      }),
    );
    return link!;
  }

  /** GET: 404 for another merchant's; an overdue ACTIVE link is expired (with its session) on read. */
  async get(accountId: string, id: string): Promise<PaymentLink> {
    const link = await this.deps.links.findById(accountId, id);
    if (!link) throw notFound('payment link');
    return this.expireIfDue(link);
  }

  async list(accountId: string, filter: PaymentLinkFilter, offset: number, limit: number): Promise<{ items: PaymentLink[]; total: number }> {
    // Expire overdue links first, so that a `state` filter and the items agree.
    for (const link of await this.deps.links.listOverdue(accountId, this.deps.clock.nowIso(), EXPIRE_ON_LIST)) await this.expireIfDue(link);
    return this.deps.links.list(accountId, filter, offset, limit);
  }

  /**
   * DELETE: ACTIVE → CANCELLED and the session ended (MANUAL_ABORTED) in one commit. Cancelling
   * a cancelled link answers the same; a PAID or EXPIRED link, or one whose payment is in
   * flight, is a 409 and nothing changes.
   */
  async cancel(accountId: string, id: string): Promise<PaymentLink> {
    await this.get(accountId, id);
    return this.deps.transaction(async (repos) => {
      const current = await repos.paymentLinks.findById(accountId, id);
      if (!current) throw notFound('payment link');
      const next = nextPaymentLinkState(current.state, 'cancel');
      if (!next) throw new AppError('CONFLICT', `The payment link is ${current.state}; only an ACTIVE payment link can be cancelled.`);
      if (current.state === next) return current;
      const changed = await this.change(repos, current, 'cancel', {});
      if (!changed) throw new AppError('CONFLICT', 'The payment link changed meanwhile; retry the request.');
      // Throws (and so rolls the link back) while a payment of the session is in flight.
      await this.deps.sessions.cancelInCommit(repos, accountId, current.sessionId);
      return changed;
    });
  }

  /**
   * Part of the SESSION effects, after the session's own (services.ts): in the commit that makes a
   * session's payment final, a link whose session just completed with it becomes PAID.
   */
  async sessionPaymentFinal(repos: PaymentLinkRepos, transaction: Transaction): Promise<void> {
    if (transaction.state !== 'SUCCESS' || !transaction.sessionId) return;
    const link = await repos.paymentLinks.findBySessionId(transaction.accountId, transaction.sessionId);
    if (!link || link.state !== 'ACTIVE') return;
    const session = await repos.sessions.findById(transaction.accountId, transaction.sessionId);
    if (session?.state !== 'COMPLETED' || session.transactionId !== transaction.id) return;
    await this.change(repos, link, 'pay', { transactionId: transaction.id });
  }

  /** Sessions hook, inside the commit that expires the session (time ran out or every attempt failed). */
  async onSessionExpired(repos: PaymentLinkRepos, session: Pick<Session, 'id' | 'accountId'>): Promise<void> {
    const link = await repos.paymentLinks.findBySessionId(session.accountId, session.id);
    if (link && nextPaymentLinkState(link.state, 'expire')) await this.change(repos, link, 'expire', {});
  }

  /** Reading the session expires it when due; the sessions hook then expires the link in that commit. */
  private async expireIfDue(link: PaymentLink): Promise<PaymentLink> {
    if (link.state !== 'ACTIVE' || Date.parse(link.expiresAt) > this.deps.clock.now()) return link;
    await this.deps.sessions.get(link.accountId, link.sessionId);
    return (await this.deps.links.findById(link.accountId, link.id)) ?? link;
  }

  /** One transition through the table, as a conditional update on the state read. */
  private async change(repos: PaymentLinkRepos, link: PaymentLink, event: PaymentLinkEvent, extra: { transactionId?: string }): Promise<PaymentLink | null> {
    const next = nextPaymentLinkState(link.state, event);
    if (!next) return null;
    const now = this.deps.clock.nowIso();
    const changes = { ...extra, state: next, stateChangedAt: now, updatedAt: now };
    return (await repos.paymentLinks.updateIfState(link.accountId, link.id, link.state, changes)) ? { ...link, ...changes } : null;
  }
}
