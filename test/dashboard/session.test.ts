/**
 * Dashboard sessions and CSRF (issue 12): the unit rules of src/dashboard/session.ts, and the
 * server side over HTTP on both stores — the key is exchanged for an HttpOnly SameSite=Strict
 * cookie, never echoed; the cookie stands in for the credential on the public API; every
 * state-changing call needs the session's CSRF token; sign-out ends it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { csrfMatches, IDLE_MS, MAX_AGE_MS, readCookie, SESSION_COOKIE, sessionCookie, SessionStore } from '../../src/dashboard/session.js';
import { DASHBOARD_CSP } from '../../src/dashboard/dashboard.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { motoBody } from '../online/helpers.js';

describe('dashboard session store (unit)', () => {
  test('a session expires after the idle time, and at the latest MAX_AGE after sign-in', () => {
    let now = 1_000_000;
    const store = new SessionStore(() => now);
    const s = store.create('key-1', { tier: 'merchant', accountId: 'a' });
    assert.equal(store.get(s.id)?.secret, 'key-1');
    now += IDLE_MS - 1;
    assert.ok(store.get(s.id), 'used within the idle time');
    now += IDLE_MS;
    assert.equal(store.get(s.id), null, 'idle too long');

    const t = store.create('key-2', { tier: 'operator', accountId: null });
    for (let used = 0; used < MAX_AGE_MS; used += IDLE_MS / 2) {
      now += IDLE_MS / 2;
      if (used + IDLE_MS / 2 < MAX_AGE_MS) assert.ok(store.get(t.id));
    }
    assert.equal(store.get(t.id), null, 'past its maximum age even when in use');
  });

  test('ids and CSRF tokens are random, unknown and destroyed ids find nothing', () => {
    const store = new SessionStore(() => 0);
    const a = store.create('k', { tier: 'merchant', accountId: 'x' });
    const b = store.create('k', { tier: 'merchant', accountId: 'x' });
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.csrfToken, b.csrfToken);
    assert.ok(a.id.length >= 43 && a.csrfToken.length >= 43);
    assert.equal(store.get('nope'), null);
    assert.equal(store.get(undefined), null);
    store.destroy(a.id);
    assert.equal(store.get(a.id), null);
    assert.ok(store.get(b.id));
  });

  test('CSRF check: only the exact token of the session matches', () => {
    const s = { csrfToken: 'abcdef' };
    assert.equal(csrfMatches(s, 'abcdef'), true);
    assert.equal(csrfMatches(s, 'abcdeg'), false);
    assert.equal(csrfMatches(s, 'abc'), false);
    assert.equal(csrfMatches(s, ''), false);
    assert.equal(csrfMatches(s, undefined), false);
    assert.equal(csrfMatches(s, ['abcdef']), false);
  });

  test('cookies: read one among several; the session cookie is HttpOnly, SameSite=Strict, Secure only over https, with an expiry', () => {
    assert.equal(readCookie('a=1; payments_dashboard=xyz; b=2', SESSION_COOKIE), 'xyz');
    assert.equal(readCookie('a=1', SESSION_COOKIE), undefined);
    assert.equal(readCookie(undefined, SESSION_COOKIE), undefined);
    const plain = sessionCookie({ id: 'sid', expiresAt: 10_000 }, { secure: false, now: 0 });
    assert.match(plain, /^payments_dashboard=sid; Max-Age=10; Path=\/; HttpOnly; SameSite=Strict$/);
    assert.match(sessionCookie({ id: 'sid', expiresAt: 10_000 }, { secure: true, now: 0 }), /; Secure$/);
    assert.match(sessionCookie(null, { secure: false, now: 0 }), /^payments_dashboard=; Max-Age=0;/);
  });
});

for (const kind of await availableStores()) {
  describe(`dashboard sign-in and CSRF over HTTP (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant({ physical: false });
    });
    after(() => t.close());

    const inject = (method: string, url: string, o: { cookie?: string; csrf?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
      t.runtime.app.inject({
        method: method as 'GET',
        url,
        headers: {
          ...(o.cookie ? { cookie: `${SESSION_COOKIE}=${o.cookie}` } : {}),
          ...(o.csrf ? { 'x-csrf-token': o.csrf } : {}),
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(o.headers ?? {}),
        },
        ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}),
      });

    async function signIn(key: string) {
      const res = await inject('POST', '/dashboard/api/session', { body: { key } });
      assert.equal(res.statusCode, 200, res.body);
      const cookie = String(res.headers['set-cookie']);
      return { res, cookie, id: readCookie(cookie.split(';')[0], SESSION_COOKIE)!, csrf: res.json().session.csrfToken as string };
    }

    test('a wrong key is 401 in the API error shape, with no cookie', async () => {
      const res = await inject('POST', '/dashboard/api/session', { body: { key: 'not-a-key' } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().errorCode, 'UNAUTHORIZED');
      assert.equal(res.headers['set-cookie'], undefined);
      assert.equal((await inject('POST', '/dashboard/api/session', { body: {} })).statusCode, 401);
      // A form post (what a cross-site page could send without a preflight) is refused.
      const form = await t.runtime.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `key=${m.token}`,
      });
      assert.equal(form.statusCode, 400);
      const crossSite = await inject('POST', '/dashboard/api/session', { body: { key: m.token }, headers: { origin: 'https://evil.example' } });
      assert.equal(crossSite.statusCode, 403);
    });

    test('sign-in: HttpOnly SameSite=Strict cookie, the key never in the answer; the cookie works on the public API', async () => {
      const { res, cookie, id, csrf } = await signIn(m.token);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.match(cookie, /Max-Age=\d+/);
      assert.doesNotMatch(cookie, /Secure/, 'served over http here');
      assert.ok(!res.body.includes(m.token), 'the key is not echoed');
      assert.ok(!cookie.includes(m.token), 'the key is not the cookie');
      assert.equal(res.json().session.tier, 'merchant');
      assert.equal(res.json().session.accountId, m.accountId);

      const who = await inject('GET', '/dashboard/api/session', { cookie: id });
      assert.equal(who.statusCode, 200);
      assert.equal(who.json().session.csrfToken, csrf);
      assert.ok(!who.body.includes(m.token));

      const list = await inject('GET', `${API}/transactions`, { cookie: id });
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(list.json().items, []);
    });

    test('state-changing calls need the CSRF token; with it they run as the merchant (idempotency included)', async () => {
      const { id, csrf } = await signIn(m.token);
      const body = motoBody(m, { amount: 700 });
      const without = await inject('POST', `${API}/moto`, { cookie: id, body });
      assert.equal(without.statusCode, 403);
      assert.equal(without.json().errorCode, 'FORBIDDEN');
      const wrong = await inject('POST', `${API}/moto`, { cookie: id, body, csrf: csrf.slice(1) + 'x' });
      assert.equal(wrong.statusCode, 403);
      const stored = await m.api.get(`${API}/transactions`);
      assert.equal(stored.body.items.length, 0, 'nothing was created by the refused calls');

      const first = await inject('POST', `${API}/moto`, { cookie: id, body, csrf, headers: { 'idempotency-key': 'dash-1' } });
      assert.equal(first.statusCode, 200, first.body);
      const again = await inject('POST', `${API}/moto`, { cookie: id, body, csrf, headers: { 'idempotency-key': 'dash-1' } });
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json().transaction.id, first.json().transaction.id);
      // Tenant isolation holds through the session: another merchant's session sees a 404.
      const other = await t.createMerchant({ physical: false });
      const otherSession = await signIn(other.token);
      assert.equal((await inject('GET', `${API}/transactions/${first.json().transaction.id}`, { cookie: otherSession.id })).statusCode, 404);
    });

    test('operator key signs in as operator; merchant endpoints then answer 403', async () => {
      const { res, id } = await signIn(t.operatorKey);
      assert.equal(res.json().session.tier, 'operator');
      assert.equal(res.json().session.accountId, null);
      assert.equal((await inject('GET', `${API}/partner/accounts`, { cookie: id })).statusCode, 200);
      assert.equal((await inject('GET', `${API}/transactions`, { cookie: id })).statusCode, 403);
    });

    test('sign-out needs the CSRF token, then ends the session and clears the cookie', async () => {
      const { id, csrf } = await signIn(m.token);
      assert.equal((await inject('DELETE', '/dashboard/api/session', { cookie: id })).statusCode, 403);
      const out = await inject('DELETE', '/dashboard/api/session', { cookie: id, csrf });
      assert.equal(out.statusCode, 200);
      assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
      assert.equal((await inject('GET', '/dashboard/api/session', { cookie: id })).statusCode, 401);
      assert.equal((await inject('GET', `${API}/transactions`, { cookie: id })).statusCode, 401);
    });

    test('dashboard responses carry the CSP (no inline script, frame-ancestors none)', async () => {
      const res = await inject('GET', '/dashboard/api/session');
      assert.equal(res.headers['content-security-policy'], DASHBOARD_CSP);
      assert.match(DASHBOARD_CSP, /frame-ancestors 'none'/);
      assert.match(DASHBOARD_CSP, /script-src 'self'(;|$)/);
      assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      const page = await inject('GET', '/dashboard');
      assert.equal(page.statusCode, 302);
      assert.equal(page.headers.location, '/dashboard/');
    });
  });
}
