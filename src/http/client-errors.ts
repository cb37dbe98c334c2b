/**
 * Errors Node raises on a connection before any route sees the request (a request that did not
 * arrive within its timeout, headers too large, malformed HTTP): answered with the API's error
 * body instead of Fastify's default one, then the socket is closed.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors.js';
import { errorBody } from './error-handler.js';

function codeFor(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  return 'BAD_REQUEST';
}

export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code = codeFor(err);
  const { status } = ERROR_CATALOGUE[code];
  const body = JSON.stringify(errorBody(code));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
