import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { emit, newPath, type Receiver, register, sleep, startReceiver, waitFor } from './support.js';

for (const kind of await availableStores()) {
  describe(`webhooks security (${kind})`, () => {
    let t: TestRuntime;
    let rx: Receiver;
    let a: TestMerchant;
    let b: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      rx = await startReceiver();
      a = await t.createMerchant();
      b = await t.createMerchant({ physical: false });
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    const routes = (id: string) =>
      [
        ['POST', `${API}/webhooks`],
        ['GET', `${API}/webhooks`],
        ['GET', `${API}/webhooks/${id}`],
        ['DELETE', `${API}/webhooks/${id}`],
        ['POST', `${API}/webhooks/${id}/pause`],
        ['POST', `${API}/webhooks/${id}/resume`],
        ['POST', `${API}/webhooks/${id}/signing-secret`],
        ['GET', `${API}/webhooks/${id}/deliveries`],
      ] as const;

    test('no or unknown credential → 401; the operator key → 403 FORBIDDEN, on every webhook route', async () => {
      const { webhook } = await register(a, rx, ['transaction.success.v1']);
      const body = { url: rx.url('/x'), events: ['transaction.success.v1'], secret: 's' };
      for (const [method, url] of routes(webhook.id)) {
        const payload = method === 'POST' ? { body } : {};
        assert.equal((await t.client(null).request(method, url, payload)).status, 401, `${method} ${url} without token`);
        assert.equal((await t.client('nope-not-a-token').request(method, url, payload)).status, 401, `${method} ${url} unknown token`);
        const op = await t.operator.request(method, url, payload);
        assert.equal(op.status, 403, `${method} ${url} operator`);
        assert.equal(op.body.errorCode, 'FORBIDDEN');
      }
      assert.equal((await a.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook.pausedAt, null, 'untouched');
    });

    test("another merchant's webhook → 404 on every route, absent from its list; the owner's stays as it was", async () => {
      const { webhook } = await register(a, rx, ['transaction.success.v1']);
      for (const [method, url] of routes(webhook.id).slice(2)) {
        const res = await b.api.request(method, url);
        assert.equal(res.status, 404, `${method} ${url}`);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.ok(!res.text.includes(webhook.url), 'no data of the other merchant');
      }
      const theirs = await b.api.get(`${API}/webhooks?perPage=500`);
      assert.ok(!theirs.body.items.some((i: any) => i.id === webhook.id));
      const ours = (await a.api.get(`${API}/webhooks/${webhook.id}`)).body.webhook;
      assert.deepEqual(ours, webhook, 'not deleted, paused, resumed or given a new signing secret by B');
    });

    test("a merchant's events reach only its own webhooks", async () => {
      const mine = await register(a, rx, ['transaction.failed.v1']);
      const theirs = await register(b, rx, ['transaction.failed.v1']);
      await emit(t, b, 'transaction.failed.v1', { owner: 'b' });
      await waitFor(() => rx.at(theirs.path).length === 1, "B's delivery");
      await sleep(500);
      assert.equal(rx.at(mine.path).length, 0, "B's event not delivered to A");
      assert.equal(rx.at(theirs.path)[0]!.headers.authorization, theirs.secret);
    });

    test("a URL on another merchant's domain is refused: only the merchant's own points of sale count", async () => {
      const c = await t.createMerchant({ physical: false });
      const own = await c.api.post(`${API}/management/point-of-sales`, { name: 'Shop C', domain: 'shop-c.example', webhookAuthentication: 'Bearer c' });
      assert.equal(own.status, 200, own.text);
      const res = await a.api.post(`${API}/webhooks`, { url: 'https://hooks.shop-c.example/x', events: ['transaction.success.v1'], secret: 's' });
      assert.equal(res.status, 422);
      assert.ok(res.body.errors.url);
    });

    test('the secret is stored sealed: neither responses nor the database row hold it', async () => {
      const secret = `whsec-${'x'.repeat(8)}-${Date.now()}`;
      const res = await a.api.post(`${API}/webhooks`, { url: rx.url(newPath()), events: ['transaction.success.v1'], secret });
      assert.equal(res.status, 200);
      assert.ok(!res.text.includes(secret));
      const row = await t.runtime.store.db.selectFrom('webhooks').selectAll().where('id', '=', res.body.webhook.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(secret), 'the row does not hold the secret in clear');
      assert.equal(t.runtime.sealer.open(row.secretSealed), secret, 'but it can be opened for delivery');
      for (const url of [`${API}/webhooks/${res.body.webhook.id}`, `${API}/webhooks?perPage=500`, `${API}/webhooks/${res.body.webhook.id}/deliveries`]) {
        assert.ok(!(await a.api.get(url)).text.includes(secret), url);
      }
    });
  });

  describe(`webhooks URL policy outside the sandbox (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, { sandbox: false, allowPrivateUrls: false });
    });
    after(() => t.close());

    test('a URL on the approved domain that resolves to a loopback or private address → 422 on url', async () => {
      const m = await t.createMerchant({ physical: false });
      for (const url of ['http://localhost/hook', 'http://127.0.0.1/hook']) {
        const pos = await m.api.post(`${API}/management/point-of-sales`, { name: 'x', domain: new URL(url).hostname, webhookAuthentication: 'Bearer x' });
        assert.equal(pos.status, 200, pos.text);
        const res = await m.api.post(`${API}/webhooks`, { url, events: ['transaction.success.v1'], secret: 's' });
        assert.equal(res.status, 422, url);
        assert.match(res.body.errors.url[0], /^\[url\]: .*(loopback|private)/, url);
      }
      assert.equal((await m.api.get(`${API}/webhooks`)).body.total, 0);
    });
  });
}
