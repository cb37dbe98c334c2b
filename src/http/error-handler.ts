/**
 * The one error handler: AppError → its catalogue status and body; schema errors → 422 with
 * field errors; Fastify's own errors (bad JSON, wrong content type, body too large, unknown
 * route) → the catalogue codes; anything else → 500 SERVER_ERROR without internals (logged).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOGUE, type ErrorCode, type FieldErrors } from '../shared/errors.js';
import { type SchemaError, toFieldErrors } from './validation-errors.js';

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

/** Maps any thrown value to [status, body]. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody; unexpected: boolean } {
  if (error instanceof AppError) {
    return { status: error.status, body: errorBody(error.code, error.message, error.errors), unexpected: false };
  }
  const fe = error as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const errors = toFieldErrors(fe.validation, VALIDATION_ROOTS[fe.validationContext ?? 'body'] ?? 'body');
    const fields = Object.keys(errors);
    const message = fields.length ? `The request is invalid: ${fields.join(', ')}.` : 'The request is invalid.';
    return { status: 422, body: errorBody('VALIDATION_ERROR', message, errors), unexpected: false };
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
  const { status, body, unexpected } = toErrorResponse(error);
  if (unexpected) request.log.error({ err: error }, 'unexpected error');
  else request.log.debug({ errorCode: body.errorCode }, 'request refused');
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
