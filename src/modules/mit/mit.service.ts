/**
 * Merchant-initiated transactions (seed §4.1): a charge on an ACTIVE subscription's stored
 * payment method. The request only validates and commits the PENDING transaction together with
 * its drive job (the shared pipeline's `submit`); the job asks the acquirer (initiator MIT) and
 * the outcome reaches the notificationUrl as a callback.
 */
import type { Static } from '@sinclair/typebox';
import { type Effect, effectPart } from '../../shared/effect.js';
import { AppError, type FieldErrors, notFound } from '../../shared/errors.js';
import { type OverloadSignal, refuseWhenOverloaded } from '../../shared/overload.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { Chargeable, ChargeRead } from '../subscriptions/subscriptions.repository.js';
import type { InstantCapture, Transaction } from '../transactions/transaction.js';
import type { PaymentRequest, PipelineRepos } from '../transactions/payment-engine.js';
import { validateEntry } from './entry-validation.js';
import { closedSchema } from '../../shared/closed-schemas.js';
import type { IngestionCap, IngestionChannel, IngestionRepos, TakenAhead } from './ingestion-cap.js';
import { MitBody } from './mit.schemas.js';

export type MitRequest = Static<typeof MitBody>;

/** The pipeline's repositories plus the ingestion counters, in the commit that writes the MITs. */
export type MitRepos = PipelineRepos & IngestionRepos;

export interface MitDeps<R extends MitRepos> {
  /** The subscription with its payment method and point of sale (read together: one statement). */
  subscriptions: {
    requireChargeable(accountId: string, subscriptionId: string): Promise<Chargeable>;
    /** requireChargeable's check of a read made with the ingestion count (IngestionCap.takeAheadReading). */
    chargeableOf(read: ChargeRead | null): Promise<Chargeable>;
    /** The same for a batch's subscriptions in one read: by id, what it charges or its 422. */
    requireChargeableMany(accountId: string, subscriptionIds: readonly string[]): Promise<Map<string, Chargeable | AppError>>;
  };
  /** Callback URL rule (approved domain; no private address outside sandbox): 422 on `field`. */
  urlPolicy: { check(field: string, url: string, domain: string): Promise<void> };
  /** The payment engine. */
  payments: {
    submitMany(requests: PaymentRequest<R>[]): Promise<Transaction[]>;
  };
  /** The backlog bound: while it is reached, a MIT or a batch is refused (503) before anything is read or stored. */
  overload: OverloadSignal;
  /** Ingestion caps (INTERFACE §11.8): counted in the commit that writes the accepted MITs; past the cap that commit rolls back with 429. */
  ingestion: IngestionCap;
}

export interface BatchResult {
  transaction: Transaction | null;
  error: { errorCode: string; message: string; errors?: FieldErrors } | null;
  reference: string | null;
}

/** A batch entry is the body of POST /mit, closed as the HTTP layer closes it (unknown fields refused). */
const CLOSED_MIT_BODY = closedSchema(MitBody);

/** A chargeable subscription whose point of sale exists. */
type Charged = Chargeable & { pointOfSale: PointOfSale };

export class MitService<R extends MitRepos = MitRepos> {
  constructor(private readonly deps: MitDeps<R>) {}

  /**
   * The ingestion cap's 429 that `entries` more MITs through `channel` would meet now (null: they
   * fit), for a request bucket that refuses: the longer of the two waits is the one to name.
   */
  capRefusalFor(accountId: string, channel: IngestionChannel, entries: number): Promise<AppError | null> {
    return this.deps.ingestion.refusalFor(accountId, channel, entries);
  }

  /** POST /mit: validated, committed PENDING with its job (and counted against the cap); the answer follows by callback. */
  async create(accountId: string, body: MitRequest, clientIp: string | null, effect: Effect | null = null): Promise<Transaction> {
    await refuseWhenOverloaded(this.deps.overload);
    // A store that counts ahead reads the subscription and takes the count in one statement.
    const folded = await this.deps.ingestion.takeAheadReading(accountId, 'mit', body.subscriptionId);
    let request: PaymentRequest<R>;
    try {
      const chargeable = folded
        ? await this.deps.subscriptions.chargeableOf(folded.read)
        : await this.deps.subscriptions.requireChargeable(accountId, body.subscriptionId);
      request = await this.prepare(accountId, body, clientIp, charged(chargeable));
      // Past the cap: the 429, once the subscription and the request were found good (as unfolded).
      await folded?.accept();
    } catch (err) {
      await folded?.ahead?.giveBack().catch(() => undefined);
      throw err;
    }
    // Unfolded (undefined): the count is taken ahead of, or in, the create commit, as for a batch.
    const [created] = await this.submitCounted(accountId, 'mit', [{ ...request, effect }], folded?.ahead);
    return created!;
  }

  /**
   * POST /mit/batch: each entry is validated on its own (schema, then business rules); the
   * accepted ones are written and enqueued in one commit. Results keep the request order.
   */
  async batch(accountId: string, entries: unknown[], clientIp: string | null, effect: Effect | null = null): Promise<BatchResult[]> {
    // The whole batch, not some of its entries: a client retries it as it is.
    await refuseWhenOverloaded(this.deps.overload);
    const results: BatchResult[] = new Array(entries.length);
    const valid: Array<{ index: number; body: MitRequest; reference: string | null }> = [];
    for (const [index, entry] of entries.entries()) {
      const raw = entry as Record<string, unknown> | null;
      const reference = raw && typeof raw === 'object' && typeof raw.reference === 'string' ? raw.reference : null;
      const errors = validateEntry(CLOSED_MIT_BODY, entry);
      if (Object.keys(errors).length) {
        results[index] = {
          transaction: null,
          error: { errorCode: 'VALIDATION_ERROR', message: `The entry is invalid: ${Object.keys(errors).join(', ')}.`, errors },
          reference,
        };
      } else valid.push({ index, body: entry as MitRequest, reference });
    }
    // Every subscription of the batch in one read, each checked once however many entries charge it.
    const reads = await this.deps.subscriptions.requireChargeableMany(accountId, [...new Set(valid.map((v) => v.body.subscriptionId))]);
    const accepted: Array<{ index: number; request: PaymentRequest<R> }> = [];
    for (const { index, body, reference } of valid) {
      try {
        const read = reads.get(body.subscriptionId)!;
        if (read instanceof AppError) throw read;
        const request = await this.prepare(accountId, body, clientIp, charged(read));
        // One effect key per entry position: a retried batch maps each entry to what it created before.
        accepted.push({ index, request: { ...request, effect: effectPart(effect, index) } });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results[index] = { transaction: null, error: { errorCode: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) }, reference };
      }
    }
    // The accepted entries are counted against the batch cap once, for the commit that writes them
    // all: past the cap the whole batch is refused (429) and nothing is created. A retry whose first
    // attempt committed finds its transactions and writes (and counts) nothing again.
    const created = await this.submitCounted(
      accountId,
      'mit_batch',
      accepted.map((a) => a.request),
    );
    accepted.forEach((a, i) => {
      results[a.index] = { transaction: created[i]!, error: null, reference: created[i]!.reference };
    });
    return results;
  }

  /**
   * Submits `requests` in one commit, counted against the channel's cap (429 past it, nothing
   * created): in that commit, or just before it when the store counts ahead — then given back when
   * the commit fails or creates nothing (a retry that found what its first attempt created).
   */
  private async submitCounted(
    accountId: string,
    channel: IngestionChannel,
    requests: PaymentRequest<R>[],
    takenAhead?: TakenAhead | null,
  ): Promise<Transaction[]> {
    const first = requests[0];
    if (!first) return [];
    // `takenAhead`: counted already, with the read (create); null: nothing to give back.
    const ahead = takenAhead !== undefined ? takenAhead : await this.deps.ingestion.takeAhead(accountId, channel, requests.length);
    let committed = false;
    const inCommit: PaymentRequest<R>['inCommit'] = async (repos) => {
      committed = true;
      await this.deps.ingestion.takeInCommit(repos, accountId, channel, requests.length);
    };
    try {
      const created = await this.deps.payments.submitMany([{ ...first, inCommit }, ...requests.slice(1)]);
      if (!committed) await ahead?.giveBack();
      return created;
    } catch (err) {
      // The request's own error is the answer; a count not given back only makes the cap stricter.
      await ahead?.giveBack().catch(() => undefined);
      throw err;
    }
  }

  /** Business rules of one MIT: an ACTIVE subscription with a usable payment method, a callback URL on the approved domain. */
  private async prepare(accountId: string, body: MitRequest, clientIp: string | null, charged: Charged): Promise<PaymentRequest<R>> {
    const { subscription, pointOfSale, paymentMethod, sealed } = charged;
    await this.deps.urlPolicy.check('notificationUrl', body.notificationUrl, pointOfSale.domain);
    return {
      accountId,
      pointOfSaleId: subscription.pointOfSaleId,
      flow: 'MIT',
      type: 'PAYMENT',
      operation: 'AUTHORIZATION',
      amount: body.amount,
      currency: body.currency ?? subscription.currency,
      paymentMethod,
      reference: body.reference ?? null,
      textOnStatement: body.textOnStatement ?? null,
      notificationUrl: body.notificationUrl,
      customerId: subscription.customerId,
      attributes: body.attributes ?? null,
      clientIp,
      instantCapture: (body.instantCapture ?? 'OFF') as InstantCapture,
      // No SCA on a merchant-initiated payment: the customer is not present.
      scaMode: null,
      exemptions: null,
      descriptor: pointOfSale.descriptor,
      subscriptionId: subscription.id,
      // The drive needs nothing else: handed to this process's runner, it reads nothing.
      driveRead: { subscription, panSealed: sealed.pan, webhookAuthenticationSealed: sealed.webhookAuthentication },
      // Present from the start, set later by spreading over them (docs/object-shapes.md).
      effect: null,
      inCommit: undefined,
    };
  }
}

/** A chargeable subscription whose point of sale still exists (else 404). */
function charged(read: Chargeable): Charged {
  if (!read.pointOfSale) throw notFound('point of sale');
  return { ...read, pointOfSale: read.pointOfSale };
}
