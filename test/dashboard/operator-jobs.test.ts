/**
 * The operator's jobs view of the dashboard (src/dashboard/operator-jobs.routes.ts), on both
 * stores: counts by kind and state, dead jobs without payloads, retry with CSRF through the
 * session; merchants and strangers are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SESSION_COOKIE } from '../../src/dashboard/session.js';
import { startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

const PATH = '/dashboard/api/operator/jobs';

for (const kind of await availableStores()) {
  describe(`dashboard operator jobs (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
    });
    after(() => t.close());

    async function signIn(key: string) {
      const res = await t.runtime.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        headers: { 'content-type': 'application/json' },
        payload: { key },
      });
      assert.equal(res.statusCode, 200, res.body);
      return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().session.csrfToken as string };
    }

    test('counts and dead jobs; retry queues the dead job again (CSRF needed); merchants are refused', async () => {
      const { jobs } = t.runtime.store;
      const clock = t.runtime.clock;
      await jobs.enqueueMany([{ kind: 'dash.test', payload: { secret: 'payload-not-shown' }, maxAttempts: 1 }]);
      const [job] = await jobs.claim('w', { now: clock.now(), wallNow: clock.now() }, 1000, 1, ['dash.test']);
      await jobs.fail(job!.id, 'w', clock.now(), 'acquirer said no', null);

      const op = await signIn(t.operatorKey);
      const view = await t.runtime.app.inject({ method: 'GET', url: PATH, headers: { cookie: op.cookie } });
      assert.equal(view.statusCode, 200, view.body);
      const body = view.json();
      assert.ok(body.counts.some((c: { kind: string; state: string; count: number }) => c.kind === 'dash.test' && c.state === 'dead' && c.count === 1));
      const dead = body.dead.find((d: { id: string }) => d.id === job!.id);
      assert.equal(dead.lastError, 'acquirer said no');
      assert.equal(dead.attempts, 1);
      assert.ok(!view.body.includes('payload-not-shown'), 'payloads stay out');

      const noCsrf = await t.runtime.app.inject({ method: 'POST', url: `${PATH}/${job!.id}/retry`, headers: { cookie: op.cookie } });
      assert.equal(noCsrf.statusCode, 403);
      const retry = await t.runtime.app.inject({ method: 'POST', url: `${PATH}/${job!.id}/retry`, headers: { cookie: op.cookie, 'x-csrf-token': op.csrf } });
      assert.equal(retry.statusCode, 200, retry.body);
      assert.deepEqual(retry.json(), { success: true });
      assert.ok(!(await jobs.listDead(200)).some((d) => d.id === job!.id), 'no longer dead');
      const again = await t.runtime.app.inject({ method: 'POST', url: `${PATH}/${job!.id}/retry`, headers: { cookie: op.cookie, 'x-csrf-token': op.csrf } });
      assert.equal(again.statusCode, 404);
      assert.equal(again.json().errorCode, 'NOT_FOUND');

      const m = await t.createMerchant({ physical: false });
      const merchant = await signIn(m.token);
      assert.equal((await t.runtime.app.inject({ method: 'GET', url: PATH, headers: { cookie: merchant.cookie } })).statusCode, 403);
      assert.equal((await t.runtime.app.inject({ method: 'GET', url: PATH })).statusCode, 401);
      assert.equal((await t.runtime.app.inject({ method: 'GET', url: PATH, headers: { cookie: `${SESSION_COOKIE}=forged` } })).statusCode, 401);
      const badId = await t.runtime.app.inject({ method: 'POST', url: `${PATH}/not-a-uuid/retry`, headers: { cookie: op.cookie, 'x-csrf-token': op.csrf } });
      assert.equal(badId.statusCode, 422);
    });
  });
}
