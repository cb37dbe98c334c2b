/**
 * A framework-free route object: modules describe their HTTP surface with this type and
 * src/http/app.ts turns it into a Fastify route. One object gives validation (TypeBox schemas),
 * static types for the handler, response serialization and the OpenAPI entry.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal } from '../modules/accounts/account.js';
import type { Effect } from './effect.js';
import { type ErrorCode, fieldError, type FieldErrors, type FieldRule } from './errors.js';

/** An error answer of a route, for the examples of the OpenAPI document. */
export interface ErrorExample {
  summary: string;
  errorCode: ErrorCode;
  message: string;
  errors?: FieldErrors;
}

export type AuthTier = 'public' | 'merchant' | 'operator' | 'sandbox';
export type RateLimitCategory = 'mit' | 'mitBatch' | 'list' | 'operation';
export type Capability = 'moto' | 'syncPayout';

export interface RouteSchemas {
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
  response?: Record<number, TSchema>;
}

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export interface RequestContext<S extends RouteSchemas> {
  body: StaticOr<S['body'], undefined>;
  query: StaticOr<S['querystring'], Record<string, never>>;
  params: StaticOr<S['params'], Record<string, never>>;
  principal: Principal | null;
  /** Account id of a merchant principal; throws for other tiers (routes with auth 'merchant' always have one). */
  accountId: string;
  headers: Record<string, string | string[] | undefined>;
  clientIp: string;
  /**
   * Set when the request claimed an Idempotency-Key: use cases tag the records they create with its
   * key, in the same commit, and return those records instead of creating them again when a retry
   * resumes an execution cut off by a crash.
   */
  effect: Effect | null;
  /** Public base URL of the service (PAYMENTS_PUBLIC_URL). */
  baseUrl: string;
  /** Request path without the query string. */
  path: string;
  /** Raw query string parameters, for building page URLs. */
  rawQuery: URLSearchParams;
}

/** Returned by a handler that answers 200 with an empty body. */
export const EMPTY_BODY = Symbol('empty body');

export interface HtmlResult {
  /** The page; bytes for a binary body (a multi-link's QR code PNG, with its `contentType`). */
  html: string | Buffer;
  status?: number;
  /** Default text/html; e.g. the payment window's script is served as JavaScript. */
  contentType?: string;
  /** Extra response headers (Location of a redirect, Content-Security-Policy of a page). */
  headers?: Record<string, string>;
}

export interface RouteDef<S extends RouteSchemas = RouteSchemas> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  auth: AuthTier;
  summary: string;
  /** Longer text for the OpenAPI entry (what the operation does and its rules), under the summary. */
  description?: string;
  tags: string[];
  schema: S;
  /** Honours Idempotency-Key (INTERFACE §4). */
  idempotent?: boolean;
  /** The response holds a credential: its stored copy for idempotent replay is encrypted. */
  secretResponse?: boolean;
  rateLimit?: RateLimitCategory;
  /** Accepts asynchronous work: refused with 503 at the backlog bound before anything is claimed (http/overload-hook.ts). */
  refusedWhenOverloaded?: boolean;
  capability?: Capability;
  /** Served outside /public/api/v1 (pages, sandbox, health). */
  root?: boolean;
  /**
   * This route's own refusals as examples of its error responses in the OpenAPI document (status →
   * examples), shown before the generic ones http/openapi-errors.ts writes for every route.
   */
  errorExamples?: Partial<Record<number, ErrorExample[]>>;
  /** Hide from the OpenAPI document. */
  hidden?: boolean;
  /** Also accepts an HTML form post (application/x-www-form-urlencoded); every other route takes JSON only. */
  acceptsForm?: boolean;
  handler(ctx: RequestContext<S>): Promise<unknown>;
}

/** The 422 example of a business rule on one field, worded exactly as `fieldError` answers it. */
export function fieldErrorExample(summary: string, field: string, rule: FieldRule, text: string): ErrorExample {
  const error = fieldError(field, rule, text);
  return { summary, errorCode: error.code, message: error.message, ...(error.errors ? { errors: error.errors } : {}) };
}

/** The example of a refusal with its own message (a 409 CONFLICT, a 400). */
export const errorExample = (summary: string, errorCode: ErrorCode, message: string): ErrorExample => ({ summary, errorCode, message });

export function defineRoute<S extends RouteSchemas>(def: RouteDef<S>): RouteDef {
  return def as unknown as RouteDef;
}
