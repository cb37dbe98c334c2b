import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { abort, card, CARDS, detail, sale, saleBody, tap, waitForState } from './support.js';

for (const kind of await availableStores()) {
  describe(`terminal sales, security (${kind})`, () => {
    let t: TestRuntime;
    let a: TestMerchant;
    let b: TestMerchant;

    before(async () => {
      t = await startTestRuntime(kind);
      a = await t.createMerchant();
      b = await t.createMerchant();
    });
    after(() => t.close());

    test('POST /sale and abort need a merchant credential: none → 401, the operator key → 403', async () => {
      const body = saleBody(a);
      assert.equal((await t.client(null).post(`${API}/sale`, body)).status, 401);
      assert.equal((await t.operator.post(`${API}/sale`, body)).status, 403);
      const res = await sale(a);
      const id = res.body.transaction.id;
      assert.equal((await t.client(null).post(`${API}/transactions/${id}/abort`)).status, 401);
      assert.equal((await t.operator.post(`${API}/transactions/${id}/abort`)).status, 403);
      await waitForState(a, id, ['PROCESSING']);
      assert.equal((await abort(a, id)).status, 200);
    });

    test("another merchant's sale: abort → 404 and it keeps waiting; GET → 404", async () => {
      const res = await sale(a);
      const id = res.body.transaction.id;
      await waitForState(a, id, ['PROCESSING']);
      const foreign = await abort(b, id);
      assert.equal(foreign.status, 404, foreign.text);
      assert.equal(foreign.body.errorCode, 'NOT_FOUND');
      assert.equal((await b.api.get(`${API}/transactions/${id}`)).status, 404);
      assert.equal((await detail(a, id)).transaction.state, 'PROCESSING');
      assert.equal((await abort(a, id)).status, 200);
    });

    test("another merchant's point of sale or terminal → 422, never its data", async () => {
      const pos = await sale(b, { pointOfSaleId: a.physicalPointOfSaleId! });
      assert.equal(pos.status, 422);
      assert.ok(pos.body.errors['transaction.pointOfSaleId']);
      const terminal = await sale(b, { terminalId: a.terminalIds[0]! });
      assert.equal(terminal.status, 422);
      assert.ok(terminal.body.errors['terminal.id']);
      assert.ok(!terminal.text.includes(a.physicalPointOfSaleId!));
      const list = await a.api.get(`${API}/transactions?pointOfSaleId=${a.physicalPointOfSaleId}`);
      assert.ok(list.body.items.every((i: any) => i.transaction.pointOfSaleId === a.physicalPointOfSaleId));
    });

    test('busy is per terminal: a merchant holding its terminal does not block another merchant', async () => {
      const first = await sale(a);
      const other = await sale(b);
      assert.equal(other.body.transaction.state, 'PENDING');
      for (const [m, id] of [
        [a, first.body.transaction.id],
        [b, other.body.transaction.id],
      ] as const) {
        await waitForState(m, id, ['PROCESSING']);
        assert.equal((await abort(m, id)).status, 200);
      }
    });

    test('the sandbox tap needs the operator key: none → 401, a merchant token → 403', async () => {
      const body = { card: card(CARDS.VISA) };
      assert.equal((await t.client(null).post(`/sandbox/v1/terminals/${a.terminalIds[0]}/tap`, body)).status, 401);
      assert.equal((await a.api.post(`/sandbox/v1/terminals/${a.terminalIds[0]}/tap`, body)).status, 403);
    });

    test('no full card number in the tap response, the transaction or the stored payment method', async () => {
      const res = await sale(a, { amount: 990 });
      await waitForState(a, res.body.transaction.id, ['PROCESSING']);
      const tapped = await tap(t, a.terminalIds[0]!, CARDS.MASTERCARD);
      assert.equal(tapped.status, 200);
      const d = await a.api.get(`${API}/transactions/${res.body.transaction.id}`);
      const pm = await a.api.get(`${API}/payment-methods/${d.body.transaction.paymentMethodId}`);
      for (const text of [tapped.text, d.text, pm.text]) assert.ok(!text.includes(CARDS.MASTERCARD));
    });

    test('the virtual terminal page escapes what it shows; an unknown terminal is a 404 page', async () => {
      const pos = await a.api.post(`${API}/management/point-of-sales`, {
        name: 'Pop-up',
        domain: 'localhost',
        webhookAuthentication: 'Bearer p',
        type: 'PHYSICAL',
      });
      const created = await a.api.post(`${API}/management/point-of-sales/${pos.body.pointOfSale.id}/terminals`, { name: '<script>alert(1)</script>' });
      const page = await t.client(null).get(`/sandbox/terminals/${created.body.terminal.id}`);
      assert.equal(page.status, 200);
      assert.ok(!page.text.includes('<script>alert(1)</script>'));
      assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      const missing = await t.client(null).get('/sandbox/terminals/00000000-0000-4000-8000-000000000000');
      assert.equal(missing.status, 404);
      assert.match(String(missing.headers['content-type']), /text\/html/);
    });

    test('the page tap accepts test card names only, never a card number', async () => {
      const res = await t.client(null).post(`/sandbox/terminals/${a.terminalIds[0]}/tap`, { card: CARDS.VISA });
      assert.equal(res.status, 422, res.text);
    });
  });

  describe(`terminal sales without sandbox (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, { sandbox: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('the device controls and the virtual terminal do not exist; sales still do', async () => {
      const terminalId = m.terminalIds[0]!;
      assert.equal((await t.operator.post(`/sandbox/v1/terminals/${terminalId}/tap`, { card: card(CARDS.VISA) })).status, 404);
      assert.equal((await t.client(null).get(`/sandbox/terminals/${terminalId}`)).status, 404);
      assert.equal((await t.client(null).post(`/sandbox/terminals/${terminalId}/tap`, { card: 'VISA' })).status, 404);
      const res = await sale(m);
      assert.equal(res.status, 200, res.text);
      await waitForState(m, res.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, res.body.transaction.id)).status, 200);
    });
  });
}
