/**
 * Applies the token buckets of rate-limit.ts to a route of a limited category (INTERFACE §5), per
 * merchant (and per transaction for operations), through whichever limiter the deployment uses
 * (one awaited take). First in preValidation: before schema validation, so that every response of
 * a limited category (a 422 too) counts and carries the headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';
import type { RateLimiter } from './rate-limit.js';

/** The preValidation hook of a rate-limited route; none when the route or the service has no limits. */
export function rateLimitHook(def: RouteDef, limiter: RateLimiter | null) {
  const category = def.rateLimit;
  if (!category || !limiter) return null;
  return async function takeRateLimitToken(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = request.principal;
    if (principal?.tier !== 'merchant') return;
    const params = request.params as Record<string, string>;
    const key = category === 'operation' ? `${principal.accountId}:${params.transactionId ?? ''}` : principal.accountId;
    const decision = await limiter.take(category, key);
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-reset', decision.resetAt);
    if (!decision.allowed) {
      reply.header('retry-after', decision.retryAfter);
      throw new AppError('RATE_LIMIT_REACHED', `Rate limit reached; retry in ${decision.retryAfter} s.`);
    }
  };
}
