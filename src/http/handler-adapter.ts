/**
 * The one place a route object's handler meets Fastify: it gets a framework-free RequestContext,
 * and its result becomes the response — an empty 200, an HTML (or script) page, or JSON through
 * the route's response schema, where one record that cannot be serialized fails only itself
 * (record-serializer.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import { EMPTY_BODY, type HtmlResult, type RouteDef } from '../shared/route.js';
import { serializeRecords } from './record-serializer.js';

function isHtml(value: unknown): value is HtmlResult {
  if (typeof value !== 'object' || value === null || !('html' in value)) return false;
  const { html } = value as HtmlResult;
  return typeof html === 'string' || Buffer.isBuffer(html);
}

/** The Fastify handler of a route object; `publicUrl` is the service's public base URL (RequestContext.baseUrl). */
export function routeHandler(def: RouteDef, publicUrl: string) {
  const serialized = Boolean(def.schema.response?.[200]);
  return async function handleRoute(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const principal = request.principal;
    const result = await def.handler({
      body: request.body as never,
      query: request.query as never,
      params: request.params as never,
      principal,
      get accountId(): string {
        if (principal?.tier !== 'merchant') throw new AppError('FORBIDDEN');
        return principal.accountId;
      },
      headers: request.headers,
      clientIp: request.ip,
      effect: request.idempotencyEffect,
      baseUrl: publicUrl,
      path: request.url.split('?')[0]!,
      rawQuery: new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : ''),
    });
    if (result === EMPTY_BODY) return reply.code(200).send();
    if (isHtml(result)) {
      if (result.headers) reply.headers(result.headers);
      return reply
        .code(result.status ?? 200)
        .type(result.contentType ?? 'text/html; charset=utf-8')
        .send(result.html);
    }
    if (!serialized) return reply.code(200).send(result);
    const text = serializeRecords(
      result,
      (payload) => reply.serializeInput(payload as Record<string, unknown>, '200') as string,
      (dropped) => request.log.error({ recordIds: dropped.map((d) => d.id), err: dropped[0]!.error }, 'records left out of a list: they cannot be serialized'),
    );
    return reply.code(200).type('application/json; charset=utf-8').send(text);
  };
}
