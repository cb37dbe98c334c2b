/**
 * The error responses of the OpenAPI document, declared once: two shared body schemas
 * (components.schemas) and the responses every route gets by what it is — its auth tier, its
 * inputs, its method, its rate limit, its capability. They are added to the document only (the
 * swagger transform in openapi.ts), never to the route's runtime schema: error bodies keep being
 * written by the error handler exactly as before.
 */
import type { RouteDef } from '../shared/route.js';
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors.js';
import { ErrorResponse, ValidationErrorResponse } from '../shared/wire.js';

export const ERROR_BODY = 'ErrorBody';
export const VALIDATION_ERROR_BODY = 'ValidationErrorBody';
export const ERROR_BODY_REF = `#/components/schemas/${ERROR_BODY}`;
export const VALIDATION_ERROR_BODY_REF = `#/components/schemas/${VALIDATION_ERROR_BODY}`;

/** A plain JSON copy of a TypeBox schema (its symbol keys dropped), for the document. */
const plain = (schema: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/** components.schemas: the two error bodies of INTERFACE §3, from the same TypeBox schemas the routes use. */
export function errorComponents(): Record<string, unknown> {
  return {
    [ERROR_BODY]: {
      ...plain(ErrorResponse),
      description: 'The body of every refused request (INTERFACE §3). `errorCode` is one of the codes in the introduction.',
      examples: [{ success: false, errorCode: 'NOT_FOUND', message: 'The transaction does not exist.' }],
    },
    [VALIDATION_ERROR_BODY]: {
      ...plain(ValidationErrorResponse),
      description: '422: `VALIDATION_ERROR` with `errors` (field path → `[rule]: text` messages), or `IDEMPOTENCY_KEY_REUSED` without `errors`.',
      examples: [
        {
          success: false,
          errorCode: 'VALIDATION_ERROR',
          message: 'The request is invalid: amount, currency.',
          errors: { amount: ['[min:0]: must be at least 0'], currency: ['[regex]: must match ^[A-Z]{3}$'] },
        },
      ],
    },
  };
}

const RETRY_AFTER = { type: 'integer', description: 'Seconds to wait before retrying.' };
const RATE_LIMIT_HEADERS = {
  'Retry-After': RETRY_AFTER,
  'X-RateLimit-Limit': { type: 'integer', description: 'Bucket size (burst).' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the bucket.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix time (s) at which the bucket is full again.' },
};

/** A response entry the swagger transform turns into a Response Object whose body is a shared component. */
export interface DocErrorResponse {
  $ref: string;
  description: string;
  headers?: Record<string, { type: string; description: string }>;
}

function response(codes: ErrorCode[], when: string, headers?: DocErrorResponse['headers']): DocErrorResponse {
  const validation = codes.includes('VALIDATION_ERROR') || codes.includes('IDEMPOTENCY_KEY_REUSED');
  return {
    $ref: validation ? VALIDATION_ERROR_BODY_REF : ERROR_BODY_REF,
    description: `${codes.map((code) => `\`${code}\``).join(' or ')}: ${when}`,
    ...(headers ? { headers } : {}),
  };
}

/**
 * The error responses a route can answer with, by status. The route's own declared error
 * responses (a description that says more, e.g. MIT's ingestion cap) keep their description.
 */
export function standardErrorResponses(def: RouteDef): Record<number, DocErrorResponse> {
  const responses: Record<number, DocErrorResponse> = {};
  const hasInput = Boolean(def.schema.body || def.schema.querystring || def.schema.params);
  const mutating = def.method !== 'GET';
  if (def.schema.body) responses[400] = response(['BAD_REQUEST'], 'the body is not JSON, is empty, or was sent with another Content-Type.');
  if (def.auth !== 'public') {
    responses[401] = response(['UNAUTHORIZED'], 'no credential, or one that is unknown, revoked or expired.');
    responses[403] = def.capability
      ? response(['FORBIDDEN', 'CAPABILITY_NOT_ENABLED'], `a credential of another tier, or the account lacks the \`${def.capability}\` capability.`)
      : response(['FORBIDDEN'], tierRefusal(def.auth));
  }
  if (def.schema.params) responses[404] = response(['NOT_FOUND'], 'no such resource for this account (another account’s resource is 404 too).');
  if (def.idempotent) {
    responses[409] = response(
      ['CONFLICT', 'IDEMPOTENCY_KEY_IN_USE'],
      'the resource’s state does not allow this, or a request with this Idempotency-Key is still running.',
    );
  } else if (mutating) {
    responses[409] = response(['CONFLICT'], 'the resource’s state does not allow this.');
  }
  if (def.idempotent) {
    responses[422] = response(
      ['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED'],
      'a field is invalid (see `errors`), or the Idempotency-Key was used with another body.',
    );
  } else if (hasInput) {
    responses[422] = response(['VALIDATION_ERROR'], 'a field is invalid (see `errors`).');
  }
  if (def.rateLimit) responses[429] = response(['RATE_LIMIT_REACHED'], 'the rate limit of this endpoint is used up.', RATE_LIMIT_HEADERS);
  const overload = def.refusedWhenOverloaded ? ', or the backlog of accepted asynchronous work is at its bound' : '';
  responses[503] = response(['SERVICE_UNAVAILABLE'], `the database cannot be used right now${overload}; retry after Retry-After.`, {
    'Retry-After': RETRY_AFTER,
  });
  // Error responses the route declares itself (its runtime schema) are documented through the shared bodies too.
  for (const [key, declared] of Object.entries(def.schema.response ?? {})) {
    const status = Number(key);
    if (status < 400) continue;
    const own = (declared as { description?: unknown }).description;
    responses[status] ??= response(codesOf(status), 'see the introduction.');
    if (typeof own === 'string') responses[status].description = own;
  }
  return responses;
}

function tierRefusal(tier: RouteDef['auth']): string {
  return tier === 'merchant'
    ? 'the operator key was sent: this endpoint takes a merchant API key or access token.'
    : 'a merchant credential was sent: this endpoint takes the operator key.';
}

const codesOf = (status: number): ErrorCode[] => (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === status);
