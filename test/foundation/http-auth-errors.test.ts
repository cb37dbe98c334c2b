/**
 * Auth tiers (INTERFACE §2) and error bodies (§3) through the public API: 401/403/404, credential
 * revocation and expiry, exact error keys, `[rule]: text` under dot paths, 400/413, JSON 404s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFieldErrors } from '../../src/shared/field-errors.js';
import { availableStores } from '../support/stores.js';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';

const ERROR_KEYS = ['errorCode', 'message', 'success'];

function expectError(res: TestResponse, status: number, code: string): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${res.text}`);
  assert.equal(res.body?.success, false);
  assert.equal(res.body?.errorCode, code);
  assert.equal(typeof res.body?.message, 'string');
  assert.ok(res.body.message.length > 0);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

function expectExactKeys(res: TestResponse, extra: string[] = []): void {
  assert.deepEqual(Object.keys(res.body).sort(), [...ERROR_KEYS, ...extra].sort(), res.text);
}

for (const kind of await availableStores()) {
  describe(`auth tiers and error bodies (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant({ capabilities: {}, physical: false });
    });
    after(() => t.close());

    test('no credential, unknown credential, non-Bearer scheme → 401 with exact keys', async () => {
      const variants: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer nope-not-a-key' },
        { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
        { authorization: 'Bearer' },
        { authorization: 'Bearer a b' },
      ];
      for (const headers of variants) {
        const res = await t.client(null).get(`${API}/transactions`, { headers });
        expectError(res, 401, 'UNAUTHORIZED');
        expectExactKeys(res);
      }
    });

    test('authentication comes before body parsing and validation', async () => {
      const res = await t.client(null).request('POST', `${API}/management/point-of-sales`, { raw: '{', contentType: 'application/json' });
      expectError(res, 401, 'UNAUTHORIZED');
      expectError(await t.client(null).post(`${API}/management/point-of-sales`, { name: 5 }), 401, 'UNAUTHORIZED');
    });

    test('merchant credential on partner and sandbox routes → 403 FORBIDDEN', async () => {
      expectError(await a.api.get(`${API}/partner/accounts`), 403, 'FORBIDDEN');
      expectError(await a.api.get(`${API}/partner/accounts/${a.accountId}`), 403, 'FORBIDDEN');
      expectError(await a.api.patch(`${API}/partner/accounts/${a.accountId}/capabilities`, { moto: true }), 403, 'FORBIDDEN');
      expectError(await a.api.post(`${API}/partner/accounts/${a.accountId}/access-token`, { environment: 'test' }), 403, 'FORBIDDEN');
      expectError(await a.api.get('/sandbox/v1/clock'), 403, 'FORBIDDEN');
      const res = await a.api.post('/sandbox/v1/clock', { advanceSeconds: 1 });
      expectError(res, 403, 'FORBIDDEN');
      expectExactKeys(res);
    });

    test('operator key on merchant routes → 403 FORBIDDEN', async () => {
      for (const path of ['/transactions', '/management/point-of-sales', '/terminals', '/transactions/operations']) {
        expectError(await t.operator.get(`${API}${path}`), 403, 'FORBIDDEN');
      }
      expectError(await t.operator.post(`${API}/management/api-keys`, { name: 'x' }), 403, 'FORBIDDEN');
    });

    test("another merchant's resources → 404 without their data", async () => {
      const secretName = `secret-pos-${Date.now()}`;
      const pos = (
        await a.api.post(`${API}/management/point-of-sales`, { name: secretName, domain: 'localhost', webhookAuthentication: 'x', type: 'PHYSICAL' })
      ).body;
      const terminal = (await a.api.post(`${API}/management/point-of-sales/${pos.pointOfSale.id}/terminals`, { name: 'T' })).body.terminal;
      const cases = [`${API}/management/point-of-sales/${pos.pointOfSale.id}`, `${API}/terminals/${terminal.id}`];
      for (const path of cases) {
        const res = await b.api.get(path);
        expectError(res, 404, 'NOT_FOUND');
        expectExactKeys(res);
        assert.ok(!res.text.includes(secretName));
        assert.equal((await a.api.get(path)).status, 200, 'the owner still sees it');
      }
      expectError(await b.api.post(`${API}/management/point-of-sales/${pos.pointOfSale.id}/terminals`, {}), 404, 'NOT_FOUND');
      const rotation = await b.api.post(`${API}/management/point-of-sales/${pos.pointOfSale.id}/signing-secret`);
      expectError(rotation, 404, 'NOT_FOUND');
      assert.ok(!rotation.text.includes('whsec_'));
      const owner = (await a.api.get(`${API}/management/point-of-sales/${pos.pointOfSale.id}`)).body.pointOfSale;
      assert.equal(owner.signingSecret, pos.pointOfSale.signingSecret, "another merchant's rotation changed nothing");
      const list = await b.api.get(`${API}/terminals?perPage=500`);
      assert.ok(!list.text.includes(terminal.id));
      const tx = await t.runtime.store.transactions.list(a.accountId, {}, null, 1);
      assert.deepEqual(tx, [], 'a has no transactions; a made-up id is a plain 404 too');
      expectError(await b.api.get(`${API}/transactions/ABCDEFGHJKM`), 404, 'NOT_FOUND');
    });

    test('capabilities gate is enforced per account and granted only by the operator', async () => {
      const granted = await t.operator.patch(`${API}/partner/accounts/${b.accountId}/capabilities`, { moto: true });
      assert.equal(granted.status, 200);
      assert.deepEqual(granted.body.account.capabilities, { moto: true, syncPayout: false });
      const back = await t.operator.patch(`${API}/partner/accounts/${b.accountId}/capabilities`, { moto: false });
      assert.deepEqual(back.body.account.capabilities, { moto: false, syncPayout: false });
    });

    test('a deleted account: its access token and API keys stop at once; it stays readable for the operator as CLOSED', async () => {
      const c = await t.createMerchant({ physical: false });
      const key = (await c.api.post(`${API}/management/api-keys`, { name: 'doomed' })).body.key;
      assert.equal((await c.api.get(`${API}/transactions`, { token: key })).status, 200);
      const del = await t.operator.delete(`${API}/partner/accounts/${c.accountId}`);
      assert.equal(del.status, 200);
      assert.equal(del.text, '');
      expectError(await c.api.get(`${API}/transactions`), 401, 'UNAUTHORIZED');
      expectError(await c.api.get(`${API}/transactions`, { token: key }), 401, 'UNAUTHORIZED');
      const read = await t.operator.get(`${API}/partner/accounts/${c.accountId}`);
      assert.equal(read.body.account.status, 'CLOSED');
      expectError(await t.operator.post(`${API}/partner/accounts/${c.accountId}/access-token`, { environment: 'test' }), 409, 'CONFLICT');
      expectError(await t.operator.delete(`${API}/partner/accounts/${c.accountId}`), 409, 'CONFLICT');
    });

    test('unknown account on the partner API → 404; bad uuid → 422 under path', async () => {
      expectError(await t.operator.get(`${API}/partner/accounts/00000000-0000-4000-8000-000000000000`), 404, 'NOT_FOUND');
      const res = await t.operator.get(`${API}/partner/accounts/not-a-uuid`);
      expectError(res, 422, 'VALIDATION_ERROR');
      assert.deepEqual(res.body.errors, { accountId: ['[uuid]: must be a valid UUID'] });
    });

    test('422: exact keys, [rule]: text messages, dot paths for nested fields', async () => {
      const res = await a.api.post(`${API}/management/point-of-sales`, {
        name: '',
        domain: 'bad domain!',
        type: 'KIOSK',
        hostedConfiguration: { timeout: 0, maxAttempts: 'x', exemptions: ['NOPE'], notificationUrl: 'not a url' },
      });
      expectError(res, 422, 'VALIDATION_ERROR');
      expectExactKeys(res, ['errors']);
      assert.deepEqual(res.body.errors, {
        name: ['[min:1]: must be at least 1 characters'],
        domain: ['[regex]: must match ^[A-Za-z0-9.-]+$'],
        webhookAuthentication: ['[required]: the field is required'],
        type: ['[in:ONLINE,PHYSICAL]: must be one of ONLINE,PHYSICAL'],
        'hostedConfiguration.timeout': ['[min:1]: must be at least 1'],
        'hostedConfiguration.maxAttempts': ['[int]: must be an integer, not a string'],
        'hostedConfiguration.exemptions.0': ['[in:TRA,LVT]: must be one of TRA,LVT'],
        'hostedConfiguration.notificationUrl': ['[url]: must be a valid URL'],
      });
      for (const messages of Object.values(res.body.errors as Record<string, string[]>)) {
        for (const m of messages) assert.match(m, /^\[[a-z]+(:[^\]]+)?\]: \S/);
      }
    });

    test('business-rule 422s use the same shape (off-domain URL, terminal on an ONLINE point of sale)', async () => {
      const off = await a.api.post(`${API}/management/point-of-sales`, {
        name: 'x',
        domain: 'shop.example',
        webhookAuthentication: 'x',
        hostedConfiguration: { successUrl: 'https://evil.example/ok' },
      });
      expectError(off, 422, 'VALIDATION_ERROR');
      assert.deepEqual(off.body.errors, {
        'hostedConfiguration.successUrl': [
          "[url]: must be an http(s) URL on this point of sale's approved domain shop.example or a sub-domain of it; a domain is approved by the point of sale created with it (POST /management/point-of-sales)",
        ],
      });
      const sub = await a.api.post(`${API}/management/point-of-sales`, {
        name: 'x',
        domain: 'shop.example',
        webhookAuthentication: 'x',
        hostedConfiguration: { successUrl: 'https://pay.shop.example/ok' },
      });
      assert.equal(sub.status, 200, 'a sub-domain is on the approved domain');
      const term = await a.api.post(`${API}/management/point-of-sales/${a.onlinePointOfSaleId}/terminals`, {});
      expectError(term, 422, 'VALIDATION_ERROR');
      assert.deepEqual(Object.keys(term.body.errors), ['pointOfSaleId']);
    });

    test('400: malformed JSON, empty JSON body, wrong content type — exact keys', async () => {
      const cases: Array<[string, string | undefined]> = [
        ['{"name": "', 'application/json'],
        ['', 'application/json'],
        ['{"name":"x"}', 'text/plain'],
        ['name=x', 'application/x-www-form-urlencoded'],
        ['{"name":"x"}', 'application/xml'],
      ];
      for (const [raw, contentType] of cases) {
        const res = await a.api.request('POST', `${API}/management/api-keys`, { raw, ...(contentType ? { contentType } : {}) });
        expectError(res, 400, 'BAD_REQUEST');
        expectExactKeys(res);
      }
    });

    test('400 for a malformed URL; bodies nested absurdly deep are refused, not crashed on', async () => {
      expectError(await a.api.get(`${API}/terminals/%zz`), 400, 'BAD_REQUEST');
      const deep = `{"name":"x","junk":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const res = await a.api.request('POST', `${API}/management/api-keys`, { raw: deep, contentType: 'application/json', idempotencyKey: 'deep-1' });
      expectError(res, 400, 'BAD_REQUEST');
      // What no schema catches: NUL characters (PostgreSQL text refuses them) and numbers beyond double range.
      expectError(await a.api.get(`${API}/terminals/%00`), 400, 'BAD_REQUEST');
      expectError(await a.api.get(`${API}/transactions?reference=a%00b`), 400, 'BAD_REQUEST');
      expectError(
        await a.api.request('POST', `${API}/management/api-keys`, { raw: '{"name":"a\\u0000b"}', contentType: 'application/json' }),
        400,
        'BAD_REQUEST',
      );
      const infinite = await a.api.get(`${API}/management/point-of-sales?page=1e309`);
      expectError(infinite, 422, 'VALIDATION_ERROR');
      assert.deepEqual(infinite.body.errors, { page: ['[int]: must be an integer written in decimal digits'] });
      const infiniteBody = await a.api.request('POST', `${API}/management/point-of-sales`, {
        raw: '{"name":"x","domain":"localhost","webhookAuthentication":"x","hostedConfiguration":{"timeout":1e309}}',
        contentType: 'application/json',
      });
      expectError(infiniteBody, 422, 'VALIDATION_ERROR');
      assert.deepEqual(infiniteBody.body.errors, { 'hostedConfiguration.timeout': ['[int]: must be a finite number'] });
      const shallow = await a.api.request('POST', `${API}/management/api-keys`, { raw: '{"name":"x","junk":[[[1]]]}', contentType: 'application/json' });
      expectError(shallow, 422, 'VALIDATION_ERROR');
      assert.deepEqual(Object.keys(shallow.body.errors), ['junk'], 'read and refused by name: unknown fields are not accepted');
    });

    test('413 over 1 MiB; just under is not refused for size', async () => {
      const big = JSON.stringify({ name: 'x', pad: 'y'.repeat(1024 * 1024) });
      const res = await a.api.request('POST', `${API}/management/api-keys`, { raw: big, contentType: 'application/json' });
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expectExactKeys(res);
      const under = JSON.stringify({ name: 'x', pad: 'y'.repeat(1024 * 1024 - 100) });
      assert.ok(Buffer.byteLength(under) < 1024 * 1024);
      // Read whole and validated: refused for its unknown field, not for its size.
      const read = await a.api.request('POST', `${API}/management/api-keys`, { raw: under, contentType: 'application/json' });
      expectError(read, 422, 'VALIDATION_ERROR');
      assert.deepEqual(Object.keys(read.body.errors), ['pad']);
    });

    test('unknown routes → JSON 404 NOT_FOUND, inside and outside the API, any method', async () => {
      for (const [method, path] of [
        ['GET', `${API}/nope`],
        ['POST', `${API}/nope`],
        ['GET', '/nope'],
        ['DELETE', `${API}/transactions`],
      ] as const) {
        const res = await a.api.request(method, path);
        expectError(res, 404, 'NOT_FOUND');
        expectExactKeys(res);
      }
    });

    test('health, readiness and the OpenAPI document need no credential', async () => {
      assert.equal((await t.client(null).get('/healthz')).status, 200);
      assert.equal((await t.client(null).get('/readyz')).status, 200);
      const doc = await t.client(null).get('/openapi.json');
      assert.equal(doc.status, 200);
      assert.match(doc.body.openapi, /^3\.1/);
      assert.ok(doc.body.paths['/public/api/v1/transactions'], 'paths carry the API prefix');
      assert.ok(doc.body.paths['/public/api/v1/partner/accounts']);
    });

    // Last: it moves this runtime's clock by 8 h, which ends every access token minted above.
    test('an access token works for 8 h of service time, then 401; API keys keep working', async () => {
      const m = await t.createMerchant({ physical: false });
      const key = (await m.api.post(`${API}/management/api-keys`, { name: 'k' })).body.key;
      const minted = await t.operator.post(`${API}/partner/accounts/${m.accountId}/access-token`, { environment: 'live' });
      const clock = (await t.operator.get('/sandbox/v1/clock')).body.now;
      const lifetime = Date.parse(minted.body.expiresAt) - Date.parse(clock);
      assert.ok(Math.abs(lifetime - 8 * 3_600_000) < 5000, `expiresAt is 8 h ahead (${lifetime} ms)`);
      assert.equal((await m.api.get(`${API}/transactions`, { token: minted.body.accessToken })).status, 200);
      assert.equal((await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 7 * 3600 })).status, 200);
      assert.equal((await m.api.get(`${API}/transactions`, { token: minted.body.accessToken })).status, 200, 'still valid after 7 h');
      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 3601 });
      expectError(await m.api.get(`${API}/transactions`, { token: minted.body.accessToken }), 401, 'UNAUTHORIZED');
      expectError(await m.api.get(`${API}/transactions`), 401, 'UNAUTHORIZED');
      assert.equal((await m.api.get(`${API}/transactions`, { token: key })).status, 200);
    });
  });
}

describe('schema errors → field errors (unit)', () => {
  test('dot paths, required under the parent path, one message per rule', () => {
    const errors = toFieldErrors(
      [
        { keyword: 'required', instancePath: '/interval', params: { missingProperty: 'period' } },
        { keyword: 'type', instancePath: '/transactions/3/amount', params: { type: 'integer' } },
        { keyword: 'maximum', instancePath: '/transactions/3/amount', params: { limit: 999999999 } },
        { keyword: 'format', instancePath: '/id', params: { format: 'uuid' } },
        { keyword: 'format', instancePath: '/on', params: { format: 'date' } },
        { keyword: 'minItems', instancePath: '/list', params: { limit: 1 } },
        { keyword: 'type', instancePath: '/list', params: { type: 'array' } },
        { keyword: 'type', instancePath: '/flag', params: { type: 'boolean' } },
        { keyword: 'enum', instancePath: '/state', params: { allowedValues: ['A', 'B'] } },
        { keyword: 'anyOf', instancePath: '/state', params: {} },
        { keyword: 'required', instancePath: '', params: { missingProperty: 'amount' } },
        { keyword: 'type', instancePath: '', params: { type: 'object' } },
      ],
      'body',
    );
    assert.deepEqual(errors, {
      'interval.period': ['[required]: the field is required'],
      'transactions.3.amount': ['[max:999999999]: must be at most 999999999'],
      id: ['[uuid]: must be a valid UUID'],
      on: ['[date]: must be a date (YYYY-MM-DD)'],
      list: ['[min:1]: must have at least 1 items'],
      flag: ['[boolean]: must be true or false'],
      state: ['[in:A,B]: must be one of A,B'],
      amount: ['[required]: the field is required'],
      body: ['[array]: must be an object'],
    });
  });
});
