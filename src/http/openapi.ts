/**
 * The options of @fastify/swagger: the document's introduction, its shared components and one
 * transform that completes every route's entry from its route object — the security scheme of
 * its tier, its error responses (openapi-errors.ts), the Idempotency-Key header where honoured,
 * and parameters with a default listed as optional. The transform writes the document only; the
 * schemas that validate requests and serialize responses are left as the routes declare them.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { RouteDef } from '../shared/route.js';
import { errorComponents, standardErrorResponses } from './openapi-errors.js';
import { openApiIntroduction } from './openapi-intro.js';

export const SECURITY_SCHEMES = {
  merchant: {
    type: 'http',
    scheme: 'bearer',
    description: 'A merchant API key (`sk_…`) or an 8-hour access token of the merchant account.',
  },
  operator: {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator key (`op_…`): the partner tier and the sandbox controls.',
  },
} as const;

/** The security requirement of a tier: public routes need none. */
export function securityOf(tier: RouteDef['auth']): Array<Record<string, string[]>> {
  if (tier === 'public') return [];
  return [{ [tier === 'merchant' ? 'merchant' : 'operator']: [] }];
}

const IDEMPOTENCY_HEADER = {
  type: 'object',
  properties: {
    'Idempotency-Key': {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'Makes a retry safe: the first response is replayed for 24 h (see the introduction).',
      examples: ['order-20251124-0042'],
    },
  },
};

/**
 * A copy of an input schema in which properties that have a `default` are not required: the
 * validator fills them in, so a client may leave them out.
 */
export function withDefaultsOptional(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withDefaultsOptional);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = withDefaultsOptional(value);
  const properties = copy.properties as Record<string, { default?: unknown }> | undefined;
  if (properties && Array.isArray(copy.required)) {
    const required = (copy.required as string[]).filter((name) => !(properties[name] && 'default' in properties[name]));
    if (required.length) copy.required = required;
    else delete copy.required;
  }
  return copy;
}

type DocSchema = Record<string, unknown> & { hide?: boolean; response?: Record<string, unknown> };

/** One route's document entry, completed from its route object. */
export function documentRoute(schema: DocSchema, def: RouteDef): DocSchema {
  const declared = Object.entries(schema.response ?? {}).filter(([status]) => Number(status) < 400);
  // A route without a response schema answers 200 with an empty body (EMPTY_BODY).
  const successes = declared.length ? Object.fromEntries(declared) : { 200: { type: 'null', description: 'Done; the body is empty.' } };
  const errors = standardErrorResponses(def);
  return {
    ...schema,
    description: [schema.description, errorTable(errors)].filter(Boolean).join('\n\n'),
    ...(schema.querystring ? { querystring: withDefaultsOptional(schema.querystring) } : {}),
    ...(schema.body ? { body: withDefaultsOptional(schema.body) } : {}),
    ...(def.idempotent ? { headers: IDEMPOTENCY_HEADER } : {}),
    security: securityOf(def.auth),
    response: { ...successes, ...errors },
  };
}

/** The operation's error answers as a Markdown table under its description, from the same entries as its responses. */
export function errorTable(errors: ReturnType<typeof standardErrorResponses>): string {
  const rows = Object.entries(errors).flatMap(([status, entry]) =>
    Object.values(entry.content['application/json'].examples).map(({ summary, value }) => `| ${status} | \`${String(value.errorCode)}\` | ${summary} |`),
  );
  return rows.length ? ['**Errors**', '', '| Status | Code | When |', '|---|---|---|', ...rows].join('\n') : '';
}

/** The interface version the document describes (not the package version). */
const INTERFACE_VERSION = '1.0.0';

export function openApiOptions(publicUrl: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Payments Service Interface', version: INTERFACE_VERSION, description: openApiIntroduction() },
      servers: [{ url: publicUrl }],
      components: { securitySchemes: SECURITY_SCHEMES, schemas: errorComponents() as never },
    },
    transform: ({ schema, url, route }) => {
      const def = (route.config as { def?: RouteDef } | undefined)?.def;
      if (!def || !schema || (schema as DocSchema).hide) return { schema, url };
      return { schema: documentRoute(schema as DocSchema, def), url };
    },
  };
}
