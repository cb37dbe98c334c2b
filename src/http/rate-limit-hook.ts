/**
 * Applies the token buckets of rate-limit.ts to a route of a limited category (INTERFACE §5), per
 * merchant (and per transaction for operations), through whichever limiter the deployment uses
 * (one awaited take). First in preValidation: before schema validation, so that every response of
 * a limited category (a 422 too) counts and carries the headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import type { RateLimitCategory, RouteDef } from '../shared/route.js';
import { describeRate, type FurtherLimit, type RateLimiter } from './rate-limit.js';

/** The preValidation hook of a rate-limited route; none when the route or the service has no limits. */
export function rateLimitHook(def: RouteDef, limiter: RateLimiter | null, furtherLimit?: FurtherLimit) {
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
      // A wait the bucket alone names may end in a limit that is used up for longer: the longer one answers.
      const further = await furtherLimit?.(category, principal.accountId, request.body);
      if (further?.retryAfterS !== undefined && further.retryAfterS > decision.retryAfter) throw further;
      reply.header('retry-after', decision.retryAfter);
      throw new AppError(
        'RATE_LIMIT_REACHED',
        `Rate limit reached for ${LIMITED[category]}: ${describeRate({ ratePerSecond: decision.ratePerSecond, burst: decision.limit })}, in bursts of up to ${decision.limit}; retry in ${decision.retryAfter} s.`,
      );
    }
  };
}

/** Who shares the bucket, for the refusal's message. */
const LIMITED: Record<RateLimitCategory, string> = {
  mit: 'POST /mit',
  mitBatch: 'POST /mit/batch (requests, not entries)',
  list: 'list endpoints',
  operation: 'capture, void, refund and renew of this transaction',
};
