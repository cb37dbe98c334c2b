/**
 * Assembles the HTTP application from route objects: auth tiers, capabilities, rate limits,
 * idempotency, validation and the one error handler, plus health, metrics and the OpenAPI document.
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyServerOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Principal } from '../modules/accounts/account.js';
import { isKnownCurrency } from '../shared/currencies.js';
import { AppError } from '../shared/errors.js';
import { EMPTY_BODY, type HtmlResult, type RouteDef } from '../shared/route.js';
import { errorBody, handleError, toErrorResponse } from './error-handler.js';
import { bodyWithoutCoercion, numericFields, requireDecimalDigits } from './exact-numbers.js';
import { serializeRecords } from './record-serializer.js';
import {
  type IdempotencyRef,
  type IdempotencyStore,
  IDEMPOTENCY_TTL_MS,
  IN_FLIGHT_LOCK_MS,
  isInterruptedByOutage,
  isPreExecutionRefusal,
  reopenInterrupted,
  requestHash,
  validateKey,
} from './idempotency.js';
import type { Metrics } from './metrics.js';
import type { RateLimiter } from './rate-limit.js';
import type { Sealer } from '../security/secret-box.js';
import type { Effect } from '../shared/effect.js';

export const API_PREFIX = '/public/api/v1';

/**
 * Compiled validators and serializers shared by every app built in this process (tests and
 * benchmarks build many): route schemas are module constants, so compiling them once is enough.
 * The validator pool keeps one Ajv per option set, and Ajv caches by schema object; serializers
 * are cached here by schema object.
 */
const SHARED_VALIDATOR_FACTORY = bodyWithoutCoercion(AjvCompiler() as never);
const SHARED_SERIALIZER_FACTORY = (() => {
  const build = SerializerSelector();
  const cache = new WeakMap<object, unknown>();
  return (externalSchemas: unknown, options: unknown) => {
    const compile = build(externalSchemas as never, options as never);
    return (route: { schema: object }) => {
      if (!cache.has(route.schema)) cache.set(route.schema, compile(route as never));
      return cache.get(route.schema);
    };
  };
})();
const SHARED_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator: SHARED_VALIDATOR_FACTORY, buildSerializer: SHARED_SERIALIZER_FACTORY },
} as unknown as FastifyServerOptions['schemaController'];
export const BODY_LIMIT = 1024 * 1024;
/**
 * A request (headers and body) must have arrived this long after it started, or it is answered 408
 * and its connection closed: a client trickling a body cannot hold a socket for minutes. Checked
 * every 5 s. Responses may take longer (MOTO, capture): this bounds only what the client sends.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Headers alone must arrive within this time (slowloris). */
export const HEADERS_TIMEOUT_MS = 15_000;

export interface AppOptions {
  logger: Logger;
  routes: RouteDef[];
  authenticate(secret: string): Promise<Principal | null>;
  idempotency: IdempotencyStore;
  /** Encrypts the stored responses of routes that answer with a credential (RouteDef.secretResponse). */
  sealer: Sealer;
  rateLimiter: RateLimiter | null;
  now(): number;
  publicUrl: string;
  ready(): Promise<void>;
  metrics: Metrics;
  version: string;
  /** REQUEST_TIMEOUT_MS unless given (tests). */
  requestTimeoutMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    idempotencyRef: IdempotencyRef | null;
    /** The claim's effect, handed to the use case (RequestContext.effect). */
    idempotencyEffect: Effect | null;
  }
  interface FastifyContextConfig {
    def?: RouteDef;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    schemaController: SHARED_SCHEMA_CONTROLLER,
    loggerInstance: options.logger as unknown as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: Math.min(5_000, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
    },
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // One log line per request is written in onResponse; Fastify's own pair is switched off.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: true },
      onCreate: (ajv) => {
        strictDateTime(ajv as unknown as FormatRegistry);
        (ajv as unknown as FormatRegistry).addFormat('iso4217', { type: 'string', validate: isKnownCurrency });
      },
    },
    // Errors raised before routing (e.g. a malformed percent-encoding in the URL) get the API's error body too.
    frameworkErrors: (error, request, reply) => {
      const { status, body } = toErrorResponse(error);
      request.log.debug({ errorCode: body.errorCode }, 'request refused before routing');
      void (reply as FastifyReply).code(status).type('application/json; charset=utf-8').send(body);
    },
  });

  // Only JSON bodies are accepted; text/plain would otherwise reach the handlers as a string.
  app.removeContentTypeParser('text/plain');
  // HTML form posts (the hosted payment window); routes without `acceptsForm` refuse them in preValidation.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`));
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('idempotencyRef', null);
  app.decorateRequest('idempotencyEffect', null);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Shutting down: a request still in flight is answered with `Connection: close`, so that its
  // keep-alive connection does not hold close() open once it is done ('idle' closes only the
  // connections idle when closing starts).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // Also when answering before the body has arrived (a 401 on a slow upload): the rest is not waited for.
    if (closing || !request.raw.complete) reply.header('connection', 'close');
    return payload;
  });
  // Bodies nested beyond any shape this API accepts are refused before anything walks them recursively.
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [
      ['path', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const) {
      const problem = inspectInput(value, MAX_BODY_DEPTH);
      if (problem) throw inputError(part, problem);
    }
  });
  // Query strings are coerced by the schema ("1e309" → Infinity), so they are looked at again afterwards.
  app.addHook('preHandler', async (request) => {
    const problem = inspectInput(request.query, MAX_BODY_DEPTH);
    if (problem) throw inputError('query', problem);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    options.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level]({ method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Payments Service Interface',
        version: '1.0.0',
        description:
          'Payment processing over HTTPS: MIT, MOTO, CIT sessions, terminals, lifecycle operations, payouts, subscriptions, billing, webhooks, settlements.',
      },
      servers: [{ url: options.publicUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await options.ready();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(options.metrics.contentType);
    return options.metrics.render();
  });

  for (const def of options.routes) registerRoute(app, def, options);
  return app;
}

export const MAX_BODY_DEPTH = 32;

export type InputProblem = { kind: 'depth' } | { kind: 'nul' | 'nonFinite'; path: string };

/**
 * Looks through a parsed request part for what no schema catches and the stores cannot take:
 * nesting deeper than `limit` (a recursive walk would overflow the stack), NUL characters
 * (PostgreSQL text refuses them) and non-finite numbers (JSON 1e309 parses to Infinity).
 * Iterative on purpose.
 */
export function inspectInput(value: unknown, limit: number): InputProblem | null {
  const stack: Array<[unknown, number, string]> = [[value, 1, '']];
  while (stack.length) {
    const [node, depth, at] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return { kind: 'nul', path: at };
      continue;
    }
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) return { kind: 'nonFinite', path: at };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return { kind: 'depth' };
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      const path = at ? `${at}.${key}` : key;
      if (key.includes('\u0000')) return { kind: 'nul', path };
      stack.push([child, depth + 1, path]);
    }
  }
  return null;
}

function inputError(part: 'path' | 'query' | 'body', problem: InputProblem): AppError {
  if (problem.kind === 'depth') return new AppError('BAD_REQUEST', `The ${part} is nested more than ${MAX_BODY_DEPTH} levels deep.`);
  if (problem.kind === 'nul') return new AppError('BAD_REQUEST', `The ${part} contains a NUL character${problem.path ? ` in ${problem.path}` : ''}.`);
  const field = problem.path || part;
  return new AppError('VALIDATION_ERROR', `The request is invalid: ${field}.`, { [field]: ['[int]: must be a finite number'] });
}

/**
 * ajv-formats accepts date-times that Date cannot represent (a leap second, 23:59:60); handlers
 * turn them into Date, so such a value must be a 422 here rather than a RangeError later.
 */
interface FormatRegistry {
  formats: Record<string, unknown>;
  addFormat(name: string, format: { type: 'string'; validate: (value: string) => boolean }): unknown;
}

function strictDateTime(ajv: FormatRegistry): void {
  const original = ajv.formats['date-time'];
  const check = typeof original === 'object' && original !== null && 'validate' in original ? original.validate : original;
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      const syntax = typeof check === 'function' ? (check as (v: string) => boolean)(value) : check instanceof RegExp ? check.test(value) : true;
      return syntax && !Number.isNaN(Date.parse(value));
    },
  });
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

function registerRoute(app: FastifyInstance, def: RouteDef, options: AppOptions): void {
  const url = def.root ? def.url : `${API_PREFIX}${def.url}`;
  const schema: Record<string, unknown> = {
    summary: def.summary,
    tags: def.tags,
    ...def.schema,
    ...(def.hidden ? { hide: true } : {}),
    ...(def.auth === 'public' ? { security: [] } : {}),
  };

  const numericQuery = numericFields(def.schema.querystring);
  const numericParams = numericFields(def.schema.params);

  app.route({
    method: def.method,
    url,
    schema,
    config: { def },
    onRequest: async (request) => {
      if (def.auth === 'public') return;
      const secret = bearer(request);
      const principal = secret ? await options.authenticate(secret) : null;
      if (!principal) throw new AppError('UNAUTHORIZED');
      request.principal = principal;
      const wanted = def.auth === 'merchant' ? 'merchant' : 'operator';
      if (principal.tier !== wanted) {
        throw new AppError('FORBIDDEN', wanted === 'merchant' ? 'This endpoint needs a merchant credential.' : 'This endpoint needs the operator key.');
      }
      if (def.capability && principal.tier === 'merchant' && !principal.capabilities[def.capability]) {
        throw new AppError(
          'CAPABILITY_NOT_ENABLED',
          `The ${def.capability === 'moto' ? 'MOTO' : 'synchronous payout'} capability is not enabled for this account.`,
        );
      }
    },
    preValidation: async (request, reply) => {
      // Before schema validation, so that every response of a limited category (a 422 too) counts and carries the headers.
      if (def.rateLimit && options.rateLimiter && request.principal?.tier === 'merchant') {
        const params = request.params as Record<string, string>;
        const key = def.rateLimit === 'operation' ? `${request.principal.accountId}:${params.transactionId ?? ''}` : request.principal.accountId;
        const decision = options.rateLimiter.take(def.rateLimit, key);
        reply.header('x-ratelimit-limit', decision.limit);
        reply.header('x-ratelimit-remaining', decision.remaining);
        reply.header('x-ratelimit-reset', decision.resetAt);
        if (!decision.allowed) {
          reply.header('retry-after', decision.retryAfter);
          throw new AppError('RATE_LIMIT_REACHED', `Rate limit reached; retry in ${decision.retryAfter} s.`);
        }
      }
      requireDecimalDigits(request.query, numericQuery);
      requireDecimalDigits(request.params, numericParams);
      const type = request.headers['content-type'];
      if (!def.acceptsForm && typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
        throw new AppError('BAD_REQUEST', 'The body must be JSON sent with Content-Type: application/json.');
      }
    },
    preHandler: async (request, reply) => {
      if (def.idempotent && request.principal) {
        const key = request.headers['idempotency-key'];
        if (typeof key === 'string' && (await claimIdempotency(request, reply, key, options, def.secretResponse === true))) return reply;
      }
    },
    onSend: async (request, reply, payload) => {
      const ref = request.idempotencyRef;
      if (!ref) return payload;
      request.idempotencyRef = null;
      const status = reply.statusCode;
      const text = typeof payload === 'string' ? payload : payload == null ? '' : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
      let errorCode: string | undefined;
      if (status >= 400 && text) {
        try {
          errorCode = (JSON.parse(text) as { errorCode?: string }).errorCode;
        } catch {
          errorCode = undefined;
        }
      }
      try {
        if (text === null || isPreExecutionRefusal(status, errorCode)) await options.idempotency.release(ref);
        else if (isInterruptedByOutage(status, errorCode)) await reopenInterrupted(options.idempotency, ref, new Date(options.now()).toISOString());
        else {
          const stored = def.secretResponse ? options.sealer.seal(text) : text;
          await options.idempotency.complete(ref, status, stored, String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'));
        }
      } catch (err) {
        // The database failed after the handler: the answer still goes out as it is (what it reports
        // is committed). The claim stays in flight until IN_FLIGHT_LOCK_MS runs out; then a retry with
        // the same request resumes this execution and finds what it committed.
        request.log.warn({ err, status }, 'could not record the Idempotency-Key outcome; the key stays locked until its in-flight lock runs out');
      }
      return payload;
    },
    handler: async (request, reply) => {
      const principal = request.principal;
      const result = await def.handler({
        body: request.body as never,
        query: request.query as never,
        params: request.params as never,
        principal,
        get accountId(): string {
          if (principal?.tier !== 'merchant') throw new AppError('FORBIDDEN');
          return principal.accountId;
        },
        headers: request.headers,
        clientIp: request.ip,
        effect: request.idempotencyEffect,
        baseUrl: options.publicUrl,
        path: request.url.split('?')[0]!,
        rawQuery: new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : ''),
      });
      if (result === EMPTY_BODY) return reply.code(200).send();
      if (isHtml(result)) {
        if (result.headers) reply.headers(result.headers);
        return reply
          .code(result.status ?? 200)
          .type(result.contentType ?? 'text/html; charset=utf-8')
          .send(result.html);
      }
      if (!def.schema.response?.[200]) return reply.code(200).send(result);
      const text = serializeRecords(
        result,
        (payload) => reply.serializeInput(payload as Record<string, unknown>, '200') as string,
        (dropped) =>
          request.log.error({ recordIds: dropped.map((d) => d.id), err: dropped[0]!.error }, 'records left out of a list: they cannot be serialized'),
      );
      return reply.code(200).type('application/json; charset=utf-8').send(text);
    },
  });
}

function isHtml(value: unknown): value is HtmlResult {
  return typeof value === 'object' && value !== null && 'html' in value && typeof (value as HtmlResult).html === 'string';
}

/**
 * The idempotency scope's path: the matched route with its decoded parameters put back in one
 * spelling, so that `/mot%6F` and `/moto`, or a percent-encoded transaction id, are one request.
 */
export function canonicalPath(request: FastifyRequest): string {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const route = request.routeOptions.url ?? request.url.split('?')[0]!;
  return route.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(String(params[name] ?? '')));
}

/** Claims the key; returns true when the stored response was replayed instead. */
async function claimIdempotency(request: FastifyRequest, reply: FastifyReply, key: string, options: AppOptions, sealed: boolean): Promise<boolean> {
  validateKey(key);
  const principal = request.principal;
  if (!principal) return false;
  // Keys are scoped per merchant; the operator (partner API) has a scope of its own.
  const scope = principal.tier === 'merchant' ? principal.accountId : 'operator';
  const ref: IdempotencyRef = { accountId: scope, method: request.method, path: canonicalPath(request), key };
  const hash = requestHash(request.body);
  const now = options.now();
  const outcome = await options.idempotency.claim(ref, hash, {
    now: new Date(now).toISOString(),
    lockedUntil: new Date(now + IN_FLIGHT_LOCK_MS).toISOString(),
    expiresAt: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
  });
  if (outcome.claimed) {
    request.idempotencyRef = ref;
    request.idempotencyEffect = { key: outcome.effectKey, resumed: outcome.resumed };
    return false;
  }
  const existing = outcome.existing;
  if (existing.requestHash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
  if (existing.state === 'in_flight' || existing.status === null) throw new AppError('IDEMPOTENCY_KEY_IN_USE');
  reply.header('idempotent-replayed', 'true');
  reply.code(existing.status).type(existing.contentType ?? 'application/json; charset=utf-8');
  // The stored text is sent as is (a string payload is not serialized again).
  await reply.send(existing.body && sealed ? options.sealer.open(existing.body) : (existing.body ?? ''));
  return true;
}
