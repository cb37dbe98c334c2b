/**
 * The callbacks' HTTP sender: an attempt gets the receiver's status, and it ends at its deadline
 * however the receiver stalls — here headers at once, then a byte now and then, which neither the
 * headers' nor the body's idle timeout ever stops.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type SendResult, UndiciSender } from '../../src/delivery/http-sender.js';

describe('callback HTTP sender', () => {
  let server: http.Server;
  let base: string;
  const drips = new Set<NodeJS.Timeout>();
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/ok') {
        res.writeHead(204).end();
        return;
      }
      if (req.url === '/large') {
        res.writeHead(201, { 'content-type': 'text/plain' }).end('x'.repeat(400 * 1024));
        return;
      }
      if (req.url === '/silent') return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      drips.add(drip);
      res.on('close', () => {
        clearInterval(drip);
        drips.delete(drip);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const drip of drips) clearInterval(drip);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** One POST of `{}` to `url` by a sender of its own (closed after), and what it answered. */
  async function postOnce(url: string, options: { timeoutMs?: number; allowPrivate?: boolean } = {}): Promise<SendResult> {
    const sender = new UndiciSender({ allowPrivate: options.allowPrivate ?? true, now: Date.now, timeoutMs: options.timeoutMs ?? 2_000 });
    try {
      return await sender.post(url, { 'content-type': 'application/json' }, '{}');
    } finally {
      await sender.close();
    }
  }

  test('an answered attempt: its status, no error', async () => {
    const result = await postOnce(`${base}/ok`);
    assert.deepEqual({ status: result.status, error: result.error }, { status: 204, error: null });
  });

  test('a receiver that answers and keeps its body trickling holds the attempt no longer than its deadline', async () => {
    const result = await postOnce(`${base}/drip`, { timeoutMs: 400 });
    // The status came before the deadline: the receiver answered, the rest of its body is dropped.
    assert.equal(result.status, 200);
    assert.ok(result.durationMs >= 390 && result.durationMs < 2_000, `ended after ${result.durationMs} ms`);
  });

  test('an answer with a large body: its status, the body dropped', async () => {
    const result = await postOnce(`${base}/large`);
    assert.deepEqual({ status: result.status, error: result.error }, { status: 201, error: null });
  });

  test('a receiver that never answers: the attempt ends at its deadline, with no status', async () => {
    const result = await postOnce(`${base}/silent`, { timeoutMs: 300 });
    assert.equal(result.status, null);
    assert.match(result.error ?? '', /^ETIMEDOUT: no answer within the timeout of 300 ms/);
    assert.ok(result.durationMs >= 290 && result.durationMs < 2_000, `ended after ${result.durationMs} ms`);
  });

  test('a refused connection: its error code, no status', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await postOnce(`http://127.0.0.1:${port}/cb`);
    assert.equal(result.status, null);
    assert.match(result.error ?? '', /^ECONNREFUSED: /);
  });

  test('an internal address is refused before any connection when private URLs are not allowed', async () => {
    const result = await postOnce(`${base}/ok`, { allowPrivate: false });
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: 'refused: internal address' });
  });
});
