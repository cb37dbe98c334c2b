/**
 * Dashboard sessions and CSRF (issue 12): the session store of src/dashboard/session.ts on both
 * stores (kept in the database: the id only hashed, the key and CSRF token sealed; idle and
 * absolute expiry; pruning; a bound per key), and the server side over HTTP on both stores — the
 * key is exchanged for an HttpOnly SameSite=Strict cookie, never echoed; the cookie stands in for
 * the credential on the public API; every state-changing call needs the session's CSRF token;
 * sign-out ends it; a session survives a restart of the service on the same database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  csrfMatches,
  IDLE_MS,
  MAX_AGE_MS,
  MAX_SESSIONS_PER_KEY,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  SessionStore,
} from '../../src/dashboard/session.js';
import { DASHBOARD_CSP } from '../../src/dashboard/dashboard.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime.js';
import { hashSecret, SecretBox } from '../../src/security/secret-box.js';
import { API, startTestRuntime, testConfig, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { motoBody } from '../online/helpers.js';

const KINDS = await availableStores();

for (const kind of KINDS) {
  describe(`dashboard session store (${kind})`, () => {
    let t: TestRuntime;
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    let store: SessionStore;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      store = new SessionStore({ sessions: t.runtime.store.dashboardSessions, sealer: t.runtime.sealer, now: () => now });
    });
    after(() => t.close());
    const rows = () => t.runtime.store.db.selectFrom('dashboardSessions').selectAll().execute();

    test('a session expires after the idle time, and at the latest MAX_AGE after sign-in', async () => {
      const s = await store.create('key-1', { tier: 'merchant', accountId: 'a' });
      assert.equal((await store.get(s.id))?.secret, 'key-1');
      now += IDLE_MS - 1;
      assert.ok(await store.get(s.id), 'used within the idle time');
      now += IDLE_MS;
      assert.equal(await store.get(s.id), null, 'idle too long');
      assert.ok(!(await rows()).some((r) => r.idHash === hashSecret(s.id)), 'the expired row is deleted');

      const u = await store.create('key-2', { tier: 'operator', accountId: null });
      let used = 0;
      for (; used + IDLE_MS / 2 < MAX_AGE_MS; used += IDLE_MS / 2) {
        now += IDLE_MS / 2;
        assert.ok(await store.get(u.id), `in use ${used + IDLE_MS / 2} ms after sign-in`);
      }
      now += IDLE_MS / 2;
      assert.equal(await store.get(u.id), null, 'past its maximum age even when in use');
    });

    test('ids and CSRF tokens are random; unknown, malformed and destroyed ids find nothing', async () => {
      const a = await store.create('k', { tier: 'merchant', accountId: 'x' });
      const b = await store.create('k', { tier: 'merchant', accountId: 'x' });
      assert.notEqual(a.id, b.id);
      assert.notEqual(a.csrfToken, b.csrfToken);
      assert.ok(a.id.length >= 43 && a.csrfToken.length >= 43);
      assert.equal(await store.get(randomBytes(32).toString('base64url')), null);
      assert.equal(await store.get('nope'), null);
      assert.equal(await store.get(`${a.id}'--`), null);
      assert.equal(await store.get(undefined), null);
      await store.destroy(a.id);
      assert.equal(await store.get(a.id), null);
      const found = await store.get(b.id);
      assert.equal(found?.csrfToken, b.csrfToken);
      assert.equal(found?.tier, 'merchant');
      assert.equal(found?.accountId, 'x');
    });

    test('the table holds no session id, key or CSRF token in clear: the id hashed, the rest sealed with the vault key', async () => {
      const key = `sk_${randomBytes(24).toString('hex')}`;
      const s = await store.create(key, { tier: 'merchant', accountId: 'acc' });
      const row = (await rows()).find((r) => r.idHash === hashSecret(s.id));
      assert.ok(row, 'stored under the hash of its id');
      const text = JSON.stringify(await rows());
      for (const [what, value] of [
        ['key', key],
        ['session id', s.id],
        ['CSRF token', s.csrfToken],
      ] as const) {
        assert.ok(!text.includes(value), `the ${what} is not in the table`);
      }
      assert.equal(t.runtime.sealer.open(row.keySealed), key);
      assert.equal(t.runtime.sealer.open(row.csrfTokenSealed), s.csrfToken);
      // Under another vault key the session cannot act: refused, and its row removed.
      const otherKey = new SessionStore({ sessions: t.runtime.store.dashboardSessions, sealer: new SecretBox(randomBytes(32)), now: () => now });
      assert.equal(await otherKey.get(s.id), null);
      assert.equal(await store.get(s.id), null);
    });

    test('expired sessions are pruned at the next sign-in, idle or past their maximum age', async () => {
      const idle = await store.create('prune-1', { tier: 'merchant', accountId: 'p' });
      now += IDLE_MS;
      const old = await store.create('prune-2', { tier: 'merchant', accountId: 'p' });
      const hashes = () => rows().then((r) => r.map((x) => x.idHash));
      assert.ok(!(await hashes()).includes(hashSecret(idle.id)), 'the idle session was pruned by the sign-in');
      assert.ok((await hashes()).includes(hashSecret(old.id)));
      // Kept in use until just before its maximum age, then left: only the absolute expiry can prune it.
      for (let i = 1; i < MAX_AGE_MS / (IDLE_MS / 2); i++) {
        now += IDLE_MS / 2;
        assert.ok(await store.get(old.id));
      }
      now += IDLE_MS / 2;
      await store.create('prune-3', { tier: 'merchant', accountId: 'p' });
      assert.ok(!(await hashes()).includes(hashSecret(old.id)), 'past its maximum age: pruned');
    });

    test(`one key holds at most ${MAX_SESSIONS_PER_KEY} sessions; its oldest ends first`, async () => {
      const made = [];
      for (let i = 0; i <= MAX_SESSIONS_PER_KEY; i++) {
        now += 1;
        made.push(await store.create('busy-key', { tier: 'operator', accountId: null }));
      }
      const mine = (await rows()).filter((r) => r.keyHash === hashSecret('busy-key'));
      assert.equal(mine.length, MAX_SESSIONS_PER_KEY);
      assert.equal(await store.get(made[0]!.id), null, 'the oldest one ended');
      assert.ok(await store.get(made[1]!.id));
      assert.ok(await store.get(made.at(-1)!.id));
    });
  });
}

describe('dashboard CSRF and cookies (unit)', () => {
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

for (const kind of KINDS) {
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

    test('a session survives a restart: a new app on the same database knows it; sign-out there ends it; the sandbox clock does not, idleness does', async () => {
      const { id, csrf } = await signIn(m.token);
      await t.runtime.app.close();
      const config = testConfig(t.database, { operatorKey: t.operatorKey });
      const second = await createRuntime(config, {
        logger: createLogger('silent'),
        connectOptions: t.database.schema ? { schema: t.database.schema } : {},
        startWorkers: false,
      });
      try {
        const on = (method: string, url: string, headers: Record<string, string> = {}) =>
          second.app.inject({ method: method as 'GET', url, headers: { cookie: `${SESSION_COOKIE}=${id}`, ...headers } });
        const who = await on('GET', '/dashboard/api/session');
        assert.equal(who.statusCode, 200, who.body);
        assert.equal(who.json().session.csrfToken, csrf);
        assert.equal(who.json().session.accountId, m.accountId);
        const list = await on('GET', `${API}/transactions`);
        assert.equal(list.statusCode, 200, 'the bridge acts with the key kept in the database');

        const fresh = await second.app.inject({
          method: 'POST',
          url: '/dashboard/api/session',
          headers: { 'content-type': 'application/json' },
          payload: { key: m.token },
        });
        const freshId = readCookie(String(fresh.headers['set-cookie']).split(';')[0], SESSION_COOKIE)!;
        const asFresh = () => second.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: `${SESSION_COOKIE}=${freshId}` } });
        assert.equal((await on('DELETE', '/dashboard/api/session', { 'x-csrf-token': csrf })).statusCode, 200);
        assert.equal((await on('GET', '/dashboard/api/session')).statusCode, 401, 'signed out: the row is gone');
        assert.equal((await asFresh()).statusCode, 200, "another session of the same key is not ended by this one's sign-out");

        // Session lifetimes are real time: moving the sandbox clock a day forward signs nobody out.
        const moved = await second.app.inject({
          method: 'POST',
          url: '/sandbox/v1/clock',
          headers: { authorization: `Bearer ${t.operatorKey}`, 'content-type': 'application/json' },
          payload: { advanceSeconds: 86_400 },
        });
        assert.equal(moved.statusCode, 200, moved.body);
        assert.equal((await asFresh()).statusCode, 200, 'still signed in after the sandbox clock moved');

        // Last used longer than IDLE_MS ago (as another process would find it): refused, and its row deleted.
        const db = second.store.db;
        const backdated = new Date(Date.now() - IDLE_MS - 1000).toISOString();
        await db.updateTable('dashboardSessions').set({ lastSeenAt: backdated }).where('idHash', '=', hashSecret(freshId)).execute();
        const idle = await asFresh();
        assert.equal(idle.statusCode, 401, 'idle too long');
        assert.equal(idle.json().errorCode, 'UNAUTHORIZED');
        const left = await db.selectFrom('dashboardSessions').select('idHash').execute();
        assert.ok(!left.some((r) => r.idHash === hashSecret(freshId)), 'the expired row is deleted');
      } finally {
        await second.close();
      }
    });
  });
}
