/**
 * The one error catalogue: every error code the API can answer with, its HTTP status and a
 * default message. The error handler maps AppError to HTTP through this table, and the docs
 * (docs/errors.md) publish it; test/foundation/errors-catalogue.test.ts keeps the two equal.
 */
export const ERROR_CATALOGUE = {
  BAD_REQUEST: { status: 400, message: 'The request could not be understood.' },
  UNAUTHORIZED: { status: 401, message: 'A valid bearer credential is required.' },
  FORBIDDEN: { status: 403, message: 'This credential may not use this endpoint.' },
  CAPABILITY_NOT_ENABLED: { status: 403, message: 'This capability is not enabled for the account.' },
  NOT_FOUND: { status: 404, message: 'The resource does not exist.' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state of the resource.' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, message: 'A request with this Idempotency-Key is still being processed.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time (headers within 15 s, the whole request within 30 s).' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body exceeds 1 MiB.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  VALIDATION_ERROR: { status: 422, message: 'The request is invalid.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'This Idempotency-Key was used with a different request body.' },
  RATE_LIMIT_REACHED: { status: 429, message: 'Too many requests; retry after the time given in Retry-After.' },
  SERVER_ERROR: { status: 500, message: 'An unexpected error occurred.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service cannot take this request now; retry after the time given in Retry-After.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Field path → list of "[rule]: text" messages. */
export type FieldErrors = Record<string, string[]>;

/**
 * The rules a field error may name (INTERFACE §3), as a type: a business rule that has no name of
 * its own uses the closest one (a Luhn failure is `regex`, an unknown reference is `in:...`).
 */
export type FieldRule =
  'required' | 'int' | 'string' | 'boolean' | 'uuid' | 'date' | 'url' | 'regex' | 'array' | `in:${string}` | `min:${number}` | `max:${number}`;

/** An id that must name an existing resource of the account (a point of sale, a stored card, a terminal). */
export const EXISTING: FieldRule = 'in:existing';

/** The contract's rule names, for tests that check every emitted message. */
export const FIELD_RULE_PATTERN = /^\[(required|int|string|boolean|uuid|date|url|regex|array|in:[^\]]+|min:-?\d+|max:-?\d+)\]: ./;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldErrors | undefined;
  /** Seconds for the Retry-After header (a 503 the error handler would otherwise give its default). */
  readonly retryAfterS: number | undefined;
  /** Response headers that belong to the refusal (a 429's Retry-After and X-RateLimit-*, INTERFACE §5). */
  readonly headers: Readonly<Record<string, string | number>> | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    errors?: FieldErrors,
    options: { retryAfterS?: number; headers?: Readonly<Record<string, string | number>> } = {},
  ) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.errors = errors;
    this.retryAfterS = options.retryAfterS;
    this.headers = options.headers;
  }
}

export const notFound = (what = 'resource'): AppError => new AppError('NOT_FOUND', `The ${what} does not exist.`);

/** One business-rule validation failure on one field, shaped like a schema error. */
export function fieldError(field: string, rule: FieldRule, text: string): AppError {
  return new AppError('VALIDATION_ERROR', `The request is invalid: ${field} ${text}.`, { [field]: [`[${rule}]: ${text}`] });
}

/** Collects several field failures, then throws them as one 422. */
export class FieldErrorCollector {
  private readonly errors: FieldErrors = {};
  add(field: string, rule: FieldRule, text: string): this {
    // An own property even for a name Object.prototype has (a body field named `constructor` or `__proto__`).
    if (!Object.hasOwn(this.errors, field)) Object.defineProperty(this.errors, field, { value: [], enumerable: true, writable: true, configurable: true });
    this.errors[field]!.push(`[${rule}]: ${text}`);
    return this;
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) {
      const fields = Object.keys(this.errors).join(', ');
      throw new AppError('VALIDATION_ERROR', `The request is invalid: ${fields}.`, this.errors);
    }
  }
}

/**
 * Codes a transaction can carry in `errorCode` (INTERFACE §3), and the codes of a failed
 * operation result (capture, refund, void, renew). Kept here so that docs and tests read one list.
 */
export const TRANSACTION_ERROR_CODES = [
  'DECLINED_BY_ISSUER_OR_SCHEME',
  'INSUFFICIENT_FUNDS',
  'DO_NOT_HONOR',
  'CARD_EXPIRED',
  'CARD_LOST_OR_STOLEN',
  'CARD_RESTRICTED',
  'CARD_BLOCKED',
  'SUSPECTED_FRAUD',
  'INVALID_CARD_NUMBER',
  'INVALID_CVC',
  'AMOUNT_LIMIT_EXCEEDED',
  'ACQUIRER_DECLINED',
  'ACQUIRER_DOWN',
  'ACQUIRER_TIMEOUT',
  'ISSUER_DOWN',
  'SCA_REQUIRED',
  'REJECTED_BY_SCA',
  'SCA_EXPIRED',
  'SCA_CANCELLED_BY_USER',
  'CANCELLED_BY_USER',
  'EXPIRED',
  'MANUAL_ABORTED',
  'TERMINAL_BUSY',
  'TERMINAL_NOT_CONFIGURED',
  'SUBSCRIPTION_NOT_ACTIVE',
  'SYSTEM_ERROR',
  // INTERFACE §11.1
  'REJECTED_BY_MERCHANT',
  'CARD_CLOSED',
  'MISSING_ACQUIRER_AGREEMENT',
  'AGE_VERIFICATION_NOT_COMPLETED',
  'INVALID_AGREEMENT',
  'REJECTED_UNKNOWN',
] as const;
export type TransactionErrorCode = (typeof TRANSACTION_ERROR_CODES)[number];

export const OPERATION_ERROR_CODES = [
  'DECLINED_BY_ISSUER_OR_SCHEME',
  'AMOUNT_EXCEEDS_REMAINING',
  'INVALID_STATE',
  'NOT_SUPPORTED_FOR_PAYMENT_METHOD',
  'ACQUIRER_TIMEOUT',
] as const;
export type OperationErrorCode = (typeof OPERATION_ERROR_CODES)[number];

/**
 * A commit refused because a new row's id is taken (the store's unique violation of a primary
 * key, translated by the store): the ids were random, so the same work with new ids will do.
 */
export class DuplicateId extends Error {
  constructor(readonly table: string) {
    super(`a new ${table} row's id is taken`);
    this.name = 'DuplicateId';
  }
}

/**
 * A commit refused because a conditional write it held found its rows other than the writer
 * predicted (an answer already applied, a transaction moved meanwhile): nothing of it was
 * committed. Translated by the store from the statement's own refusal (stale-write.ts).
 */
export class StaleWrite extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleWrite';
  }
}

/**
 * Tries of a create commit whose new row's id was taken, each with new ids. Transaction ids have
 * 30 random bits after the second they are made in (ids.ts): a batch of 500 at 15 000 ids a second
 * meets a taken one with odds of about 1 in 140, five in a row about 1 in 6·10^10. Payment-link and
 * multi-link ids are 55 random bits (at 10^8 rows about one insert in 3·10^8 collides).
 */
export const NEW_ID_TRIES = 5;

/** `create` (it makes its rows with new ids each time) again while its commit finds a new `table` row's id taken. */
export async function withNewIdsOnCollision<T>(table: string, create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (err) {
      if (!(err instanceof DuplicateId && err.table === table) || attempt === NEW_ID_TRIES) throw err;
    }
  }
}
