/**
 * The client's fetch (clients/typescript/src/retry.ts) with a scripted fetch, no service: retries
 * of 429 and 503 after Retry-After with the same request and Idempotency-Key, bounded in count and
 * wait; a generated Idempotency-Key on mutating calls only; any error answer as the §3 body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPaymentsClient, retryAfterSeconds } from '@payments-service/client';

interface Sent {
  method: string;
  key: string | null;
  body: string;
  at: number;
}

function scripted(answers: Array<() => Response>) {
  const sent: Sent[] = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, key: request.headers.get('idempotency-key'), body: await request.text(), at: Date.now() });
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    return next();
  };
  return { sent, fetch };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const limited = (retryAfter: string) => json(429, { success: false, errorCode: 'RATE_LIMIT_REACHED', message: 'Slow down.' }, { 'retry-after': retryAfter });
const mitBody = { subscriptionId: '00000000-0000-4000-8000-000000000000', amount: 1000, currency: 'DKK', notificationUrl: 'https://shop.example/cb' };
const pending = json(200, { transaction: { id: 'ABCDEFGHJKM', state: 'PENDING' } });

describe('typed client: retries, Idempotency-Key, error bodies', () => {
  test('429 then 503 with Retry-After: waits, resends the same body with the same generated Idempotency-Key', async () => {
    const { sent, fetch } = scripted([
      limited('1'),
      json(503, { success: false, errorCode: 'SERVICE_UNAVAILABLE', message: 'Busy.' }, { 'retry-after': '0' }),
      pending,
    ]);
    const api = createPaymentsClient({ baseUrl: 'http://service.test', token: 'sk_test', fetch });
    const { data, error } = await api.POST('/public/api/v1/mit', { body: mitBody });
    assert.equal(error, undefined);
    assert.equal(data?.transaction.state, 'PENDING');
    assert.equal(sent.length, 3);
    assert.match(sent[0]!.key ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(sent.every((s) => s.key === sent[0]!.key && s.body === sent[0]!.body));
    assert.ok(sent[1]!.at - sent[0]!.at >= 950, 'waited for Retry-After: 1');
  });

  test('bounded: after maxRetries the 429 is returned as a typed error; a Retry-After beyond the bound is not waited for', async () => {
    const many = scripted([limited('0'), limited('0'), limited('0')]);
    const api = createPaymentsClient({ baseUrl: 'http://service.test', fetch: many.fetch, retry: { maxRetries: 2 } });
    const res = await api.POST('/public/api/v1/mit', { body: mitBody });
    assert.equal(many.sent.length, 3);
    assert.equal(res.response.status, 429);
    assert.equal(res.error?.errorCode, 'RATE_LIMIT_REACHED');

    const long = scripted([limited('3600')]);
    const started = Date.now();
    const res2 = await createPaymentsClient({ baseUrl: 'http://service.test', fetch: long.fetch }).POST('/public/api/v1/mit', { body: mitBody });
    assert.equal(long.sent.length, 1);
    assert.ok(Date.now() - started < 500);
    assert.equal(res2.response.headers.get('retry-after'), '3600', 'the caller sees how long to wait');
  });

  test("the caller's Idempotency-Key is kept; reads carry none; other statuses are not retried", async () => {
    const { sent, fetch } = scripted([json(500, { success: false, errorCode: 'SERVER_ERROR', message: 'Oops.' }), json(200, { transaction: {} })]);
    const api = createPaymentsClient({ baseUrl: 'http://service.test', fetch });
    const res = await api.POST('/public/api/v1/mit', { body: mitBody, headers: { 'Idempotency-Key': 'order-42' } });
    assert.equal(res.error?.errorCode, 'SERVER_ERROR');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.key, 'order-42');
    await api.GET('/public/api/v1/transactions/{transactionId}', { params: { path: { transactionId: 'ABCDEFGHJKM' } } });
    assert.equal(sent[1]!.method, 'GET');
    assert.equal(sent[1]!.key, null);
  });

  test('an answer that is not the §3 body (a proxy page) becomes one: UNEXPECTED_RESPONSE with the status', async () => {
    const { fetch } = scripted([() => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })]);
    const res = await createPaymentsClient({ baseUrl: 'http://service.test', fetch }).GET('/public/api/v1/transactions', {});
    assert.equal(res.response.status, 502);
    assert.equal(res.error?.success, false);
    assert.equal(res.error?.errorCode, 'UNEXPECTED_RESPONSE');
    assert.match(res.error?.message ?? '', /^HTTP 502: <html>Bad gateway/);
  });

  test('Retry-After: delta-seconds or an HTTP date', () => {
    assert.equal(retryAfterSeconds('5'), 5);
    // A fixed clock: an HTTP date has whole seconds, so a moving one could read 9 s near a boundary.
    const now = Date.parse('Wed, 02 Dec 2026 07:00:00 GMT');
    assert.equal(retryAfterSeconds(new Date(now + 10_000).toUTCString(), now), 10);
    assert.equal(retryAfterSeconds(new Date(now + 9_500).toUTCString(), now + 400), 9);
    assert.equal(retryAfterSeconds(null), null);
    assert.equal(retryAfterSeconds('soon'), null);
  });
});
