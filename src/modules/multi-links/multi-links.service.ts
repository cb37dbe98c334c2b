/**
 * Multi-links (INTERFACE §11.3): create, read, list, deactivate, and visit — the public page that
 * starts a new CIT session from the link's settings through the sessions module (the one way a
 * session is made) and forwards the customer to its payment window. The link is checked when it
 * is created the way a session would check it (point of sale, approved-domain URLs, subscription
 * and billing plan), so that a visit does not fail on what the merchant could have been told.
 */
import type { Clock } from '../../clock.js';
import type { Effect } from '../../shared/effect.js';
import { AppError, EXISTING, FieldErrorCollector, type FieldRule, notFound, withNewIdsOnCollision } from '../../shared/errors.js';
import { newUnguessableId } from '../../shared/ids.js';
import { DAY_MS, parseInstant } from '../../shared/time.js';
import { approvedDomainRule, isOnApprovedDomain, type PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Session } from '../sessions/session.js';
import type { CreateSessionInput, SessionRepos } from '../sessions/sessions.service.js';
import type { IntervalPeriod, SubscriptionType } from '../subscriptions/subscription.js';
import { type MultiLink, type MultiLinkSubscription, nextMultiLinkState, type OrderLine } from './multi-link.js';
import type { MultiLinkFilter, MultiLinksRepository } from './multi-links.repository.js';

/** Repositories a link change needs in one commit (at runtime: the store's full set). */
export interface MultiLinkRepos extends SessionRepos {
  multiLinks: MultiLinksRepository;
}

/**
 * What a started session is asked for: the /cit input, plus the §11.2 settings of the link. The
 * sessions module takes the ones it knows (today: those of CreateSessionInput and `orderLines`).
 */
export type MultiLinkSessionInput = CreateSessionInput & {
  reportExpired?: boolean | null;
  dynamicAmount?: boolean | null;
  retryUrl?: string | null;
  returnUrl?: string | null;
  allowedPaymentMethods?: string[] | null;
  ageVerification?: { minimumAge: number; country: string } | null;
};

export interface MultiLinksDeps {
  links: MultiLinksRepository;
  transaction<T>(fn: (repos: MultiLinkRepos) => Promise<T>): Promise<T>;
  pointsOfSale: { get(accountId: string, id: string): Promise<PointOfSale> };
  /** Callback URL rule (approved domain; no private address outside sandbox): 422 on `field`. */
  urlPolicy: { check(field: string, url: string, domain: string): Promise<void> };
  /** A billing plan of the account (its currency), or null. */
  billingPlans: { find(accountId: string, id: string): Promise<{ currency: string } | null> };
  /**
   * The sessions module: a visit's session, created without taking redirect or notification URLs
   * from the point of sale; `inCommit` runs in the commit that inserts it.
   */
  sessions: {
    create(accountId: string, input: MultiLinkSessionInput, inCommit: (repos: MultiLinkRepos, session: Session) => Promise<void>): Promise<Session>;
  };
  clock: Clock;
}

export interface CreateMultiLinkInput {
  pointOfSaleId: string;
  amount: number;
  currency: string;
  reference?: string | null | undefined;
  scaMode?: string | null | undefined;
  timeout?: number | null | undefined;
  instantCapture?: string | null | undefined;
  textOnStatement?: string | null | undefined;
  attributes?: Record<string, string> | null | undefined;
  reportFailure?: boolean | null | undefined;
  reportExpired?: boolean | null | undefined;
  dynamicAmount?: boolean | null | undefined;
  notificationUrl?: string | null | undefined;
  successUrl?: string | null | undefined;
  failureUrl?: string | null | undefined;
  retryUrl?: string | null | undefined;
  returnUrl?: string | null | undefined;
  allowedPaymentMethods?: string[] | null | undefined;
  ageVerification?: { minimumAge: number; country: string } | null | undefined;
  orderLines?:
    | Array<{ description: string; imageUrl?: string | null | undefined; quantity: number; unitPrice: number; totalAmount: number; type: string }>
    | null
    | undefined;
  subscription?:
    | {
        type: SubscriptionType;
        amount?: number | null | undefined;
        expiryDate?: string | null | undefined;
        interval?: { period: IntervalPeriod; frequency: number } | null | undefined;
        billingAgreement?: { billingPlanId: string; nextChargeAt?: string | null | undefined } | null | undefined;
      }
    | null
    | undefined;
}

/** What a visit of the link's page comes to. */
export type VisitResult =
  | { kind: 'started'; session: Session }
  /** No link with this id. */
  | { kind: 'not-found' }
  /** Deactivated: the page says so (410). */
  | { kind: 'gone' }
  /** The link's settings no longer make a valid session (e.g. its billing agreement's first charge date has passed). */
  | { kind: 'unavailable' };

const REDIRECT_FIELDS = ['successUrl', 'failureUrl', 'retryUrl', 'returnUrl'] as const;

/** Thrown inside a visit's commit when the link was deactivated meanwhile: the session is rolled back. */
class DeactivatedMeanwhile extends Error {}

export class MultiLinksService {
  constructor(private readonly deps: MultiLinksDeps) {}

  /** POST /multi-links. A retry resuming after a crash answers the link it created. */
  async create(accountId: string, input: CreateMultiLinkInput, effect: Effect | null = null): Promise<MultiLink> {
    if (effect?.resumed) {
      const existing = await this.deps.links.findByIdempotencyKey(accountId, effect.key);
      if (existing) return existing;
    }
    const errors = new FieldErrorCollector();
    const pos = await this.pointOfSale(accountId, input.pointOfSaleId, errors);
    if (pos) await this.checkUrls(input, pos, errors);
    const subscription = await this.subscription(accountId, input, errors);
    if (input.amount === 0 && !subscription) {
      errors.add('amount', 'min:1', 'must be at least 1 unless the link asks for a subscription (a multi-link has no customer to store a card for)');
    }
    errors.throwIfAny();

    const now = this.deps.clock.nowIso();
    const allowed = input.allowedPaymentMethods?.length ? [...new Set(input.allowedPaymentMethods)] : null;
    const orderLines: OrderLine[] | null = input.orderLines?.length
      ? input.orderLines.map((l) => ({
          description: l.description,
          imageUrl: l.imageUrl ?? null,
          quantity: l.quantity,
          unitPrice: l.unitPrice,
          totalAmount: l.totalAmount,
          type: l.type,
        }))
      : null;
    const link: Omit<MultiLink, 'id'> = {
      accountId,
      pointOfSaleId: input.pointOfSaleId,
      state: 'ACTIVE',
      amount: input.amount,
      currency: input.currency,
      reference: input.reference ?? null,
      subscription,
      scaMode: input.scaMode ?? null,
      timeout: input.timeout ?? null,
      instantCapture: input.instantCapture ?? null,
      textOnStatement: input.textOnStatement ?? null,
      attributes: input.attributes ?? null,
      reportFailure: input.reportFailure ?? null,
      reportExpired: input.reportExpired ?? null,
      dynamicAmount: input.dynamicAmount ?? null,
      notificationUrl: input.notificationUrl ?? null,
      successUrl: input.successUrl ?? null,
      failureUrl: input.failureUrl ?? null,
      retryUrl: input.retryUrl ?? null,
      returnUrl: input.returnUrl ?? null,
      allowedPaymentMethods: allowed,
      ageVerification: input.ageVerification ? { minimumAge: input.ageVerification.minimumAge, country: input.ageVerification.country } : null,
      orderLines,
      idempotencyKey: effect?.key ?? null,
      stateChangedAt: now,
      createdAt: now,
      updatedAt: now,
    };
    // The link and its order lines in one commit, under a new id.
    return withNewIdsOnCollision('multi_links', async () => {
      const made: MultiLink = { id: newUnguessableId(), ...link };
      await this.deps.transaction((repos) => repos.multiLinks.insert(made));
      return made;
    });
  }

  /** GET: 404 for another merchant's. */
  async get(accountId: string, id: string): Promise<MultiLink> {
    const link = await this.deps.links.findById(accountId, id);
    if (!link) throw notFound('multi-link');
    return link;
  }

  /** The link behind a public page (QR code): any account's, by the id the customer has. */
  publicView(id: string): Promise<MultiLink | null> {
    return this.deps.links.findByIdAnyAccount(id);
  }

  list(accountId: string, filter: MultiLinkFilter, offset: number, limit: number): Promise<{ items: MultiLink[]; total: number }> {
    return this.deps.links.list(accountId, filter, offset, limit);
  }

  /** DELETE: ACTIVE → DEACTIVATED; a deactivated link answers the same. Sessions it started are untouched. */
  async deactivate(accountId: string, id: string): Promise<MultiLink> {
    const current = await this.get(accountId, id);
    const next = nextMultiLinkState(current.state, 'deactivate');
    if (!next) throw new AppError('CONFLICT', `The multi-link is ${current.state}; it cannot be deactivated.`);
    if (next === current.state) return current;
    const now = this.deps.clock.nowIso();
    const changes = { state: next, stateChangedAt: now, updatedAt: now };
    if (await this.deps.links.updateIfState(accountId, id, current.state, changes)) return { ...current, ...changes };
    // Deactivated by a concurrent request: answer what is stored.
    return this.get(accountId, id);
  }

  /**
   * The public page: a new session from the link's settings on every visit. The link's state is
   * read again in the session's commit, so that a visit racing a deactivation starts nothing.
   */
  async visit(id: string): Promise<VisitResult> {
    const link = await this.deps.links.findByIdAnyAccount(id);
    if (!link) return { kind: 'not-found' };
    if (link.state !== 'ACTIVE') return { kind: 'gone' };
    try {
      const session = await this.deps.sessions.create(link.accountId, sessionInput(link), async (repos) => {
        const current = await repos.multiLinks.findById(link.accountId, link.id);
        if (current?.state !== 'ACTIVE') throw new DeactivatedMeanwhile();
      });
      return { kind: 'started', session };
    } catch (err) {
      if (err instanceof DeactivatedMeanwhile) return { kind: 'gone' };
      // The settings were valid when the link was made; what changed since is the merchant's to fix.
      if (err instanceof AppError && (err.code === 'VALIDATION_ERROR' || err.code === 'NOT_FOUND' || err.code === 'CONFLICT')) {
        return { kind: 'unavailable' };
      }
      throw err;
    }
  }

  private async pointOfSale(accountId: string, id: string, errors: FieldErrorCollector): Promise<PointOfSale | null> {
    const pos = await this.deps.pointsOfSale.get(accountId, id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    if (!pos) errors.add('pointOfSaleId', EXISTING, 'no point of sale with this id exists');
    else if (pos.type !== 'ONLINE') errors.add('pointOfSaleId', 'in:ONLINE', 'must be an ONLINE point of sale');
    return pos?.type === 'ONLINE' ? pos : null;
  }

  /** Redirect URLs on the approved domain; the notification URL also passes the delivery policy. */
  private async checkUrls(input: CreateMultiLinkInput, pos: PointOfSale, errors: FieldErrorCollector): Promise<void> {
    for (const field of REDIRECT_FIELDS) {
      const url = input[field];
      if (url && !isOnApprovedDomain(url, pos.domain)) errors.add(field, 'url', approvedDomainRule(pos.domain));
    }
    if (!input.notificationUrl) return;
    await this.deps.urlPolicy.check('notificationUrl', input.notificationUrl, pos.domain).catch((err: unknown) => {
      if (!(err instanceof AppError) || !err.errors) throw err;
      for (const [field, messages] of Object.entries(err.errors))
        for (const m of messages) errors.add(field, m.slice(1, m.indexOf(']')) as FieldRule, m.slice(m.indexOf(']') + 3));
    });
  }

  /** The subscription each session asks for; its billing plan must exist in the link's currency. */
  private async subscription(accountId: string, input: CreateMultiLinkInput, errors: FieldErrorCollector): Promise<MultiLinkSubscription | null> {
    const s = input.subscription;
    if (!s) return null;
    if (s.type === 'SCHEDULED' && !s.interval) errors.add('subscription.interval', 'required', 'is required for a SCHEDULED subscription');
    let billingAgreement: MultiLinkSubscription['billingAgreement'] = null;
    if (s.billingAgreement) {
      const field = 'subscription.billingAgreement';
      const plan = await this.deps.billingPlans.find(accountId, s.billingAgreement.billingPlanId);
      if (!plan) errors.add(`${field}.billingPlanId`, EXISTING, 'no billing plan with this id exists');
      else if (plan.currency !== input.currency) {
        errors.add(`${field}.billingPlanId`, `in:${input.currency}`, `the plan is in ${plan.currency} but the link is in ${input.currency}`);
      }
      let nextChargeAt: string | null = null;
      if (s.billingAgreement.nextChargeAt) {
        let at: number | null = null;
        try {
          at = parseInstant(s.billingAgreement.nextChargeAt);
        } catch {
          errors.add(`${field}.nextChargeAt`, 'date', 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time');
        }
        const today = Math.floor(this.deps.clock.now() / DAY_MS) * DAY_MS;
        if (at !== null && at < today) errors.add(`${field}.nextChargeAt`, 'date', `must not be before today (${new Date(today).toISOString().slice(0, 10)})`);
        if (at !== null) nextChargeAt = new Date(at).toISOString();
      }
      billingAgreement = { billingPlanId: s.billingAgreement.billingPlanId, nextChargeAt };
    }
    return {
      type: s.type,
      amount: s.amount ?? null,
      expiryDate: s.expiryDate ?? null,
      // An interval belongs to SCHEDULED subscriptions only (as on POST /cit).
      interval: s.type === 'SCHEDULED' ? (s.interval ?? null) : null,
      billingAgreement,
    };
  }
}

/** The link's settings as the input of a new session; null settings are the point of sale's. */
export function sessionInput(link: MultiLink): MultiLinkSessionInput {
  const s = link.subscription;
  const subscription = s && {
    type: s.type,
    amount: s.amount,
    expiryDate: s.expiryDate,
    interval: s.interval,
    billingAgreement: s.billingAgreement && { billingPlanId: s.billingAgreement.billingPlanId, nextChargeAt: s.billingAgreement.nextChargeAt },
  };
  return {
    pointOfSaleId: link.pointOfSaleId,
    amount: link.amount,
    currency: link.currency,
    reference: link.reference,
    scaMode: link.scaMode,
    timeout: link.timeout,
    instantCapture: link.instantCapture,
    textOnStatement: link.textOnStatement,
    attributes: link.attributes,
    reportFailure: link.reportFailure,
    notificationUrl: link.notificationUrl,
    successUrl: link.successUrl,
    failureUrl: link.failureUrl,
    orderLines: link.orderLines,
    subscription,
    reportExpired: link.reportExpired,
    dynamicAmount: link.dynamicAmount,
    retryUrl: link.retryUrl,
    returnUrl: link.returnUrl,
    allowedPaymentMethods: link.allowedPaymentMethods,
    ageVerification: link.ageVerification,
  };
}
