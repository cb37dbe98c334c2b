/** Errors as values: the error body of INTERFACE §3, and the one Error class the iterators throw. */

/** Every non-2xx answer's body: `{success: false, errorCode, message}`, and `errors` on 422 (field path → `["[rule]: text"]`). */
export interface ApiError {
  success: false;
  errorCode: string;
  message: string;
  errors?: Record<string, string[]>;
}

/** Is this value the §3 error body? */
export function isApiError(value: unknown): value is ApiError {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return v.success === false && typeof v.errorCode === 'string' && typeof v.message === 'string';
}

/**
 * Thrown by the list iterators (which cannot return an error value mid-loop) when a page request
 * fails: `status` is the HTTP status, `body` the typed §3 error body.
 */
export class PaymentsApiError extends Error {
  readonly status: number;
  readonly body: ApiError;
  constructor(status: number, body: ApiError) {
    super(`${status} ${body.errorCode}: ${body.message}`);
    this.name = 'PaymentsApiError';
    this.status = status;
    this.body = body;
  }
}

/**
 * An answer that is not the service's error body (a proxy's HTML page, an empty 502) is turned into
 * one, so that `error` always has the §3 shape: `errorCode` `UNEXPECTED_RESPONSE`.
 */
export function unexpectedResponseBody(status: number, text: string): ApiError {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return { success: false, errorCode: 'UNEXPECTED_RESPONSE', message: `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}` };
}
