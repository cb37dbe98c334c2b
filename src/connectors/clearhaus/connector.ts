/**
 * The Clearhaus acquirer (INTERFACE §12): the port's calls translated into the Transaction API of
 * clearhaus.md, and its answers into AcquirerResult values. Decides nothing about money beyond
 * that: which fields a request carries, what an answer means. See ./README.md.
 *
 * At most once on the wire: nothing but a void is ever repeated (`isRepeatable`), because Clearhaus
 * has no idempotency key and a second authorization, capture, refund or credit would move money twice.
 */
import type { Dispatcher } from 'undici';
import type {
  Acquirer,
  AcquirerCall,
  AcquirerMerchantAccount,
  AcquirerResult,
  AgreementCredentials,
  AuthorizeRequest,
  Instrument,
  OperationRequest,
} from '../acquirer.js';
import { classifyStatusCode, errorCodeFor, externalCodes, messageFor } from './codes.js';
import { type AccountLookup, ClearhausClient, type WireAnswer } from './client.js';
import { isCurrencyAccepted } from './currencies.js';
import {
  authorizationFields,
  type AuthorizationForm,
  captureFields,
  cardholderIp,
  cardName,
  creditFields,
  encodeForm,
  MAX_AMOUNT,
  pickTextOnStatement,
  referenceFor,
  refundFields,
} from './form.js';
import type { SigningKey } from './signing.js';

/** Ids and codes only: never a card number, CSC, key or signature. */
export interface ConnectorLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface ClearhausAcquirerOptions {
  /** CLEARHAUS_URL. */
  baseUrl: string;
  /** CLEARHAUS_SIGNING_KEY_ID: the partner's signing API key (a uuid). */
  signingKeyId: string;
  /** From loadSigningKey(CLEARHAUS_SIGNING_KEY_FILE). */
  signingKey: SigningKey;
  /** CLEARHAUS_TIMEOUT_MS (default 40 000): the whole of one call, waiting for a slot included. */
  timeoutMs: number;
  /** CLEARHAUS_MAX_IN_FLIGHT (default 32): requests on the wire at once for this process. */
  maxInFlight: number;
  /** Tests: a dispatcher to use instead of the connector's own Pool. */
  dispatcher?: Dispatcher;
  logger?: ConnectorLogger;
}

type CardInstrument = Extract<Instrument, { kind: 'card' }>;
type Declined = Extract<AcquirerResult, { outcome: 'declined' }>;

/** A decline decided here, before any request: nothing was sent, so there is no acquirer code. */
const refuse = (errorCode: string, message: string): Declined => ({ outcome: 'declined', errorCode, message, externalStatusCodes: externalCodes(null) });

const isAmount = (amount: number, minimum: number): boolean => Number.isSafeInteger(amount) && amount >= minimum && amount <= MAX_AMOUNT;

/** Secrets of one call that an answer's text must never carry back into a result. */
interface CallSecrets {
  pan: string | null;
  csc: string | null;
  apiKey: string;
}

/**
 * Clearhaus's `status.message` when it is short printable text holding none of the call's
 * secrets (and no long digit run that could be a card number), else the table's message.
 */
function safeMessage(message: string | null, code: number, secrets: CallSecrets): string {
  if (message === null || message.length > 200 || !/^[\x20-\x7E]+$/.test(message)) return messageFor(code);
  if (/[0-9]{12,}/.test(message) || message.includes(secrets.apiKey)) return messageFor(code);
  if (secrets.pan && message.includes(secrets.pan)) return messageFor(code);
  // A CSC is three digits, so it only counts as a number of its own ("amount > 100" holds CSC 100).
  if (secrets.csc && (/^[0-9]+$/.test(secrets.csc) ? new RegExp(`(^|[^0-9])${secrets.csc}([^0-9]|$)`).test(message) : message.includes(secrets.csc))) {
    return messageFor(code);
  }
  return message;
}

export class ClearhausAcquirer implements Acquirer {
  readonly name = 'clearhaus';
  readonly callTimeoutMs: number;
  /** Stored-card payments are linked by `series[]`: the engine sends the series and keeps each card's latest approved authorization id. */
  readonly seriesReferences = true;
  /** `/voids` takes no amount: it releases whatever the authorization has left. */
  readonly partialVoids = false;
  readonly voidsAfterCapture = false;
  private readonly client: ClearhausClient;
  private readonly logger: ConnectorLogger | null;

  readonly capacity: number;

  constructor(options: ClearhausAcquirerOptions) {
    this.client = new ClearhausClient(options);
    this.capacity = this.client.capacity;
    this.callTimeoutMs = options.timeoutMs;
    this.logger = options.logger ?? null;
  }

  /** CLEARHAUS_MAX_IN_FLIGHT requests are out and its line is full: a job should come back later rather than wait here. */
  busy(): boolean {
    return this.client.saturated;
  }

  /** Only a void may go again after an answer that never came: a second void is declined at worst. */
  isRepeatable(call: AcquirerCall): boolean {
    return call === 'void';
  }

  /** `GET /account` with a merchant's API key (3-D Secure needs the merchant id and BINs; an agreement check can use it). */
  account(apiKey: string): Promise<AccountLookup> {
    return this.client.account(apiKey);
  }

  /** `GET /account` as the port's merchant account (3-D Secure's AReq); null when it cannot be read. */
  async merchantAccount(agreement: AgreementCredentials): Promise<AcquirerMerchantAccount | null> {
    if (!agreement.apiKey) return null;
    const lookup = await this.client.account(agreement.apiKey);
    if (!lookup.ok) return null;
    const { account } = lookup;
    return {
      merchantId: account.merchantId,
      name: account.name || account.descriptor,
      country: account.country,
      mcc: account.mcc,
      visaBin: account.acquirer.visaBin,
      mastercardBin: account.acquirer.mastercardBin,
    };
  }

  /** Requests waiting for a slot are answered not_sent; those on the wire end by their deadline. */
  close(): Promise<void> {
    return this.client.close();
  }

  /**
   * `POST /authorizations`. An instant capture (`capture: true`) is not a Clearhaus concept: this
   * authorizes only, and the engine's follow-up capture makes the sale.
   */
  async authorize(request: AuthorizeRequest): Promise<AcquirerResult> {
    const { instrument, agreement } = request;
    if (instrument.kind !== 'card') return refuse('NOT_SUPPORTED_FOR_PAYMENT_METHOD', 'Clearhaus takes card payments only; wallets are not supported.');
    if (!agreement?.apiKey) return refuse('MISSING_ACQUIRER_AGREEMENT', 'No Clearhaus agreement with an API key for this account.');
    if (!isCurrencyAccepted(request.currency)) return refuse('ACQUIRER_DECLINED', `Clearhaus does not accept the currency ${request.currency}.`);
    if (!isAmount(request.amount, 0)) return refuse('ACQUIRER_DECLINED', `The amount is outside what Clearhaus accepts (0 to ${MAX_AMOUNT}).`);
    const shape = this.authorizationShape(request, instrument);
    if ('outcome' in shape) return shape;
    const form: AuthorizationForm = {
      amount: request.amount,
      currency: request.currency,
      reference: referenceFor(request.transactionId),
      textOnStatement: pickTextOnStatement(request.textOnStatement, agreement.textOnStatement),
      ip: cardholderIp(request.clientIp),
      ...shape,
      threeDSecure: request.threeDSecure ?? null,
    };
    const answer = await this.client.post('/authorizations', encodeForm(authorizationFields(form)), agreement.apiKey);
    return this.toResult(answer, 'authorize', { transactionId: request.transactionId }, { pan: instrument.pan, csc: instrument.cvc, apiKey: agreement.apiKey });
  }

  /** The initiator, series and payment method of an authorization, or why it cannot be sent. */
  private authorizationShape(
    request: AuthorizeRequest,
    card: CardInstrument,
  ): Pick<AuthorizationForm, 'initiator' | 'credentialOnFile' | 'seriesType' | 'previousAuthorizationId' | 'method' | 'card'> | Declined {
    const { series } = request;
    const pan = { pan: card.pan, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear };
    const none = { credentialOnFile: null, seriesType: null, previousAuthorizationId: null };
    switch (request.initiator) {
      case 'CIT':
        // A cardholder paying with a card being stored starts a series; one paying with a stored card
        // uses it (`credential_on_file=use`) but is no subsequent-in-series, which only a merchant can be.
        if (series?.role === 'first') {
          return {
            initiator: 'cardholder',
            credentialOnFile: 'store',
            seriesType: series.type,
            previousAuthorizationId: null,
            method: 'card',
            card: { ...pan, csc: card.cvc },
          };
        }
        if (series?.role === 'subsequent')
          return { initiator: 'cardholder', ...none, credentialOnFile: 'use', method: 'card', card: { ...pan, csc: card.cvc } };
        return { initiator: 'cardholder', ...none, method: 'card', card: { ...pan, csc: card.cvc } };
      case 'MIT':
        // As the docs' subsequent example: series[previous][id], the card without CSC, initiator left
        // to its default (merchant).
        if (series?.role !== 'subsequent') return refuse('INVALID_AGREEMENT', 'A merchant-initiated payment needs the Clearhaus series of the stored card.');
        return { initiator: null, ...none, previousAuthorizationId: series.previousId, method: 'card', card: pan };
      case 'MOTO':
        // The moto method takes neither series[] nor credential_on_file, and no CSC.
        return { initiator: null, ...none, method: 'moto', card: pan };
      default:
        return refuse('NOT_SUPPORTED_FOR_PAYMENT_METHOD', 'Card-present payments do not go through Clearhaus.');
    }
  }

  /** `POST /authorizations/:id/captures` with an explicit amount, and the payment's statement text when it qualifies. */
  capture(request: OperationRequest): Promise<AcquirerResult> {
    return this.onAuthorization(request, 'capture', 'captures', 1, () =>
      encodeForm(captureFields({ amount: request.amount, textOnStatement: pickTextOnStatement(request.textOnStatement) })),
    );
  }

  /** `POST /authorizations/:id/refunds` with an explicit amount (without one Clearhaus refunds all that remains). */
  refund(request: OperationRequest): Promise<AcquirerResult> {
    return this.onAuthorization(request, 'refund', 'refunds', 1, () => encodeForm(refundFields({ amount: request.amount })));
  }

  /** `POST /authorizations/:id/voids` with an empty body (signed all the same). */
  void(request: OperationRequest): Promise<AcquirerResult> {
    return this.onAuthorization(request, 'void', 'voids', 0, () => '');
  }

  /** Clearhaus has no renewal of an authorization. */
  async renew(_request: OperationRequest): Promise<AcquirerResult> {
    return refuse('NOT_SUPPORTED_FOR_PAYMENT_METHOD', 'Clearhaus does not renew authorizations.');
  }

  /** `POST /credits`: a payout to the card. */
  async payout(request: OperationRequest): Promise<AcquirerResult> {
    const { instrument, agreement } = request;
    if (instrument.kind !== 'card') return refuse('NOT_SUPPORTED_FOR_PAYMENT_METHOD', 'Clearhaus pays out to cards only.');
    if (!agreement?.apiKey) return refuse('MISSING_ACQUIRER_AGREEMENT', 'No Clearhaus agreement with an API key for this account.');
    if (!isCurrencyAccepted(request.currency)) return refuse('ACQUIRER_DECLINED', `Clearhaus does not accept the currency ${request.currency}.`);
    if (!isAmount(request.amount, 1)) return refuse('ACQUIRER_DECLINED', `The amount is outside what Clearhaus accepts (1 to ${MAX_AMOUNT}).`);
    const body = encodeForm(
      creditFields({
        amount: request.amount,
        currency: request.currency,
        reference: referenceFor(request.transactionId),
        textOnStatement: pickTextOnStatement(request.textOnStatement, agreement.textOnStatement),
        card: { pan: instrument.pan, expiryMonth: instrument.expiryMonth, expiryYear: instrument.expiryYear, name: cardName(instrument.holderName) },
      }),
    );
    const answer = await this.client.post('/credits', body, agreement.apiKey);
    return this.toResult(
      answer,
      'payout',
      { transactionId: request.transactionId, operationId: request.operationId },
      { pan: instrument.pan, csc: null, apiKey: agreement.apiKey },
    );
  }

  /** A capture, refund or void: a POST under the transaction's authorization. */
  private async onAuthorization(
    request: OperationRequest,
    call: AcquirerCall,
    resource: 'captures' | 'refunds' | 'voids',
    minimumAmount: number,
    body: () => string,
  ): Promise<AcquirerResult> {
    const apiKey = request.agreement?.apiKey;
    if (!apiKey) return refuse('MISSING_ACQUIRER_AGREEMENT', 'No Clearhaus agreement with an API key for this account.');
    if (!request.authorizationReference) return refuse('ACQUIRER_DECLINED', 'The transaction has no Clearhaus authorization to act on.');
    if (call !== 'void' && !isAmount(request.amount, minimumAmount)) {
      return refuse('ACQUIRER_DECLINED', `The amount is outside what Clearhaus accepts (${minimumAmount} to ${MAX_AMOUNT}).`);
    }
    const path = `/authorizations/${encodeURIComponent(request.authorizationReference)}/${resource}`;
    const answer = await this.client.post(path, body(), apiKey);
    return this.toResult(answer, call, { transactionId: request.transactionId, operationId: request.operationId }, { pan: null, csc: null, apiKey });
  }

  /** The answer as a port result. Approved only on 20000 with an id to act on later. */
  private toResult(answer: WireAnswer, call: AcquirerCall, ids: Record<string, string>, secrets: CallSecrets): AcquirerResult {
    switch (answer.kind) {
      case 'not_sent':
        return { outcome: 'not_sent', reason: `Not sent to Clearhaus: ${answer.reason}.` };
      case 'in_doubt':
        this.logger?.warn({ ...ids, call, acquirer: this.name }, `Clearhaus ${call} in doubt: ${answer.reason}`);
        return { outcome: 'in_doubt', reason: `No answer from Clearhaus: ${answer.reason}.`, acquirerReference: answer.id };
      case 'key_refused':
        this.logger?.warn({ ...ids, call, acquirer: this.name, httpStatus: 401 }, 'Clearhaus refused the acquirer agreement API key');
        return refuse('ACQUIRER_DECLINED', 'Clearhaus refused the API key of the acquirer agreement (HTTP 401).');
      case 'not_found':
        return refuse('ACQUIRER_DECLINED', 'Clearhaus does not know this resource (HTTP 404).');
    }
    const { code, id } = answer;
    switch (classifyStatusCode(code)) {
      case 'approved':
        if (id !== null) return { outcome: 'approved', acquirerReference: id, externalStatusCodes: externalCodes(code) };
        // An approval without an id leaves nothing to capture, refund or void: treated as unknown.
        this.logger?.warn({ ...ids, call, acquirer: this.name, code }, 'Clearhaus approved without an id');
        return {
          outcome: 'in_doubt',
          reason: 'Clearhaus approved without naming the transaction.',
          acquirerReference: null,
          externalStatusCodes: externalCodes(code),
        };
      case 'declined':
        return {
          outcome: 'declined',
          errorCode: errorCodeFor(code),
          message: safeMessage(answer.message, code, secrets),
          externalStatusCodes: externalCodes(code),
        };
      case 'clearhaus_error':
        // 50000: Clearhaus's own error; the money may or may not have moved. Its id, when named, lets
        // an authorization be voided (allowed on a 50000 authorization since 2024).
        this.logger?.warn({ ...ids, call, acquirer: this.name, code, acquirerReference: id }, `Clearhaus ${call} in doubt: status ${code}`);
        return {
          outcome: 'in_doubt',
          reason: `Clearhaus answered ${code} (${messageFor(code).replace(/\.$/, '')}): the outcome is unknown.`,
          acquirerReference: id,
          errorCode: errorCodeFor(code),
          externalStatusCodes: externalCodes(code),
        };
      default:
        this.logger?.warn({ ...ids, call, acquirer: this.name, code, acquirerReference: id }, `Clearhaus ${call} in doubt: unknown status ${code}`);
        return {
          outcome: 'in_doubt',
          reason: `Clearhaus answered the unknown status ${code}.`,
          acquirerReference: id,
          externalStatusCodes: externalCodes(code),
        };
    }
  }
}
