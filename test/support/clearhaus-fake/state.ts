/**
 * The Clearhaus fake's ledger: what Clearhaus remembers between requests, and the rules that need
 * it. Authorizations with their captures, refunds and voids (clearhaus.md §2.2–§2.4, §4.1: capture
 * at most what is left, refunds never free capturable amount, refund at most captured − refunded,
 * no void after a capture or twice, a void allowed on a 50000 authorization, time limits 180 / 365
 * / 30 days), series (§2.1: the subsequent-in-series names the latest approved authorization of
 * a series this merchant started with the same card), credits (§2.5), the test host's magic amounts
 * (§4.5) and the HAL representations of §2.1.2–§2.5. 3-D Secure outcomes (3dsecure-io.md §4, §5
 * items 34–35): a result with transStatus N or R is declined 40310 (in the decline style); the
 * merchant rule `not (fully 3dsecure or subsequent recurring)` (`requireFullyThreeDSecure`, 40200);
 * the result is echoed as `3dsecure {version, status}` and kept whole on the record.
 */
import crypto from 'node:crypto';
import type { AuthorizationInput, CreditInput, FollowUpInput, SeriesType, ThreeDSecureInput } from './validation.js';
import { isTransactionId, luhnValid } from './validation.js';
import { isInputErrorCode, processedAt, Rejection, type Reply, STATUS_MESSAGES } from './wire.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** §3.1: the codes an authorization, and a credit, can end with (the magic amounts of §4.5). */
const AUTHORIZATION_CODES = new Set([
  20000, 40000, 40110, 40111, 40120, 40130, 40135, 40140, 40150, 40200, 40300, 40310, 40400, 40410, 40411, 40412, 40413, 40414, 40415, 40416, 40420, 50000,
]);
const CREDIT_CODES = new Set([
  20000, 40000, 40110, 40111, 40130, 40135, 40140, 40150, 40200, 40400, 40410, 40411, 40412, 40413, 40414, 40415, 40416, 40420, 50000,
]);
/** §4.5: the test host's special PANs (accepted even though they pass Luhn). */
export const TEST_HOST_PANS = ['2221000000000009', '4111111111111111', '5000000000000004'] as const;

export interface FakeMerchant {
  apiKey: string;
  merchantId: string;
  descriptor: string;
  name: string;
  country: string;
  currency: string;
  mcc: string;
  trusted: boolean;
  /** The merchant rule `not (fully 3dsecure or subsequent recurring)` (40200). */
  requireFullyThreeDSecure: boolean;
}

/** A capture, refund or void as Clearhaus recorded it. `moved`: it counts (approved, or a 50000 that went through). */
export interface OperationRecord {
  id: string;
  kind: 'capture' | 'refund' | 'void';
  authorizationId: string;
  statusCode: number;
  amount: number;
  moved: boolean;
  textOnStatement?: string;
  atMs: number;
}

export interface AuthorizationRecord {
  id: string;
  merchantApiKey: string;
  /** 20000 approved, 50000 in doubt (voidable), anything else declined. */
  statusCode: number;
  amount: number;
  currency: string;
  method: 'card' | 'moto';
  pan: string;
  expireMonth: string;
  expireYear: string;
  csc: { present: boolean; matches: boolean } | undefined;
  reference?: string;
  textOnStatement: string;
  ip?: string;
  initiator: 'cardholder' | 'merchant';
  credentialOnFile?: 'store' | 'use';
  scaExemption?: string;
  /** The 3-D Secure result as it arrived: the ARes/RReq string exactly as sent, or the raw fields. */
  threeDSecure?: ThreeDSecureInput;
  seriesRole: 'none' | 'first' | 'subsequent';
  previousId?: string;
  /** The series this authorization belongs to (approved first-in-series and subsequents only). */
  seriesId?: string;
  atMs: number;
  captures: OperationRecord[];
  refunds: OperationRecord[];
  voids: OperationRecord[];
  capturedAmount: number;
  refundedAmount: number;
  voided: boolean;
  lastCaptureAtMs?: number;
}

export interface SeriesRecord {
  id: string;
  merchantApiKey: string;
  type: SeriesType;
  pan: string;
  tid: string;
  tlid: string;
  economicallyRelatedTlid: string;
  /** Approved authorizations of the series, oldest first; the last one is what the next must name. */
  authorizationIds: string[];
}

export interface CreditRecord {
  id: string;
  merchantApiKey: string;
  statusCode: number;
  amount: number;
  currency: string;
  pan: string;
  reference?: string;
  textOnStatement: string;
  atMs: number;
}

/** A scripted 50000 answer (fake.script `status-50000`): `applied`, whether the money moved anyway. */
export interface Forced {
  code: 50000;
  applied: boolean;
}

export interface LedgerContext {
  now(): number;
  declineStatus(): 400 | 201;
  /** A code scripted for a PAN (blockCard → 40420), else undefined. */
  cardOutcome(pan: string): number | undefined;
  /** 'test-host': only Luhn-failing PANs, the special test PANs and magic PANs are accepted. */
  panPolicy: 'any' | 'test-host';
}

const isMagicPan = (pan: string) => (pan.startsWith('420000') && pan.endsWith('0000')) || (pan.startsWith('555555') && pan.endsWith('4444'));
const randomDigits = (n: number) => Array.from({ length: n }, () => crypto.randomInt(10)).join('');
const randomTlid = () => crypto.randomBytes(17).toString('base64url').slice(0, 22);
const statusOf = (code: number) => (code === 20000 ? { code } : { code, message: STATUS_MESSAGES[code] ?? 'Declined' });
const latestOf = (series: SeriesRecord) => series.authorizationIds[series.authorizationIds.length - 1];
/** 3dsecure-io.md §4 [INFERENCE]: transStatus N (not authenticated) and R (rejected) are 40310. */
const FAILED_3DS = new Set(['N', 'R']);
/** clearhaus.md §3.1: the documented message of the rule. */
export const FULLY_3DS_RULE = 'not (fully 3dsecure or subsequent recurring)';

export class ClearhausLedger {
  readonly authorizations = new Map<string, AuthorizationRecord>();
  readonly series = new Map<string, SeriesRecord>();
  readonly credits = new Map<string, CreditRecord>();
  /** `apiKey \n pan` of cards with an approved `credential_on_file=store` authorization. */
  private readonly storedCards = new Set<string>();

  constructor(private readonly context: LedgerContext) {}

  clear(): void {
    this.authorizations.clear();
    this.series.clear();
    this.credits.clear();
    this.storedCards.clear();
  }

  /** 201 for an approval, 400 for input errors, the fake's decline style for the rest. */
  private httpFor(code: number): number {
    if (code === 20000) return 201;
    return isInputErrorCode(code) ? 400 : this.context.declineStatus();
  }

  /** The outcome of a card transaction: scripted for the PAN, the magic amount (§4.5), else approved. */
  private decide(pan: string, amount: number, codes: Set<number>): number {
    const scripted = this.context.cardOutcome(pan);
    if (scripted !== undefined) return scripted;
    if (isMagicPan(pan)) return codes.has(amount) ? amount : 40110;
    if (this.context.panPolicy === 'test-host' && luhnValid(pan) && !(TEST_HOST_PANS as readonly string[]).includes(pan)) return 40110;
    return 20000;
  }

  // --- authorizations ----------------------------------------------------------------------------

  authorize(merchant: FakeMerchant, input: AuthorizationInput, forced?: Forced): Reply {
    const previous = input.series.role === 'subsequent' ? this.latestInSeries(merchant, input.series.previousId, input.card.pan) : undefined;
    if (input.initiator === 'merchant' && !previous && !this.storedCards.has(`${merchant.apiKey}\n${input.card.pan}`)) {
      throw new Rejection(40200, "initiator 'merchant' needs an earlier approved credential_on_file=store authorization of this card for this merchant");
    }
    // [INFERENCE] A failed authentication is declined as such (40310) before merchant rules are looked at.
    const failedThreeDS = input.threeDSecure !== undefined && FAILED_3DS.has(input.threeDSecure.transStatus);
    if (merchant.requireFullyThreeDSecure && !failedThreeDS) this.checkFullyThreeDSecure(input, previous);
    const now = this.context.now();
    const code = forced?.code ?? (failedThreeDS ? 40310 : this.decide(input.card.pan, input.amount, AUTHORIZATION_CODES));
    const record: AuthorizationRecord = {
      id: crypto.randomUUID(),
      merchantApiKey: merchant.apiKey,
      statusCode: code,
      amount: input.amount,
      currency: input.currency,
      method: input.method,
      pan: input.card.pan,
      expireMonth: input.card.expireMonth,
      expireYear: input.card.expireYear,
      // §4.5: CSC 987 is the only one that matches on the test host.
      csc: input.method === 'card' ? { present: input.card.csc !== undefined, matches: input.card.csc === '987' } : undefined,
      reference: input.reference,
      textOnStatement: input.textOnStatement ?? merchant.descriptor,
      ip: input.ip,
      initiator: input.initiator,
      credentialOnFile: input.credentialOnFile,
      scaExemption: input.scaExemption,
      threeDSecure: input.threeDSecure,
      seriesRole: input.series.role,
      previousId: previous?.id,
      atMs: now,
      captures: [],
      refunds: [],
      voids: [],
      capturedAmount: 0,
      refundedAmount: 0,
      voided: false,
    };
    this.authorizations.set(record.id, record);
    if (code === 20000) this.recordApproval(record, input, previous);
    return { status: this.httpFor(code), body: this.representation(record) };
  }

  /**
   * The merchant rule `not (fully 3dsecure or subsequent recurring)` (clearhaus.md §3.1, 40200).
   * [INFERENCE] "Fully 3dsecure" is a result with transStatus Y: A is an attempt, not a full
   * authentication. "Subsequent recurring" is a subsequent-in-series of a `recurring` series, as
   * the message says: a subsequent of an `unscheduled` series is not exempt.
   */
  private checkFullyThreeDSecure(input: AuthorizationInput, previous: AuthorizationRecord | undefined): void {
    const fully = input.threeDSecure?.transStatus === 'Y';
    const seriesType = previous?.seriesId === undefined ? undefined : this.series.get(previous.seriesId)?.type;
    if (!fully && seriesType !== 'recurring') throw new Rejection(40200, FULLY_3DS_RULE);
  }

  /** An approved authorization starts a series, continues one, or stores the card. */
  private recordApproval(record: AuthorizationRecord, input: AuthorizationInput, previous: AuthorizationRecord | undefined): void {
    if (record.credentialOnFile === 'store') this.storedCards.add(`${record.merchantApiKey}\n${record.pan}`);
    if (input.series.role === 'first') {
      const series: SeriesRecord = {
        id: crypto.randomUUID(),
        merchantApiKey: record.merchantApiKey,
        type: input.series.type,
        pan: record.pan,
        tid: randomDigits(15),
        tlid: randomTlid(),
        economicallyRelatedTlid: randomTlid(),
        authorizationIds: [record.id],
      };
      this.series.set(series.id, series);
      record.seriesId = series.id;
    } else if (previous?.seriesId !== undefined) {
      this.series.get(previous.seriesId)!.authorizationIds.push(record.id);
      record.seriesId = previous.seriesId;
    }
  }

  /** §2.1: `series[previous][id]` must be the latest approved authorization of this merchant's series on this card. */
  private latestInSeries(merchant: FakeMerchant, previousId: string, pan: string): AuthorizationRecord {
    const previous = this.authorizations.get(previousId);
    if (!previous || previous.merchantApiKey !== merchant.apiKey) {
      throw new Rejection(40000, `parameter 'series[previous][id]' (${previousId}) names no authorization of this merchant`);
    }
    const series = previous.seriesId === undefined ? undefined : this.series.get(previous.seriesId);
    if (!series) throw new Rejection(40000, `parameter 'series[previous][id]' (${previousId}) is not an approved authorization of a series`);
    if (latestOf(series) !== previousId) {
      throw new Rejection(
        40000,
        `parameter 'series[previous][id]' (${previousId}) is not the latest approved authorization in its series (${latestOf(series)} is)`,
      );
    }
    if (series.pan !== pan) throw new Rejection(40000, "parameter 'card[pan]' is not the card the series was started with");
    return previous;
  }

  /** An authorization of this merchant by its path id: 400 `invalid transaction id` when malformed, 404 when unknown. */
  find(merchant: FakeMerchant, id: string): AuthorizationRecord {
    if (!isTransactionId(id)) throw new Rejection(40000, 'invalid transaction id');
    const record = this.authorizations.get(id);
    // §1.3: a transaction of one merchant account cannot be reached through another.
    if (!record || record.merchantApiKey !== merchant.apiKey) throw new Rejection(40000, 'not found', 404);
    return record;
  }

  /** The authorization as POST /authorizations and GET /authorizations/:id show it (§2.1.2). */
  representation(record: AuthorizationRecord): Record<string, unknown> {
    const href = `/authorizations/${record.id}`;
    const series = record.seriesRole === 'first' && record.seriesId !== undefined ? this.series.get(record.seriesId) : undefined;
    return {
      id: record.id,
      status: statusOf(record.statusCode),
      processed_at: processedAt(record.atMs),
      amount: record.amount,
      currency: record.currency,
      text_on_statement: record.textOnStatement,
      ...(record.reference !== undefined && { reference: record.reference }),
      ...(record.csc && { csc: record.csc }),
      ...(record.threeDSecure && { '3dsecure': { version: record.threeDSecure.version, status: record.threeDSecure.transStatus } }),
      ...(series && { series: { type: series.type, tid: series.tid, tlid: series.tlid, economically_related_tlid: series.economicallyRelatedTlid } }),
      _links: { self: { href }, captures: { href: `${href}/captures` }, voids: { href: `${href}/voids` }, refunds: { href: `${href}/refunds` } },
    };
  }

  // --- captures, refunds, voids ------------------------------------------------------------------

  capture(merchant: FakeMerchant, id: string, input: FollowUpInput, forced?: Forced): Reply {
    const auth = this.find(merchant, id);
    if (auth.statusCode !== 20000) throw new Rejection(40000, `authorization ${id} was not approved (status ${auth.statusCode}): nothing to capture`);
    if (auth.voided) throw new Rejection(40000, `authorization ${id} is voided`);
    if (this.context.now() - auth.atMs >= 180 * DAY_MS) throw new Rejection(40200, 'no capture once the authorization is 180 days old');
    const remaining = auth.amount - auth.capturedAmount;
    const amount = this.withinLimit(input.amount, remaining, 'capturable');
    const op = this.operation('capture', auth, amount, input.textOnStatement, forced);
    auth.captures.push(op);
    if (op.moved) {
      auth.capturedAmount += amount;
      auth.lastCaptureAtMs = op.atMs;
    }
    return this.operationReply(op, { refunds: { href: `/authorizations/${id}/refunds` } });
  }

  refund(merchant: FakeMerchant, id: string, input: FollowUpInput, forced?: Forced): Reply {
    const auth = this.find(merchant, id);
    if (auth.capturedAmount === 0) throw new Rejection(40000, `authorization ${id} has no capture to refund`);
    if (this.context.now() - auth.lastCaptureAtMs! > 365 * DAY_MS) throw new Rejection(40200, 'no refund once the last capture is more than 365 days old');
    const amount = this.withinLimit(input.amount, auth.capturedAmount - auth.refundedAmount, 'refundable');
    const op = this.operation('refund', auth, amount, input.textOnStatement, forced);
    auth.refunds.push(op);
    if (op.moved) auth.refundedAmount += amount;
    return this.operationReply(op, {});
  }

  void(merchant: FakeMerchant, id: string, forced?: Forced): Reply {
    const auth = this.find(merchant, id);
    // §2.4: allowed on an approved authorization and, since 2024, on one that ended 50000.
    if (auth.statusCode !== 20000 && auth.statusCode !== 50000)
      throw new Rejection(40000, `authorization ${id} was declined (status ${auth.statusCode}): nothing to void`);
    if (auth.voided) throw new Rejection(40000, `authorization ${id} is already voided`);
    if (auth.capturedAmount > 0) throw new Rejection(40000, `authorization ${id} has been captured and cannot be voided`);
    if (this.context.now() - auth.atMs >= 30 * DAY_MS) throw new Rejection(40200, 'no void once the authorization is 30 days old');
    const op = this.operation('void', auth, 0, undefined, forced);
    auth.voids.push(op);
    if (op.moved) auth.voided = true;
    return this.operationReply(op, {});
  }

  /** An explicit amount must fit in what is left; without one, what is left (which must be > 0). */
  private withinLimit(requested: number | undefined, left: number, what: 'capturable' | 'refundable'): number {
    if (requested === undefined) {
      if (left <= 0) throw new Rejection(40000, `nothing ${what} is left`);
      return left;
    }
    if (requested > left) throw new Rejection(40000, `parameter 'amount' (${requested}) exceeds the ${what} amount left (${left})`);
    return requested;
  }

  private operation(kind: OperationRecord['kind'], auth: AuthorizationRecord, amount: number, text: string | undefined, forced?: Forced): OperationRecord {
    const statusCode = forced?.code ?? 20000;
    const moved = statusCode === 20000 || forced?.applied === true;
    return { id: crypto.randomUUID(), kind, authorizationId: auth.id, statusCode, amount, moved, textOnStatement: text, atMs: this.context.now() };
  }

  private operationReply(op: OperationRecord, links: Record<string, { href: string }>): Reply {
    return {
      status: this.httpFor(op.statusCode),
      body: {
        id: op.id,
        status: statusOf(op.statusCode),
        processed_at: processedAt(op.atMs),
        ...(op.kind !== 'void' && { amount: op.amount }),
        ...(op.textOnStatement !== undefined && { text_on_statement: op.textOnStatement }),
        _links: { self: { href: `/${op.kind}s/${op.id}` }, authorization: { href: `/authorizations/${op.authorizationId}` }, ...links },
      },
    };
  }

  // --- credits -----------------------------------------------------------------------------------

  credit(merchant: FakeMerchant, input: CreditInput, forced?: Forced): Reply {
    const record: CreditRecord = {
      id: crypto.randomUUID(),
      merchantApiKey: merchant.apiKey,
      statusCode: forced?.code ?? this.decide(input.card.pan, input.amount, CREDIT_CODES),
      amount: input.amount,
      currency: input.currency,
      pan: input.card.pan,
      reference: input.reference,
      textOnStatement: input.textOnStatement ?? merchant.descriptor,
      atMs: this.context.now(),
    };
    this.credits.set(record.id, record);
    return {
      status: this.httpFor(record.statusCode),
      body: {
        id: record.id,
        status: statusOf(record.statusCode),
        processed_at: processedAt(record.atMs),
        amount: record.amount,
        currency: record.currency,
        text_on_statement: record.textOnStatement,
        _links: { self: { href: `/credits/${record.id}` } },
      },
    };
  }
}
