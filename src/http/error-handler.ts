/**
 * The one error handler: AppError → its catalogue status and body; schema errors → 422 with
 * field errors; Fastify's own errors (bad JSON, wrong content type, body too large, unknown
 * route) → the catalogue codes; a database that cannot be used (storage/unavailable.ts) → 503
 * SERVICE_UNAVAILABLE with Retry-After (so does an AppError 503: the backlog bound, jobs/backlog.ts);
 * anything else → 500 SERVER_ERROR without internals (logged).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOGUE, type ErrorCode, type FieldErrors } from '../shared/errors.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_S } from '../storage/unavailable.js';
import { type SchemaError, toFieldErrors, validationMessage } from '../shared/field-errors.js';
import { noteErrorCode } from './request-log.js';

export interface ErrorBody {
  success: false;
  errorCode: string;
  message: string;
  errors?: FieldErrors;
}

export function errorBody(code: ErrorCode, message?: string, errors?: FieldErrors): ErrorBody {
  const body: ErrorBody = { success: false, errorCode: code, message: message ?? ERROR_CATALOGUE[code].message };
  if (errors) body.errors = errors;
  return body;
}

const VALIDATION_ROOTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

/** Maps any thrown value to [status, body]; `unavailable` marks a database outage (503). */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody; unexpected: boolean; unavailable?: true } {
  if (error instanceof AppError) {
    return { status: error.status, body: errorBody(error.code, error.message, error.errors), unexpected: false };
  }
  if (isStoreUnavailable(error)) {
    return { status: 503, body: errorBody('SERVICE_UNAVAILABLE'), unexpected: false, unavailable: true };
  }
  const fe = error as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const errors = toFieldErrors(fe.validation, VALIDATION_ROOTS[fe.validationContext ?? 'body'] ?? 'body');
    return { status: 422, body: errorBody('VALIDATION_ERROR', validationMessage(errors), errors), unexpected: false };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorBody('PAYLOAD_TOO_LARGE'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 400, body: errorBody('BAD_REQUEST', 'The body must be JSON sent with Content-Type: application/json.'), unexpected: false };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: errorBody('BAD_REQUEST', 'The body is empty although Content-Type is application/json.'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { status: 400, body: errorBody('BAD_REQUEST', 'The body is not valid JSON.'), unexpected: false };
    default:
      break;
  }
  if (error instanceof SyntaxError || fe.statusCode === 400) {
    return { status: 400, body: errorBody('BAD_REQUEST', 'The request could not be understood.'), unexpected: false };
  }
  if (fe.statusCode === 413) return { status: 413, body: errorBody('PAYLOAD_TOO_LARGE'), unexpected: false };
  if (fe.statusCode === 404) return { status: 404, body: errorBody('NOT_FOUND'), unexpected: false };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: 400, body: errorBody('BAD_REQUEST', 'The request could not be understood.'), unexpected: false };
  }
  return { status: 500, body: errorBody('SERVER_ERROR'), unexpected: true };
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body, unexpected, unavailable } = toErrorResponse(error);
  noteErrorCode(request, body.errorCode);
  if (unexpected) request.log.error({ err: error }, 'unexpected error');
  else if (unavailable) request.log.warn({ cause: describe(error) }, 'database unavailable: answered 503');
  else request.log.debug({ errorCode: body.errorCode }, 'request refused');
  // The refusal's own headers (an ingestion cap's 429: Retry-After and X-RateLimit-*) replace those of the request bucket.
  if (error instanceof AppError && error.headers) for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  // Every 503 says when to come back: the AppError's own value (the backlog bound), else the outage default.
  if (status === 503 && !reply.hasHeader('retry-after')) {
    reply.header('retry-after', error instanceof AppError && error.retryAfterS !== undefined ? error.retryAfterS : STORE_RETRY_AFTER_S);
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** Code and message of a storage error for the log line (no stack: an outage repeats it for every request). */
function describe(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return [code, message].filter((part) => typeof part === 'string' && part).join(' ') || String(error);
}
