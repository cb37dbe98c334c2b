/**
 * What the schemas cannot say about a request's input, refused before the handler sees it:
 * - for every request (app hooks): nesting deeper than any shape the API accepts, NUL characters
 *   and non-finite numbers, in the path, query and body;
 * - per route (after the rate limiter, in preValidation): numbers in the query or path written
 *   other than in decimal digits (exact-numbers.ts), and form posts to routes that take JSON only.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';
import { numericFields, requireDecimalDigits } from './exact-numbers.js';

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

/** App preValidation hook: bodies nested beyond any accepted shape are refused before anything walks them recursively. */
export async function refuseUnsafeInput(request: FastifyRequest): Promise<void> {
  for (const [part, value] of [
    ['path', request.params],
    ['query', request.query],
    ['body', request.body],
  ] as const) {
    const problem = inspectInput(value, MAX_BODY_DEPTH);
    if (problem) throw inputError(part, problem);
  }
}

/** App preHandler hook: query strings are coerced by the schema ("1e309" → Infinity), so they are looked at again afterwards. */
export async function recheckCoercedQuery(request: FastifyRequest): Promise<void> {
  const problem = inspectInput(request.query, MAX_BODY_DEPTH);
  if (problem) throw inputError('query', problem);
}

/** The route's preValidation input checks (its numeric query and path fields are read once, here). */
export function inputChecksHook(def: RouteDef) {
  const numericQuery = numericFields(def.schema.querystring);
  const numericParams = numericFields(def.schema.params);
  return async function checkRouteInput(request: FastifyRequest): Promise<void> {
    requireDecimalDigits(request.query, numericQuery);
    requireDecimalDigits(request.params, numericParams);
    const type = request.headers['content-type'];
    if (!def.acceptsForm && typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      throw new AppError('BAD_REQUEST', 'The body must be JSON sent with Content-Type: application/json.');
    }
  };
}
