/**
 * The error responses of the OpenAPI document, declared once: two shared body schemas
 * (components.schemas) and the responses every route gets by what it is — its auth tier, its
 * inputs, its method, its rate limit, its capability. They are added to the document only (the
 * swagger transform in openapi.ts), never to the route's runtime schema: error bodies keep being
 * written by the error handler exactly as before.
 *
 * Each error response carries examples of this route's own refusals: the generic ones written here
 * (the 404 names the resource of the path id, the 422 is a real field error of the route's schema
 * in the error handler's words), after the route's own `errorExamples`. The same entries end the
 * operation's description as its table of errors. A new route needs a `description` and examples
 * on its body and 2xx schemas: test/foundation/openapi-examples.test.ts checks every one, and sends
 * every request example to a running service.
 */
import type { ErrorExample, RouteDef } from '../shared/route.js';
import { ERROR_CATALOGUE, type ErrorCode, type FieldErrors } from '../shared/errors.js';
import { type SchemaError, toFieldErrors } from '../shared/field-errors.js';
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

/**
 * A response entry the swagger transform turns into a Response Object: its body is a shared
 * component, its examples are this operation's own (a capture shows capture refusals).
 */
export interface DocErrorResponse {
  description: string;
  headers?: Record<string, { type: string; description: string }>;
  content: { 'application/json': { schema: { $ref: string }; examples: Record<string, { summary: string; value: Record<string, unknown> }> } };
}

function response(
  codes: ErrorCode[],
  when: string,
  examples: ErrorExample[],
  headers?: Record<string, { type: string; description: string }>,
): DocErrorResponse {
  const validation = codes.includes('VALIDATION_ERROR') || codes.includes('IDEMPOTENCY_KEY_REUSED');
  return {
    description: `${codes.map((code) => `\`${code}\``).join(' or ')}: ${when}`,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: validation ? VALIDATION_ERROR_BODY_REF : ERROR_BODY_REF }, examples: examplesObject(examples) } },
  };
}

/** Media-type examples keyed by error code (a second example of the same code gets a number). */
function examplesObject(examples: ErrorExample[]): DocErrorResponse['content']['application/json']['examples'] {
  const out: DocErrorResponse['content']['application/json']['examples'] = {};
  for (const { summary, errorCode, message, errors } of examples) {
    let key: string = errorCode;
    for (let n = 2; key in out; n++) key = `${errorCode}_${n}`;
    out[key] = { summary, value: { success: false, errorCode, message, ...(errors ? { errors } : {}) } };
  }
  return out;
}

const example = (summary: string, errorCode: ErrorCode, message: string = ERROR_CATALOGUE[errorCode].message, errors?: FieldErrors): ErrorExample => ({
  summary,
  errorCode,
  message,
  ...(errors ? { errors } : {}),
});

/** Path parameter → the resource its 404 names (the services' `notFound(...)` wording). */
const RESOURCE_OF_PARAM: Record<string, string> = {
  transactionId: 'transaction',
  notificationId: 'notification',
  paymentMethodId: 'payment method',
  accountId: 'account',
  pointOfSaleId: 'point of sale',
  terminalId: 'terminal',
  webhookId: 'webhook',
  subscriptionId: 'subscription',
  sessionId: 'session',
  planId: 'billing plan',
  agreementId: 'billing agreement',
  billingAgreementChargeId: 'billing agreement charge',
  transferId: 'settlement transfer',
  paymentLinkId: 'payment link',
  multiLinkId: 'multi-link',
  operationId: 'operation in doubt',
};

type JsonSchema = {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  format?: string;
  pattern?: string;
  maxLength?: number;
  maximum?: number;
  default?: unknown;
};

/**
 * A field error this route really answers, in the words of the error handler (field-errors.ts):
 * a required body field left out, else a path id in the wrong format, else a query value out of range.
 */
function validationExample(def: RouteDef): ErrorExample | null {
  const declared = def.schema.body as (JsonSchema & { anyOf?: JsonSchema[] }) | undefined;
  // A body that is one of several shapes (a union): the first shape's fields.
  const body = declared?.anyOf?.[0] ?? declared;
  const params = def.schema.params as JsonSchema | undefined;
  const query = def.schema.querystring as JsonSchema | undefined;
  let errors: FieldErrors | null = null;
  const required = body?.required?.find((name) => !(body.properties?.[name] && 'default' in body.properties[name]!));
  if (required) errors = toFieldErrors([{ keyword: 'required', instancePath: '', params: { missingProperty: required } }], 'body');
  const [paramName, param] = Object.entries(params?.properties ?? {}).pop() ?? [];
  if (!errors && paramName && param) {
    const error: SchemaError | null =
      param.format === 'uuid'
        ? { keyword: 'format', instancePath: `/${paramName}`, params: { format: 'uuid' } }
        : param.pattern
          ? { keyword: 'pattern', instancePath: `/${paramName}`, params: { pattern: param.pattern } }
          : param.maxLength
            ? { keyword: 'maxLength', instancePath: `/${paramName}`, params: { limit: param.maxLength } }
            : null;
    if (error) errors = toFieldErrors([error], 'path');
  }
  const bounded = Object.entries(query?.properties ?? {}).find(([, schema]) => typeof schema.maximum === 'number');
  if (!errors && bounded) {
    const error: SchemaError = { keyword: 'maximum', instancePath: `/${bounded[0]}`, params: { limit: bounded[1].maximum } };
    errors = toFieldErrors([error], 'query');
  }
  const firstBodyField = Object.keys(body?.properties ?? {})[0];
  if (!errors && firstBodyField) errors = toFieldErrors([{ keyword: 'type', instancePath: `/${firstBodyField}`, params: { type: 'string' } }], 'body');
  if (!errors) return null;
  const fields = Object.keys(errors);
  const missing = Object.values(errors).some((messages) => messages.some((m) => m.startsWith('[required]')));
  const summary = `\`${fields.join('`, `')}\` ${missing ? 'is missing' : 'is invalid'}`;
  return example(summary, 'VALIDATION_ERROR', `The request is invalid: ${fields.join(', ')}.`, errors);
}

/**
 * The error responses a route can answer with, by status, each with examples of this route's own
 * refusals. The route's own declared error responses (a description that says more, e.g. MIT's
 * ingestion cap) keep their description; its `errorExamples` come first under their status.
 */
export function standardErrorResponses(def: RouteDef): Record<number, DocErrorResponse> {
  const responses: Record<number, DocErrorResponse> = {};
  const own = def.errorExamples ?? {};
  const hasInput = Boolean(def.schema.body || def.schema.querystring || def.schema.params);
  const mutating = def.method !== 'GET';
  const entry = (status: number, codes: ErrorCode[], when: string, generic: ErrorExample[], headers?: DocErrorResponse['headers']) => {
    responses[status] = response(codes, when, [...(own[status] ?? []), ...generic], headers);
  };
  if (def.schema.body) {
    entry(400, ['BAD_REQUEST'], 'the body is not JSON, is empty, or was sent with another Content-Type.', [
      example('The body is not JSON', 'BAD_REQUEST', 'The body is not valid JSON.'),
    ]);
  }
  if (def.auth !== 'public') {
    entry(401, ['UNAUTHORIZED'], 'no credential, or one that is unknown, revoked or expired.', [example('No or an unknown bearer credential', 'UNAUTHORIZED')]);
    const wrongTier = example(
      def.auth === 'merchant' ? 'The operator key was sent' : 'A merchant credential was sent',
      'FORBIDDEN',
      def.auth === 'merchant' ? 'This endpoint needs a merchant credential.' : 'This endpoint needs the operator key.',
    );
    if (def.capability) {
      entry(403, ['FORBIDDEN', 'CAPABILITY_NOT_ENABLED'], `a credential of another tier, or the account lacks the \`${def.capability}\` capability.`, [
        example(`The account lacks the \`${def.capability}\` capability`, 'CAPABILITY_NOT_ENABLED', CAPABILITY_MESSAGES[def.capability]),
        wrongTier,
      ]);
    } else entry(403, ['FORBIDDEN'], tierRefusal(def.auth), [wrongTier]);
  }
  if (def.schema.params) {
    const names = Object.keys((def.schema.params as JsonSchema).properties ?? {});
    const resource = RESOURCE_OF_PARAM[names[names.length - 1] ?? ''] ?? 'resource';
    entry(404, ['NOT_FOUND'], 'no such resource for this account (another account’s resource is 404 too).', [
      example(`No such ${resource} for this account`, 'NOT_FOUND', `The ${resource} does not exist.`),
    ]);
  }
  const inUse = example('The first request with this Idempotency-Key is still running', 'IDEMPOTENCY_KEY_IN_USE');
  if (def.idempotent) {
    entry(409, ['CONFLICT', 'IDEMPOTENCY_KEY_IN_USE'], 'the resource’s state does not allow this, or a request with this Idempotency-Key is still running.', [
      inUse,
    ]);
  } else if (mutating) {
    entry(409, ['CONFLICT'], 'the resource’s state does not allow this.', own[409] ? [] : [example('The resource’s state does not allow this', 'CONFLICT')]);
  }
  const invalid = validationExample(def);
  if (def.idempotent) {
    entry(422, ['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED'], 'a field is invalid (see `errors`), or the Idempotency-Key was used with another body.', [
      ...(invalid ? [invalid] : []),
      example('The Idempotency-Key was used with another body', 'IDEMPOTENCY_KEY_REUSED'),
    ]);
  } else if (hasInput) {
    entry(422, ['VALIDATION_ERROR'], 'a field is invalid (see `errors`).', invalid ? [invalid] : []);
  }
  if (def.rateLimit) {
    entry(
      429,
      ['RATE_LIMIT_REACHED'],
      'the rate limit of this endpoint is used up.',
      [example('Too many requests: the rate limit is used up (see Retry-After)', 'RATE_LIMIT_REACHED')],
      RATE_LIMIT_HEADERS,
    );
  }
  const overload = def.refusedWhenOverloaded ? ', or the backlog of accepted asynchronous work is at its bound' : '';
  entry(
    503,
    ['SERVICE_UNAVAILABLE'],
    `the database cannot be used right now${overload}; retry after Retry-After.`,
    [
      example('The database cannot be used right now', 'SERVICE_UNAVAILABLE'),
      ...(def.refusedWhenOverloaded
        ? [
            example(
              'The backlog is at its bound',
              'SERVICE_UNAVAILABLE',
              'The backlog of accepted work is at its bound; retry after the time given in Retry-After.',
            ),
          ]
        : []),
    ],
    { 'Retry-After': RETRY_AFTER },
  );
  // Error responses the route declares itself (its runtime schema) are documented through the shared bodies too.
  for (const [key, declared] of Object.entries(def.schema.response ?? {})) {
    const status = Number(key);
    if (status < 400) continue;
    const description = (declared as { description?: unknown }).description;
    if (!responses[status]) {
      const codes = codesOf(status);
      entry(status, codes, 'see the introduction.', [example(ERROR_CATALOGUE[codes[0]!].message, codes[0]!)]);
    }
    if (typeof description === 'string') responses[status]!.description = description;
  }
  // Examples the route declares for a status no rule above documents.
  for (const [key, examples] of Object.entries(own)) {
    const status = Number(key);
    if (!responses[status] && examples?.length) entry(status, [...new Set(examples.map((e) => e.errorCode))], 'see the introduction.', []);
  }
  return responses;
}

const CAPABILITY_MESSAGES: Record<NonNullable<RouteDef['capability']>, string> = {
  moto: 'The MOTO capability is not enabled for this account.',
  syncPayout: 'The synchronous payout capability is not enabled for this account.',
};

function tierRefusal(tier: RouteDef['auth']): string {
  return tier === 'merchant'
    ? 'the operator key was sent: this endpoint takes a merchant API key or access token.'
    : 'a merchant credential was sent: this endpoint takes the operator key.';
}

const codesOf = (status: number): ErrorCode[] => (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === status);
