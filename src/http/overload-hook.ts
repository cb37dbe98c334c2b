/**
 * The backlog bound at the door (shared/overload.ts): a route that accepts asynchronous work
 * (RouteDef.refusedWhenOverloaded) is refused with 503 and Retry-After before its idempotency key
 * is claimed. Under overload most requests end here, so a refusal must cost next to nothing: no
 * claim written and then reopened, no body handed to the use case. The use case keeps its own
 * check (the same cached figure) for callers that do not come through HTTP.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDef } from '../shared/route.js';
import { type OverloadSignal, refuseWhenOverloaded } from '../shared/overload.js';

/** The first preHandler hook of a route that accepts asynchronous work; none when there is no bound. */
export function overloadHook(def: RouteDef, signal: OverloadSignal | undefined) {
  if (!def.refusedWhenOverloaded || !signal) return null;
  return async function refuseOverload(_request: FastifyRequest, _reply: FastifyReply): Promise<FastifyReply | undefined> {
    await refuseWhenOverloaded(signal);
    return undefined;
  };
}
