/**
 * The operations side of the service (README "Operations"): /docs with every asset served
 * locally, /openapi.json, /metrics in Prometheus text, /readyz following the database, logs
 * without credentials, and a graceful shutdown that finishes an in-flight request.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { bootstrapMerchant, freshDatabase, newKeys, sleep, startService } from '../e2e/service.js';

const CARD = { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' };

/** The src of every <script> and the href of every <link> in an HTML page. */
function assetUrls(html: string): string[] {
  const urls: string[] = [];
  for (const match of html.matchAll(/<(script|link)\b[^>]*>/gi)) {
    const attr = /\b(?:src|href)\s*=\s*"([^"]*)"/i.exec(match[0]);
    if (attr) urls.push(attr[1]!);
  }
  return urls;
}

describe('operations endpoints: API docs and OpenAPI', () => {
  let t: TestRuntime;
  before(async () => {
    t = await startTestRuntime('sqlite', {}, { startWorkers: false });
  });
  after(() => t.close());

  test('/docs is an HTML page whose scripts and styles are all served by the service itself', async () => {
    const anon = t.client(null);
    const page = await anon.get('/docs');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const urls = assetUrls(page.text);
    const scripts = urls.filter((u) => u.endsWith('.js'));
    const styles = urls.filter((u) => u.endsWith('.css'));
    assert.ok(scripts.length >= 2, `scripts referenced: ${urls.join(', ')}`);
    assert.ok(styles.length >= 1, `styles referenced: ${urls.join(', ')}`);
    for (const url of urls) {
      assert.ok(!/^[a-z][a-z0-9+.-]*:|^\/\//i.test(url), `${url} points to another host`);
      const resolved = new URL(url, 'http://127.0.0.1/docs').pathname;
      const asset = await anon.get(resolved);
      assert.equal(asset.status, 200, `${resolved} is served`);
      assert.ok(asset.text.length > 0, `${resolved} is not empty`);
      if (resolved.endsWith('.js')) assert.match(String(asset.headers['content-type']), /javascript/, resolved);
      if (resolved.endsWith('.css')) assert.match(String(asset.headers['content-type']), /^text\/css/, resolved);
    }
    // The page loads its document from the service too (swagger-initializer.js → ./json).
    const initializer = await anon.get(
      new URL(
        scripts.find((u) => u.includes('initializer'))!,
        'http://127.0.0.1/docs',
      ).pathname,
    );
    assert.match(initializer.text, /url: resolveUrl\('\.\/json'\)/);
    const doc = await anon.get('/docs/json');
    assert.equal(doc.status, 200);
    assert.match(doc.body.openapi, /^3\.1\./);
  });

  test('/openapi.json is OpenAPI 3.1 whose API paths carry /public/api/v1', async () => {
    const res = await t.client(null).get('/openapi.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(res.body.openapi, /^3\.1\.\d+$/);
    const paths = Object.keys(res.body.paths);
    const api = paths.filter((p) => p.startsWith('/public/api/v1/'));
    assert.ok(api.length >= 40, `${api.length} API paths`);
    assert.deepEqual(
      paths.filter((p) => !p.startsWith('/public/api/v1/') && !p.startsWith('/sandbox/v1/')),
      [],
      'no path outside the API and the sandbox',
    );
    for (const path of [
      '/public/api/v1/transactions',
      '/public/api/v1/transactions/operations',
      '/public/api/v1/mit',
      '/public/api/v1/moto',
      '/public/api/v1/subscriptions/{subscriptionId}',
    ]) {
      assert.ok(res.body.paths[path], `${path} is documented`);
    }
    assert.ok(res.body.paths['/public/api/v1/transactions'].get.responses['200'], 'with its responses');
    for (const hidden of ['/healthz', '/readyz', '/metrics', '/openapi.json']) assert.equal(res.body.paths[hidden], undefined);
  });
});

test('logger: Authorization headers, keys, secrets and card fields are redacted', () => {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  logger.info({ req: { method: 'GET', headers: { authorization: 'Bearer tok-in-req', 'x-request-id': 'visible-id' } } }, 'request');
  logger.info({ headers: { authorization: 'Bearer tok-in-headers' } }, 'headers');
  logger.info(
    {
      apiKey: { key: 'sk_unit_key_1', name: 'visible-name' },
      webhook: { secret: 'whsec-unit-1' },
      pos: { webhookAuthentication: 'Bearer cb-unit-1' },
      grant: { accessToken: 'at-unit-1' },
    },
    'values',
  );
  logger.info({ body: { card: { number: '4111111111111111', cvc: '987' } }, number: '5555555555554444' }, 'card');
  const out = lines.join('');
  for (const secret of [
    'tok-in-req',
    'tok-in-headers',
    'sk_unit_key_1',
    'whsec-unit-1',
    'cb-unit-1',
    'at-unit-1',
    '4111111111111111',
    '5555555555554444',
    '987',
  ]) {
    assert.ok(!out.includes(secret), `${secret} is not logged`);
  }
  const [req, headers, values, card] = lines.map((l) => JSON.parse(l));
  assert.equal(req.req.headers.authorization, '[redacted]');
  assert.equal(req.req.headers['x-request-id'], 'visible-id', 'other headers stay');
  assert.equal(headers.headers.authorization, '[redacted]');
  assert.deepEqual(values.apiKey, { key: '[redacted]', name: 'visible-name' });
  assert.equal(values.webhook.secret, '[redacted]');
  assert.equal(values.pos.webhookAuthentication, '[redacted]');
  assert.equal(values.grant.accessToken, '[redacted]');
  assert.equal(card.body.card, '[redacted]');
  assert.equal(card.number, '[redacted]');
});

for (const kind of await availableStores()) {
  describe(`operations endpoints (${kind})`, () => {
    test('/metrics: Prometheus text with request latency by method, route and status, process metrics and payments_jobs', async () => {
      // No runner: the scheduled jobs stay queued, so payments_jobs has known values.
      const t = await startTestRuntime(kind, {}, { startWorkers: false });
      try {
        const m = await t.createMerchant({ physical: false });
        assert.equal((await m.api.get(`${API}/transactions`)).status, 200);
        assert.equal((await m.api.get(`${API}/transactions?perPage=5`)).status, 200);
        assert.equal((await m.api.get(`${API}/transactions`, { token: 'sk_not_a_key_000000' })).status, 401);
        const res = await t.client(null).get('/metrics');
        assert.equal(res.status, 200);
        assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
        const text = res.text;
        const sample = (name: string, labels: string) => {
          const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
          return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
        };
        assert.match(text, /^# TYPE http_request_duration_seconds histogram$/m);
        assert.equal(sample('http_request_duration_seconds_count', 'method="GET",route="/public/api/v1/transactions",status="200"'), 2, 'by route, not by URL');
        assert.equal(sample('http_request_duration_seconds_count', 'method="GET",route="/public/api/v1/transactions",status="401"'), 1);
        assert.equal(sample('http_request_duration_seconds_bucket', 'le="+Inf",method="GET",route="/public/api/v1/transactions",status="200"'), 2);
        assert.match(text, /^process_cpu_user_seconds_total \d/m);
        assert.match(text, /^nodejs_heap_size_used_bytes \d/m);
        assert.match(text, /^# TYPE payments_jobs gauge$/m);
        assert.equal(sample('payments_jobs', 'kind="maintenance.sweep",state="queued"'), 1);
        assert.equal(sample('payments_jobs', 'kind="subscriptions.payment-method-expiry",state="queued"'), 1);
      } finally {
        await t.close();
      }
    });

    test('/readyz: 200 while the database answers, 503 once it does not (liveness stays 200)', async () => {
      const t = await startTestRuntime(kind, {}, { startWorkers: false });
      try {
        const anon = t.client(null);
        const ready = await anon.get('/readyz');
        assert.equal(ready.status, 200);
        assert.deepEqual(ready.body, { status: 'ready' });
        await t.runtime.store.close();
        const unready = await anon.get('/readyz');
        assert.equal(unready.status, 503);
        assert.deepEqual(unready.body, { status: 'unavailable' });
        assert.equal((await anon.get('/healthz')).status, 200);
      } finally {
        // The store is closed already: close the HTTP app and drop the database directly.
        await t.runtime.app.close();
        await t.database.drop();
      }
    });

    test('the request log has one line per request with its request id, and no credential, secret or card number', async () => {
      const lines: string[] = [];
      const t = await startTestRuntime(
        kind,
        { logLevel: 'trace' },
        { startWorkers: false, logDestination: { write: (line: string) => void lines.push(line) } },
      );
      try {
        const m = await t.createMerchant({ physical: false });
        const apiKey = (await m.api.post(`${API}/management/api-keys`, { name: 'log test' })).body.key as string;
        assert.match(apiKey, /^sk_/);
        const bogus = 'sk_bogus_secret_never_logged_42';
        const webhookSecret = 'whsec-never-logged-42';
        assert.equal((await m.api.get(`${API}/transactions`, { token: apiKey, headers: { 'x-request-id': 'log-test-key' } })).status, 200);
        assert.equal((await m.api.get(`${API}/transactions`, { token: bogus, headers: { 'x-request-id': 'log-test-bogus' } })).status, 401);
        assert.equal(
          (await m.api.post(`${API}/webhooks`, { url: 'http://localhost:9/wh', events: ['transaction.success.v1'], secret: webhookSecret })).status,
          200,
        );
        const moto = await m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency: 'DKK', reference: 'log' },
          card: { ...CARD, number: '5555555555554444' },
        });
        assert.equal(moto.status, 200, moto.text);

        const entries = lines.map((l) => JSON.parse(l));
        const requestLine = (id: string) => entries.find((e) => e.requestId === id && e.msg === 'request');
        assert.deepEqual((({ method, route, status }) => ({ method, route, status }))(requestLine('log-test-key')), {
          method: 'GET',
          route: '/public/api/v1/transactions',
          status: 200,
        });
        assert.equal(requestLine('log-test-bogus')?.status, 401);
        const log = lines.join('');
        for (const secret of [t.operatorKey, m.token, apiKey, apiKey.slice(3), bogus, webhookSecret, '5555555555554444', 'Bearer cb-']) {
          assert.ok(!log.includes(secret), `the log must not contain ${secret.slice(0, 6)}…`);
        }
      } finally {
        await t.close();
      }
    });
  });
}

/** POST over a connection of its own, closed after the answer (`Connection: close`). */
function postOnce(url: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('graceful shutdown (real process)', () => {
  test('SIGTERM while a request is in flight: the request still gets its 200, then the process exits cleanly', async () => {
    const db = await freshDatabase('sqlite', 'graceful');
    const service = await startService({ databaseUrl: db.url, dir: db.dir, ...newKeys(), latencyMs: 1000, label: 'graceful' });
    try {
      const merchant = await bootstrapMerchant(service, 'Graceful Shop');
      await service.operator.must('PATCH', `${API}/partner/accounts/${merchant.accountId}/capabilities`, { moto: true, syncPayout: false });
      const reference = `graceful-${Date.now()}`;
      let answered = false;
      const started = Date.now();
      const inFlight = postOnce(`${service.baseUrl}${API}/moto`, merchant.token, {
        transaction: { pointOfSaleId: merchant.pointOfSaleId, amount: 4200, currency: 'DKK', reference },
        card: CARD,
      }).finally(() => (answered = true));
      // Wait until the service is working on it (the payment exists, the 1 s acquirer answer has not come yet).
      for (;;) {
        const list = await merchant.api.get(`${API}/transactions?reference=${reference}`);
        if (list.body?.items?.length) break;
        assert.ok(Date.now() - started < 10_000, 'the payment appears while the request runs');
        await sleep(20);
      }
      assert.equal(answered, false, 'the request is still in flight when SIGTERM is sent');
      let exited = false;
      const stopped = service.stop().then(() => (exited = true));
      const res = await inFlight;
      const answeredAt = Date.now();
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.transaction.state, 'SUCCESS');
      assert.equal(res.body.transaction.amount, 4200);
      assert.ok(answeredAt - started >= 1000, 'it waited for the 1 s acquirer answer');
      await Promise.race([stopped, sleep(5000)]);
      assert.equal(exited, true, `the process exits once the request is done; log:\n${service.logTail()}`);
      assert.ok(!fs.readFileSync(service.logPath, 'utf8').includes('shutdown took too long'), 'not the forced exit');
      await assert.rejects(fetch(`${service.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) }), 'nothing listens any more');
    } finally {
      await service.kill();
      await db.drop();
    }
  });
});
