/**
 * Authentication (INTERFACE §2), the first hook of every non-public route (onRequest): the bearer
 * secret becomes the request's principal, and the route's tier is checked before anything else of
 * the request is looked at. 401 without a known credential, 403 for the wrong tier.
 */
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../modules/accounts/account.js';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export type Authenticate = (secret: string) => Promise<Principal | null>;

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** The onRequest hook of a route; none for a public route. Sandbox routes take the operator key. */
export function authenticationHook(def: RouteDef, authenticate: Authenticate) {
  if (def.auth === 'public') return null;
  const wanted = def.auth === 'merchant' ? 'merchant' : 'operator';
  return async function authenticateBearer(request: FastifyRequest): Promise<void> {
    const secret = bearer(request);
    const principal = secret ? await authenticate(secret) : null;
    if (!principal) throw new AppError('UNAUTHORIZED');
    request.principal = principal;
    if (principal.tier !== wanted) {
      throw new AppError('FORBIDDEN', wanted === 'merchant' ? 'This endpoint needs a merchant credential.' : 'This endpoint needs the operator key.');
    }
  };
}
