/**
 * Capabilities (MOTO, synchronous payouts) are switched on per merchant account: a route that needs
 * one refuses a merchant without it (403 CAPABILITY_NOT_ENABLED). Runs in onRequest right after
 * authentication, so a refused request is not counted by the rate limiter.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';

/** The onRequest hook of a route that needs a capability; none for the others. */
export function capabilityHook(def: RouteDef) {
  const capability = def.capability;
  if (!capability) return null;
  const message = `The ${capability === 'moto' ? 'MOTO' : 'synchronous payout'} capability is not enabled for this account.`;
  return async function requireCapability(request: FastifyRequest): Promise<void> {
    const principal = request.principal;
    if (principal?.tier === 'merchant' && !principal.capabilities[capability]) throw new AppError('CAPABILITY_NOT_ENABLED', message);
  };
}
