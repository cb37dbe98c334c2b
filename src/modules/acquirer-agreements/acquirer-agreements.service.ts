import type { Clock } from '../../clock.js';
import type { Sealer } from '../../security/secret-box.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { AppError, FieldErrorCollector, fieldError, notFound, withNewIdsOnCollision } from '../../shared/errors.js';
import type { EventsLog } from '../../shared/events-log.js';
import { newId } from '../../shared/ids.js';
import type { AccountStatus } from '../accounts/account.js';
import {
  ACQUIRERS,
  API_KEY_PATTERN,
  type AcquirerAgreement,
  type AcquirerAgreementView,
  type AcquirerCredentials,
  type AcquirerName,
  agreementView,
  MCC_PATTERN,
  type NewAcquirerAgreement,
  SANDBOX_DEFAULT_MCC,
  TEXT_ON_STATEMENT_PATTERN,
  THREE_DS_PROVIDERS,
  type ThreeDSProviderName,
} from './acquirer-agreement.js';
import type { AcquirerAgreementsRepository } from './acquirer-agreements.repository.js';

/** How long a process answers `currentFor` from memory (real time): other processes see a PUT or DELETE within this. */
export const CURRENT_AGREEMENT_CACHE_MS = 1_000;
/** Accounts whose current agreement is remembered, and agreement rows whose credentials are (beyond: the oldest go). */
const MAX_CACHED = 10_000;

/** The body of a PUT as the route's schema lets it through (types only; the values are checked here). */
export interface AcquirerAgreementInput {
  acquirer: AcquirerName;
  apiKey?: string | undefined;
  mcc?: string | undefined;
  textOnStatement?: string | null | undefined;
  threeDSecure?: { provider?: string; apiKey?: string } | null | undefined;
}

const FIELDS = ['acquirer', 'apiKey', 'mcc', 'textOnStatement', 'threeDSecure'] as const;
const THREE_DS_FIELDS = ['provider', 'apiKey'] as const;
const FIELD_LIST = FIELDS.join(',');

const RULES = {
  apiKey: 'must be the Clearhaus API key, a UUID',
  mcc: 'must be 4 digits, e.g. 5999',
  textOnStatement: 'must be 2–22 printable ASCII characters',
  threeDSecureApiKey: "must be the merchant's 3dsecure.io API key, a UUID",
} as const;

export interface AcquirerAgreementsDeps {
  agreements: AcquirerAgreementsRepository;
  /** One commit: a PUT's new row and the previous row's removal are written together. */
  transaction<T>(fn: (repos: { acquirerAgreements: AcquirerAgreementsRepository }) => Promise<T>): Promise<T>;
  accounts: { findById(id: string): Promise<{ status: AccountStatus } | null> };
  sealer: Sealer;
  clock: Clock;
  /** Whether the deployment has a Clearhaus signing key (INTERFACE §12.2): without one, `clearhaus` is refused. */
  clearhausAvailable: boolean;
  events?: EventsLog;
  /** Real time, for how long `currentFor` is remembered (tests pass a fake one). */
  wallNow?: () => number;
}

export class AcquirerAgreementsService {
  /** Rows by id, with the key opened: a row never changes but for its removal, which credentials do not show. */
  private readonly byId = new BoundedMap<string, AcquirerCredentials>(MAX_CACHED);
  /** The current agreement of an account (null: none), until `until` (real time). */
  private readonly current = new BoundedMap<string, { credentials: AcquirerCredentials | null; until: number }>(MAX_CACHED);
  /** Bumped by every PUT and DELETE of this process: a read that started before one does not put its answer back after it. */
  private generation = 0;
  private readonly wallNow: () => number;

  constructor(private readonly deps: AcquirerAgreementsDeps) {
    this.wallNow = deps.wallNow ?? Date.now;
  }

  // ---- partner API ----

  /** PUT: validates, seals the key, and replaces the account's agreement in one commit. */
  async put(accountId: string, input: AcquirerAgreementInput): Promise<AcquirerAgreementView> {
    const fields = this.validate(input);
    const account = await this.deps.accounts.findById(accountId);
    if (!account) throw notFound('account');
    if (account.status === 'CLOSED') throw new AppError('CONFLICT', 'A deleted account cannot get an acquirer agreement.');
    const at = this.deps.clock.nowIso();
    const apiKeySealed = fields.apiKey === null ? null : this.deps.sealer.seal(fields.apiKey);
    const threeDSecure = fields.threeDSecure && { provider: fields.threeDSecure.provider, apiKeySealed: this.deps.sealer.seal(fields.threeDSecure.apiKey) };
    const row = await withNewIdsOnCollision('acquirer_agreements', () => {
      const next: NewAcquirerAgreement = {
        id: newId(),
        accountId,
        acquirer: fields.acquirer,
        apiKeySealed,
        mcc: fields.mcc,
        textOnStatement: fields.textOnStatement,
        threeDSecure,
      };
      return this.deps.transaction((repos) => repos.acquirerAgreements.replace(accountId, next, at));
    });
    this.forget(accountId);
    this.deps.events?.logEvent('acquirer.changed', { accountId, agreementId: row.id, acquirer: row.acquirer, mcc: row.mcc, change: 'REPLACED' });
    return agreementView(row);
  }

  async get(accountId: string): Promise<AcquirerAgreementView> {
    const row = await this.deps.agreements.current(accountId);
    if (!row) throw await this.missing(accountId);
    return agreementView(row);
  }

  /** DELETE: the current row is marked removed (kept: transactions it authorized still use it). */
  async remove(accountId: string): Promise<AcquirerAgreementView> {
    const row = await this.deps.agreements.remove(accountId, this.deps.clock.nowIso());
    if (!row) throw await this.missing(accountId);
    this.forget(accountId);
    this.deps.events?.logEvent('acquirer.changed', { accountId, agreementId: row.id, acquirer: row.acquirer, mcc: row.mcc, change: 'REMOVED' });
    return agreementView(row);
  }

  // ---- the payment engine ----

  /**
   * The credentials of an agreement row, removed or not (a transaction's captures, refunds and
   * voids go where it was authorized). Read once per process: rows do not change. Throws for an
   * id that names no row (a transaction cannot name one that was never written).
   */
  async credentialsOf(agreementId: string): Promise<AcquirerCredentials> {
    const cached = this.byId.get(agreementId);
    if (cached) return cached;
    const row = await this.deps.agreements.findById(agreementId);
    if (!row) throw new Error(`acquirer agreement ${agreementId} does not exist`);
    return this.remember(row);
  }

  /**
   * The account's current agreement (null: none), as credentials. Answered from memory for up to
   * CURRENT_AGREEMENT_CACHE_MS of real time, so a payment costs no read; a PUT or DELETE made by
   * this process is seen at once, one made by another process within that time.
   */
  async currentFor(accountId: string): Promise<AcquirerCredentials | null> {
    const cached = this.current.get(accountId);
    if (cached && cached.until > this.wallNow()) return cached.credentials;
    const mark = this.generation;
    const row = await this.deps.agreements.current(accountId);
    const credentials = row ? this.remember(row) : null;
    if (mark === this.generation) this.current.set(accountId, { credentials, until: this.wallNow() + CURRENT_AGREEMENT_CACHE_MS });
    return credentials;
  }

  // ---- internals ----

  /** The values a PUT stores, or a 422 naming every field that is wrong and what it should be. */
  private validate(input: AcquirerAgreementInput): {
    acquirer: AcquirerName;
    apiKey: string | null;
    mcc: string;
    textOnStatement: string | null;
    threeDSecure: { provider: ThreeDSProviderName; apiKey: string } | null;
  } {
    const errors = new FieldErrorCollector();
    for (const field of Object.keys(input)) {
      if (!(FIELDS as readonly string[]).includes(field))
        errors.add(field, `in:${FIELD_LIST}`, `is not a field of an acquirer agreement (the fields are ${FIELDS.join(', ')})`);
    }
    const { acquirer, apiKey, mcc, textOnStatement } = input;
    if (!(ACQUIRERS as readonly string[]).includes(acquirer)) errors.add('acquirer', `in:${ACQUIRERS.join(',')}`, `must be one of ${ACQUIRERS.join(', ')}`);
    if (acquirer === 'clearhaus') {
      if (apiKey === undefined) errors.add('apiKey', 'required', `is required for clearhaus and ${RULES.apiKey}`);
      else if (!API_KEY_PATTERN.test(apiKey)) errors.add('apiKey', 'uuid', RULES.apiKey);
      if (mcc === undefined) errors.add('mcc', 'required', `is required for clearhaus and ${RULES.mcc}`);
    } else if (apiKey !== undefined) {
      errors.add('apiKey', 'in:clearhaus', `is taken with acquirer clearhaus only (a ${acquirer} agreement has no API key)`);
    }
    if (mcc !== undefined && !MCC_PATTERN.test(mcc)) errors.add('mcc', 'regex', RULES.mcc);
    if (textOnStatement !== undefined && textOnStatement !== null && !TEXT_ON_STATEMENT_PATTERN.test(textOnStatement)) {
      errors.add('textOnStatement', 'regex', RULES.textOnStatement);
    }
    const threeDSecure = this.validateThreeDSecure(input.threeDSecure, acquirer, errors);
    errors.throwIfAny();
    // Checked after the fields: a request that would be refused anyway says everything that is wrong with it.
    if (acquirer === 'clearhaus' && !this.deps.clearhausAvailable) {
      throw fieldError('acquirer', 'in:sandbox', 'clearhaus is not available: this deployment has no Clearhaus signing key (CLEARHAUS_SIGNING_KEY_ID)');
    }
    return {
      acquirer,
      apiKey: acquirer === 'clearhaus' ? apiKey! : null,
      mcc: mcc ?? SANDBOX_DEFAULT_MCC,
      textOnStatement: textOnStatement ?? null,
      threeDSecure,
    };
  }

  /**
   * `threeDSecure: {provider: "3dsecure.io", apiKey}` (INTERFACE §13), clearhaus only: the 3DS
   * Server needs the acquirer's account (BIN, merchant id) for its AReq. Null or absent: none.
   */
  private validateThreeDSecure(
    value: AcquirerAgreementInput['threeDSecure'],
    acquirer: AcquirerName,
    errors: FieldErrorCollector,
  ): { provider: ThreeDSProviderName; apiKey: string } | null {
    if (value === undefined || value === null) return null;
    if (acquirer !== 'clearhaus') {
      errors.add('threeDSecure', 'in:clearhaus', `is taken with acquirer clearhaus only (a ${acquirer} agreement runs the simulated 3-D Secure step)`);
      return null;
    }
    for (const field of Object.keys(value)) {
      if (!(THREE_DS_FIELDS as readonly string[]).includes(field))
        errors.add(`threeDSecure.${field}`, `in:${THREE_DS_FIELDS.join(',')}`, `is not a field of threeDSecure (the fields are ${THREE_DS_FIELDS.join(', ')})`);
    }
    const { provider, apiKey } = value;
    if (provider === undefined) errors.add('threeDSecure.provider', 'required', `is required and must be one of ${THREE_DS_PROVIDERS.join(', ')}`);
    else if (!(THREE_DS_PROVIDERS as readonly string[]).includes(provider))
      errors.add('threeDSecure.provider', `in:${THREE_DS_PROVIDERS.join(',')}`, `must be one of ${THREE_DS_PROVIDERS.join(', ')}`);
    if (apiKey === undefined) errors.add('threeDSecure.apiKey', 'required', `is required and ${RULES.threeDSecureApiKey}`);
    else if (typeof apiKey !== 'string' || !API_KEY_PATTERN.test(apiKey)) errors.add('threeDSecure.apiKey', 'uuid', RULES.threeDSecureApiKey);
    return provider !== undefined && apiKey !== undefined ? { provider: provider as ThreeDSProviderName, apiKey } : null;
  }

  /** 404 for an account with no agreement: the account's own message when it does not exist. */
  private async missing(accountId: string): Promise<AppError> {
    return (await this.deps.accounts.findById(accountId)) ? notFound('acquirer agreement') : notFound('account');
  }

  private remember(row: AcquirerAgreement): AcquirerCredentials {
    const known = this.byId.get(row.id);
    if (known) return known;
    const credentials: AcquirerCredentials = {
      id: row.id,
      accountId: row.accountId,
      acquirer: row.acquirer,
      mcc: row.mcc,
      textOnStatement: row.textOnStatement,
      apiKey: row.apiKeySealed === null ? null : this.deps.sealer.open(row.apiKeySealed),
      threeDSecure: row.threeDSecure && { provider: row.threeDSecure.provider, apiKey: this.deps.sealer.open(row.threeDSecure.apiKeySealed) },
    };
    // Shared by every caller: frozen, so that none can change what the others get.
    Object.freeze(credentials);
    this.byId.set(row.id, credentials);
    return credentials;
  }

  private forget(accountId: string): void {
    this.generation++;
    this.current.delete(accountId);
  }
}
