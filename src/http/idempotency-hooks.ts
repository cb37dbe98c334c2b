/**
 * Idempotency-Key on a route that opts in (INTERFACE §4; the rules and the store port are in
 * idempotency.ts): the key is claimed in preHandler, after authentication and validation, or its
 * stored response is replayed; in onSend the response is stored, or the claim released (a refusal
 * before execution) or reopened (the database failed under the request).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../modules/accounts/account.js';
import type { Sealer } from '../security/secret-box.js';
import type { Effect } from '../shared/effect.js';
import { AppError } from '../shared/errors.js';
import type { RouteDef } from '../shared/route.js';
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

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyRef: IdempotencyRef | null;
    /** The claim's effect, handed to the use case (RequestContext.effect). */
    idempotencyEffect: Effect | null;
  }
}

export interface IdempotencyDeps {
  idempotency: IdempotencyStore;
  /** Encrypts the stored responses of routes that answer with a credential (RouteDef.secretResponse). */
  sealer: Sealer;
  now(): number;
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

/** The preHandler hook of an idempotent route: claims the key, or replays the stored response. */
export function idempotencyClaimHook(def: RouteDef, deps: IdempotencyDeps) {
  if (!def.idempotent) return null;
  const sealed = def.secretResponse === true;
  return async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const principal = request.principal;
    const key = request.headers['idempotency-key'];
    if (principal && typeof key === 'string' && (await claim(request, reply, principal, key, deps, sealed))) return reply;
  };
}

/** Claims the key; returns true when the stored response was replayed instead. */
async function claim(
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
  key: string,
  deps: IdempotencyDeps,
  sealed: boolean,
): Promise<boolean> {
  validateKey(key);
  // Keys are scoped per merchant; the operator (partner API) has a scope of its own.
  const scope = principal.tier === 'merchant' ? principal.accountId : 'operator';
  const ref: IdempotencyRef = { accountId: scope, method: request.method, path: canonicalPath(request), key };
  const hash = requestHash(request.body);
  const now = deps.now();
  const outcome = await deps.idempotency.claim(ref, hash, {
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
  await reply.send(existing.body && sealed ? deps.sealer.open(existing.body) : (existing.body ?? ''));
  return true;
}

/** The onSend hook of an idempotent route: records the outcome of the claim this request holds. */
export function idempotencyRecordHook(def: RouteDef, deps: IdempotencyDeps) {
  if (!def.idempotent) return null;
  const sealed = def.secretResponse === true;
  return async function recordIdempotentOutcome(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
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
      if (text === null || isPreExecutionRefusal(status, errorCode)) await deps.idempotency.release(ref);
      else if (isInterruptedByOutage(status, errorCode)) await reopenInterrupted(deps.idempotency, ref, new Date(deps.now()).toISOString());
      else {
        const stored = sealed ? deps.sealer.seal(text) : text;
        await deps.idempotency.complete(ref, status, stored, String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'));
      }
    } catch (err) {
      // The database failed after the handler: the answer still goes out as it is (what it reports
      // is committed). The claim stays in flight until IN_FLIGHT_LOCK_MS runs out; then a retry with
      // the same request resumes this execution and finds what it committed.
      request.log.warn({ err, status }, 'could not record the Idempotency-Key outcome; the key stays locked until its in-flight lock runs out');
    }
    return payload;
  };
}
