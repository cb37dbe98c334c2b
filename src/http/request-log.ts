/**
 * The one log line per request (written in app.ts's onResponse): method, route, status and time;
 * a 404 adds the path asked for (its route is `unmatched` or says nothing of the id), and any
 * 4xx the errorCode it was answered with. Never the query string, headers or body.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

const errorCodes = new WeakMap<FastifyRequest, string>();

/** The errorCode a request is being answered with (the error handler, the not-found handler). */
export function noteErrorCode(request: FastifyRequest, errorCode: string): void {
  errorCodes.set(request, errorCode);
}

export interface RequestLine {
  method: string;
  route: string;
  status: number;
  ms: number;
  path?: string;
  errorCode?: string;
}

export function requestLine(request: FastifyRequest, reply: FastifyReply, route: string): RequestLine {
  const line: RequestLine = { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) };
  if (reply.statusCode === 404) line.path = request.url.split('?')[0]!;
  const errorCode = errorCodes.get(request);
  if (errorCode !== undefined && reply.statusCode >= 400 && reply.statusCode < 500) line.errorCode = errorCode;
  return line;
}
