/**
 * The fetch every call goes through: adds `Idempotency-Key` to mutating requests that have none,
 * retries 429 and 503 answers after the `Retry-After` they carry (bounded in count and wait, with the
 * same request — so the same Idempotency-Key), and gives every non-2xx answer the §3 error body.
 */
import { isApiError, unexpectedResponseBody } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** The longest `Retry-After` waited for, in seconds (default 30); a longer one is returned as the error. */
  maxRetryAfterSeconds?: number;
  /** Wait when an answer has no usable `Retry-After`, in seconds (default 1, doubled each retry). */
  defaultDelaySeconds?: number;
}

const RETRYABLE = new Set([429, 503]);
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type FetchFn = (request: Request) => Promise<Response>;

/** Seconds to wait from a `Retry-After` value (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function paymentsFetch(baseFetch: FetchFn, options: RetryOptions = {}): FetchFn {
  const maxRetries = options.maxRetries ?? 3;
  const maxWait = options.maxRetryAfterSeconds ?? 30;
  const fallback = options.defaultDelaySeconds ?? 1;
  return async (input) => {
    const request = input;
    if (MUTATING.has(request.method) && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newIdempotencyKey());
    for (let attempt = 0; ; attempt++) {
      // Each attempt sends a copy: the body stays readable for the next one.
      const response = await baseFetch(request.clone());
      if (RETRYABLE.has(response.status) && attempt < maxRetries) {
        const wait = retryAfterSeconds(response.headers.get('retry-after')) ?? fallback * 2 ** attempt;
        if (wait <= maxWait) {
          await response.body?.cancel().catch(() => undefined);
          await sleep(wait * 1000);
          continue;
        }
      }
      return response.ok ? response : normaliseError(response);
    }
  };
}

/** A non-2xx answer whose body is not the §3 error body gets one (status and headers kept). */
async function normaliseError(response: Response): Promise<Response> {
  const text = await response.clone().text();
  try {
    if (isApiError(JSON.parse(text))) return response;
  } catch {}
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  return new Response(JSON.stringify(unexpectedResponseBody(response.status, text)), { status: response.status, statusText: response.statusText, headers });
}
