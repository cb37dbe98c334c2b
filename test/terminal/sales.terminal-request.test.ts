/**
 * INTERFACE §11.6 (and §11.2's reference rule on /sale): the terminal request options of POST
 * /sale are validated, stored with the sale and shown by the sandbox terminal; GET /terminals
 * filters by deviceId.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { abort, saleBody, waitForState } from './support.js';

const DEFAULTS = { suppressAppNotifications: false, switchBackTimeout: null, activityToResume: null, surcharge: null, dcc: null };

function expect422(res: TestResponse, field: string, rule: string) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  const messages: string[] = res.body.errors?.[field] ?? [];
  assert.ok(
    messages.some((msg) => msg.startsWith(`[${rule}]: `)),
    `${field} carries [${rule}]: ${res.text}`,
  );
}

for (const kind of await availableStores()) {
  describe(`terminal request of a sale and terminal filters (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let terminalId: string;

    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      terminalId = m.terminalIds[0]!;
    });
    after(() => t.close());

    /** POST /sale on `terminalId` with the given `terminal` options; waits until the terminal shows it. */
    async function saleWith(options: Record<string, unknown>, reference = 'till-1') {
      const { transaction } = saleBody(m, { terminalId });
      const res = await m.api.post(`${API}/sale`, { terminal: { id: terminalId, ...options }, transaction: { ...transaction, reference } });
      assert.equal(res.status, 200, res.text);
      return waitForState(m, res.body.transaction.id, ['PROCESSING']);
    }

    const status = async () => {
      const res = await t.client(null).get(`/sandbox/terminals/${terminalId}/status`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const page = async () => {
      const res = await t.client(null).get(`/sandbox/terminals/${terminalId}`);
      assert.equal(res.status, 200, res.text);
      return res.text;
    };

    test('every option is stored with the sale and shown by the sandbox terminal (status and page)', async () => {
      const options = {
        suppressAppNotifications: true,
        switchBackTimeout: 5000,
        activityToResume: 'com.example.pos/.CheckoutActivity',
        surcharge: true,
        dcc: false,
      };
      const tx = await saleWith(options);
      const shown = await status();
      assert.equal(shown.sale.transactionId, tx.id);
      assert.deepEqual(shown.sale.request, options);
      const html = await page();
      for (const text of [
        'App notifications</dt><dd>suppressed',
        'Switch back after</dt><dd>5000 ms',
        'Activity to resume</dt><dd>com.example.pos/.CheckoutActivity',
      ]) {
        assert.ok(html.includes(text), `the page shows "${text}"`);
      }
      assert.ok(html.includes('Surcharge</dt><dd>on'));
      assert.ok(html.includes('Currency conversion (DCC)</dt><dd>off'));
      assert.equal((await abort(m, tx.id)).status, 200);
    });

    test('without options: suppressAppNotifications false, the others null; the page says so', async () => {
      const tx = await saleWith({});
      assert.deepEqual((await status()).sale.request, DEFAULTS);
      const html = await page();
      assert.ok(html.includes('App notifications</dt><dd>shown'));
      assert.ok(html.includes('Switch back after</dt><dd>the app default'));
      assert.ok(html.includes('Activity to resume</dt><dd>none'));
      assert.ok(html.includes('Surcharge</dt><dd>the terminal&#39;s setting'));
      assert.equal((await abort(m, tx.id)).status, 200);
    });

    test('explicit nulls and the bounds are accepted: switchBackTimeout 0 and 2147483647, activityToResume of 255 characters', async () => {
      let tx = await saleWith({ switchBackTimeout: null, activityToResume: null, surcharge: null, dcc: null, suppressAppNotifications: false });
      assert.deepEqual((await status()).sale.request, DEFAULTS);
      assert.equal((await abort(m, tx.id)).status, 200);
      tx = await saleWith({ switchBackTimeout: 0, activityToResume: 'a'.repeat(255), dcc: true });
      assert.deepEqual((await status()).sale.request, { ...DEFAULTS, switchBackTimeout: 0, activityToResume: 'a'.repeat(255), dcc: true });
      assert.equal((await abort(m, tx.id)).status, 200);
      tx = await saleWith({ switchBackTimeout: 2_147_483_647 });
      assert.equal((await status()).sale.request.switchBackTimeout, 2_147_483_647);
      assert.equal((await abort(m, tx.id)).status, 200);
    });

    test('the page escapes activityToResume', async () => {
      const tx = await saleWith({ activityToResume: '<img src=x onerror=alert(1)>' });
      const html = await page();
      assert.ok(!html.includes('<img src=x'));
      assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
      assert.equal((await abort(m, tx.id)).status, 200);
    });

    test('invalid options → 422 on terminal.<option>, and nothing is created', async () => {
      const before = (await m.api.get(`${API}/transactions?terminalId=${terminalId}&perPage=500`)).body.items.length;
      const post = (options: Record<string, unknown>, transaction: Record<string, unknown> = {}) => {
        return m.api.post(`${API}/sale`, {
          terminal: { id: terminalId, ...options },
          transaction: { ...saleBody(m, { terminalId }).transaction, ...transaction },
        });
      };
      expect422(await post({ suppressAppNotifications: 'yes' }), 'terminal.suppressAppNotifications', 'boolean');
      expect422(await post({ suppressAppNotifications: null }), 'terminal.suppressAppNotifications', 'boolean');
      expect422(await post({ switchBackTimeout: -1 }), 'terminal.switchBackTimeout', 'min:0');
      expect422(await post({ switchBackTimeout: 1.5 }), 'terminal.switchBackTimeout', 'int');
      expect422(await post({ switchBackTimeout: '5000' }), 'terminal.switchBackTimeout', 'int');
      expect422(await post({ switchBackTimeout: 2_147_483_648 }), 'terminal.switchBackTimeout', 'max:2147483647');
      expect422(await post({ activityToResume: 'a'.repeat(256) }), 'terminal.activityToResume', 'max:255');
      expect422(await post({ activityToResume: 7 }), 'terminal.activityToResume', 'string');
      expect422(await post({ surcharge: 'true' }), 'terminal.surcharge', 'boolean');
      expect422(await post({ dcc: 1 }), 'terminal.dcc', 'boolean');
      // Several at once: each named.
      const many = await post({ surcharge: 0, dcc: 'no', switchBackTimeout: -5 });
      for (const field of ['terminal.surcharge', 'terminal.dcc', 'terminal.switchBackTimeout']) assert.ok(many.body.errors?.[field], `${field}: ${many.text}`);
      const after = (await m.api.get(`${API}/transactions?terminalId=${terminalId}&perPage=500`)).body.items.length;
      assert.equal(after, before, 'no transaction for a refused sale');
      assert.equal((await status()).sale, null, 'the terminal is free');
    });

    test('transaction.reference follows ^[A-Za-z0-9-]{1,36}$ (INTERFACE §11.2)', async () => {
      const post = (reference: unknown) => {
        return m.api.post(`${API}/sale`, { terminal: { id: terminalId }, transaction: { ...saleBody(m, { terminalId }).transaction, reference } });
      };
      for (const bad of ['till 1', 'till_1', 'kasse/1', 'å', '', 'a'.repeat(37)]) {
        const res = await post(bad);
        assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${res.text}`);
        assert.ok(res.body.errors?.['transaction.reference'], `${JSON.stringify(bad)}: ${res.text}`);
      }
      expect422(await post('till 1'), 'transaction.reference', 'regex');
      expect422(await post('a'.repeat(37)), 'transaction.reference', 'regex');
      const longest = 'A-9'.repeat(12);
      const tx = await saleWith({}, longest);
      assert.equal(tx.reference, longest);
      assert.equal((await abort(m, tx.id)).status, 200);
      const res = await post(null);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.reference, null);
      await waitForState(m, res.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, res.body.transaction.id)).status, 200);
    });

    test('GET /terminals filters by deviceId, alone or with pointOfSaleId; another merchant finds nothing', async () => {
      const all = (await m.api.get(`${API}/terminals`)).body;
      assert.equal(all.total, 2);
      const target = all.items.find((i: any) => i.terminal.id === terminalId).terminal;
      assert.ok(target.deviceId);
      const byDevice = await m.api.get(`${API}/terminals?deviceId=${target.deviceId}`);
      assert.equal(byDevice.status, 200, byDevice.text);
      assert.deepEqual(
        byDevice.body.items.map((i: any) => i.terminal.id),
        [terminalId],
      );
      assert.equal(byDevice.body.items[0].device.id, target.deviceId);
      const both = await m.api.get(`${API}/terminals?deviceId=${target.deviceId}&pointOfSaleId=${m.physicalPointOfSaleId}`);
      assert.deepEqual(
        both.body.items.map((i: any) => i.terminal.id),
        [terminalId],
      );
      const otherPos = await m.api.get(`${API}/terminals?deviceId=${target.deviceId}&pointOfSaleId=${m.onlinePointOfSaleId}`);
      assert.equal(otherPos.status, 200);
      assert.equal(otherPos.body.total, 0, 'the filters combine');
      const unknown = await m.api.get(`${API}/terminals?deviceId=00000000-0000-4000-8000-000000000000`);
      assert.equal(unknown.body.total, 0);
      assert.deepEqual(unknown.body.items, []);
      const bad = await m.api.get(`${API}/terminals?deviceId=not-a-uuid`);
      expect422(bad, 'deviceId', 'uuid');
      const stranger = await t.createMerchant();
      const foreign = await stranger.api.get(`${API}/terminals?deviceId=${target.deviceId}`);
      assert.equal(foreign.status, 200);
      assert.equal(foreign.body.total, 0, "never another merchant's terminal");
    });
  });
}
