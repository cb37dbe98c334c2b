/**
 * Builds the Fastify instance (limits, timeouts, Ajv, the one error handler, health, metrics and
 * the OpenAPI document) and registers every route object by composing its hooks, one file per
 * concern: auth.ts, capability.ts, rate-limit-hook.ts, input-checks.ts, idempotency-hooks.ts and
 * handler-adapter.ts.
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyServerOptions, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { registerDashboard } from '../dashboard/dashboard.js';
import type { DashboardSessionsRepository } from '../dashboard/sessions.repository.js';
import type { Sealer } from '../security/secret-box.js';
import { isKnownCurrency } from '../shared/currencies.js';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';
import { type Authenticate, authenticationHook } from './auth.js';
import { capabilityHook } from './capability.js';
import { clientErrorHandler } from './client-errors.js';
import { errorBody, handleError, toErrorResponse } from './error-handler.js';
import { bodyWithoutCoercion } from './exact-numbers.js';
import { routeHandler } from './handler-adapter.js';
import type { IdempotencyStore } from './idempotency.js';
import { idempotencyClaimHook, idempotencyRecordHook } from './idempotency-hooks.js';
import { inputChecksHook, recheckCoercedQuery, refuseUnsafeInput } from './input-checks.js';
import type { Metrics } from './metrics.js';
import { closedSchema } from '../shared/closed-schemas.js';
import { openApiOptions } from './openapi.js';
import type { FurtherLimit, RateLimiter } from './rate-limit.js';
import { rateLimitHook } from './rate-limit-hook.js';
import { noteErrorCode, requestLine } from './request-log.js';
import { registerRootPage } from './root-page.js';
import { overloadHook } from './overload-hook.js';
import type { OverloadSignal } from '../shared/overload.js';

export const API_PREFIX = '/public/api/v1';

/**
 * Compiled validators and serializers shared by every app built in this process (tests and
 * benchmarks build many): route schemas are module constants, so compiling them once is enough.
 * The validator pool keeps one Ajv per option set, and Ajv caches by schema object (closed body
 * schemas included: closedSchema makes one copy per schema); serializers are cached here by
 * schema object.
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
  authenticate: Authenticate;
  idempotency: IdempotencyStore;
  /** Encrypts the stored responses of routes that answer with a credential (RouteDef.secretResponse). */
  sealer: Sealer;
  /** Where the dashboard keeps its sessions (src/dashboard/session.ts). */
  dashboardSessions: DashboardSessionsRepository;
  /** PAYMENTS_SANDBOX, and the merchant's account name: what the dashboard's header shows. */
  sandbox?: boolean;
  accountName?(accountId: string): Promise<string | null>;
  rateLimiter: RateLimiter | null;
  /** Limits beyond the buckets a refused request must also pass (rate-limit.ts). */
  furtherLimit?: FurtherLimit;
  /** The backlog bound, checked before the idempotency claim of routes that accept asynchronous work. */
  overload?: OverloadSignal;
  now(): number;
  publicUrl: string;
  ready(): Promise<void>;
  metrics: Metrics;
  version: string;
  /** REQUEST_TIMEOUT_MS unless given (tests). */
  requestTimeoutMs?: number;
}

declare module 'fastify' {
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
    // While closing, a request is answered by the onRequest hook below (the API's 503 body).
    return503OnClosing: false,
    clientErrorHandler,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false, verbose: true },
      onCreate: (ajv) => {
        strictDateTime(ajv as unknown as FormatRegistry);
        (ajv as unknown as FormatRegistry).addFormat('iso4217', { type: 'string', validate: isKnownCurrency });
      },
    },
    // Errors raised before routing (e.g. a malformed percent-encoding in the URL) get the API's error body too.
    frameworkErrors: (error, request, reply) => {
      const { status, body } = toErrorResponse(error);
      noteErrorCode(request, body.errorCode);
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
    noteErrorCode(request, 'NOT_FOUND');
    reply.code(404).send(errorBody('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`));
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('idempotencyRef', null);
  app.decorateRequest('idempotencyEffect', null);

  // Shutting down: a request still in flight is answered with `Connection: close`, so that its
  // keep-alive connection does not hold close() open once it is done ('idle' closes only the
  // connections idle when closing starts); a new one is refused with 503 and Retry-After.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('retry-after', '1');
      throw new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry in a moment.');
    }
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // Also when answering before the body has arrived (a 401 on a slow upload): the rest is not waited for.
    if (closing || !request.raw.complete) reply.header('connection', 'close');
    return payload;
  });
  // Depth, NUL characters and non-finite numbers in any request (input-checks.ts); the query again once coerced.
  app.addHook('preValidation', refuseUnsafeInput);
  app.addHook('preHandler', recheckCoercedQuery);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    options.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level](requestLine(request, reply, route), 'request');
  });

  await app.register(swagger, openApiOptions(options.publicUrl));
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerRootPage(app, options.publicUrl, API_PREFIX);
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

  // The merchant and operator dashboard at /dashboard (src/dashboard/README.md); before the routes, whose credential its session supplies.
  await registerDashboard(app, {
    authenticate: options.authenticate,
    now: options.now,
    publicUrl: options.publicUrl,
    sessions: options.dashboardSessions,
    sealer: options.sealer,
    sandbox: options.sandbox ?? false,
    ...(options.accountName ? { accountName: options.accountName } : {}),
  });
  for (const def of options.routes) registerRoute(app, def, options);
  return app;
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

/**
 * One route object → one Fastify route, its concerns as named hooks in lifecycle order:
 * authentication then capability (onRequest) → rate limit then input checks (preValidation) →
 * schema validation → idempotency claim (preHandler) → handler → idempotency record (onSend).
 * A hook that has nothing to do for the route (a public route, no rate limit) is not registered.
 */
function registerRoute(app: FastifyInstance, def: RouteDef, options: AppOptions): void {
  const url = def.root ? def.url : `${API_PREFIX}${def.url}`;
  const schema: Record<string, unknown> = {
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    ...def.schema,
    // JSON bodies refuse fields they do not define; an HTML form's extra fields (a submit button's name) are the browser's.
    ...(def.schema.body && !def.acceptsForm ? { body: closedSchema(def.schema.body) } : {}),
    ...(def.hidden ? { hide: true } : {}),
  };
  app.route({
    method: def.method,
    url,
    schema,
    config: { def },
    onRequest: hooks(authenticationHook(def, options.authenticate), capabilityHook(def)),
    preValidation: hooks(rateLimitHook(def, options.rateLimiter, options.furtherLimit), inputChecksHook(def)),
    preHandler: hooks(overloadHook(def, options.overload), idempotencyClaimHook(def, options)),
    onSend: hooks(idempotencyRecordHook(def, options)),
    handler: routeHandler(def, options.publicUrl),
  });
}

/** The hooks a route needs, in order. */
function hooks<T>(...candidates: Array<T | null>): T[] {
  return candidates.filter((hook): hook is T => hook !== null);
}
