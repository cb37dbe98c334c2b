import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { abort, card, CARDS, detail, sale, saleBody, sleep, startReceiver, tap, waitForState } from './support.js';

const UNPAID = ['PENDING', 'PROCESSING'];

function expectValidation(res: { status: number; body: any; text: string }, field: string, rule?: string) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.success, false);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
  const messages: string[] = res.body.errors?.[field] ?? [];
  assert.ok(messages.length > 0, `errors name ${field}: ${res.text}`);
  if (rule)
    assert.ok(
      messages.some((s) => s.startsWith(`[${rule}]`)),
      `rule ${rule} on ${field}: ${res.text}`,
    );
}

function expectError(res: { status: number; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'success']);
  assert.equal(res.body.success, false);
  assert.equal(res.body.errorCode, code);
  assert.ok(res.body.message.length > 0);
}

for (const kind of await availableStores()) {
  describe(`terminal sales, errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let fallback: string;
    let other: string;

    before(async () => {
      t = await startTestRuntime(kind);
      rx = await startReceiver();
      m = await t.createMerchant();
      [fallback, other] = m.terminalIds as [string, string];
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    async function waitingSale(o: Parameters<typeof sale>[1] = {}) {
      const res = await sale(m, o);
      assert.equal(res.status, 200, res.text);
      return waitForState(m, res.body.transaction.id, ['PROCESSING']);
    }

    async function physicalPointOfSale(terminals: number): Promise<{ id: string; terminalIds: string[] }> {
      const pos = await m.api.post(`${API}/management/point-of-sales`, {
        name: 'Kiosk',
        domain: 'localhost',
        webhookAuthentication: 'Bearer k',
        type: 'PHYSICAL',
      });
      assert.equal(pos.status, 200, pos.text);
      const terminalIds: string[] = [];
      for (let i = 0; i < terminals; i++) {
        const res = await m.api.post(`${API}/management/point-of-sales/${pos.body.pointOfSale.id}/terminals`, { name: `K${i}` });
        terminalIds.push(res.body.terminal.id);
      }
      return { id: pos.body.pointOfSale.id, terminalIds };
    }

    describe('request validation (422)', () => {
      test('an ONLINE point of sale → 422 on transaction.pointOfSaleId', async () => {
        expectValidation(await sale(m, { pointOfSaleId: m.onlinePointOfSaleId }), 'transaction.pointOfSaleId', 'in:PHYSICAL');
      });

      test('an Idempotency-Key reused with another body → 422 IDEMPOTENCY_KEY_REUSED in the error body (not a 500 from the response schema)', async () => {
        // A point of sale of its own: the sale keeps its terminal busy, which the other tests must not meet.
        const kiosk = await physicalPointOfSale(1);
        const first = await m.api.post(`${API}/sale`, saleBody(m, { pointOfSaleId: kiosk.id, amount: 1100 }), { idempotencyKey: 'sale-key-reused' });
        assert.equal(first.status, 200, first.text);
        const reused = await m.api.post(`${API}/sale`, saleBody(m, { pointOfSaleId: kiosk.id, amount: 1200 }), { idempotencyKey: 'sale-key-reused' });
        assert.equal(reused.status, 422, reused.text);
        assert.deepEqual(Object.keys(reused.body).sort(), ['errorCode', 'message', 'success']);
        assert.equal(reused.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
      });

      test('an unknown point of sale → 422 on transaction.pointOfSaleId', async () => {
        expectValidation(await sale(m, { pointOfSaleId: '00000000-0000-4000-8000-000000000000' }), 'transaction.pointOfSaleId');
      });

      test('terminal.id of another point of sale, unknown, or not a uuid → 422 on terminal.id', async () => {
        const kiosk = await physicalPointOfSale(1);
        expectValidation(await sale(m, { terminalId: kiosk.terminalIds[0] }), 'terminal.id', 'in:existing');
        expectValidation(await sale(m, { terminalId: '00000000-0000-4000-8000-000000000000' }), 'terminal.id', 'in:existing');
        expectValidation(await sale(m, { terminalId: 'till-1' }), 'terminal.id');
      });

      test('amount, currency and type are checked', async () => {
        const body = (patch: Record<string, unknown>) => {
          const b = saleBody(m) as { transaction: Record<string, unknown> };
          Object.assign(b.transaction, patch);
          return b;
        };
        expectValidation(await m.api.post(`${API}/sale`, body({ amount: 0 })), 'transaction.amount', 'min:1');
        expectValidation(await m.api.post(`${API}/sale`, body({ amount: 1000000000 })), 'transaction.amount', 'max:999999999');
        expectValidation(await m.api.post(`${API}/sale`, body({ amount: 10.5 })), 'transaction.amount', 'int');
        expectValidation(await m.api.post(`${API}/sale`, body({ currency: 'dkk' })), 'transaction.currency');
        expectValidation(await m.api.post(`${API}/sale`, body({ type: 'MOTO' })), 'transaction.type');
        expectValidation(await m.api.post(`${API}/sale`, { terminal: {} }), 'transaction', 'required');
      });

      test('a notificationUrl off the approved domain → 422 on transaction.notificationUrl', async () => {
        expectValidation(await sale(m, { notificationUrl: 'https://evil.example.com/cb' }), 'transaction.notificationUrl', 'url');
      });

      test('nothing was created by the refused requests', async () => {
        const list = await m.api.get(`${API}/transactions?pointOfSaleId=${m.onlinePointOfSaleId}`);
        assert.equal(list.body.items.length, 0);
      });
    });

    describe('early rejection (200 FAILED, no callback)', () => {
      test('a PHYSICAL point of sale without terminals → FAILED TERMINAL_NOT_CONFIGURED', async () => {
        const bare = await physicalPointOfSale(0);
        const url = rx.newUrl();
        const res = await sale(m, { pointOfSaleId: bare.id, notificationUrl: url });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.transaction.state, 'FAILED');
        assert.equal(res.body.transaction.errorCode, 'TERMINAL_NOT_CONFIGURED');
        assert.equal(res.body.transaction.terminalId, null);
        await sleep(500);
        assert.equal(rx.at(url).length, 0, 'no callback for an early rejection');
        expectError(await abort(m, res.body.transaction.id), 409, 'CONFLICT');
      });

      test('a busy terminal → FAILED TERMINAL_BUSY; the first sale is unaffected; no callback', async () => {
        const first = await waitingSale({ terminalId: other });
        const url = rx.newUrl();
        const second = await sale(m, { terminalId: other, notificationUrl: url });
        assert.equal(second.status, 200);
        assert.equal(second.body.transaction.state, 'FAILED');
        assert.equal(second.body.transaction.errorCode, 'TERMINAL_BUSY');
        assert.equal(second.body.transaction.terminalId, other);
        assert.equal((await detail(m, second.body.transaction.id)).operations.length, 0);
        await sleep(500);
        assert.equal(rx.at(url).length, 0);
        assert.equal((await detail(m, first.id)).transaction.state, 'PROCESSING');
        expectError(await abort(m, second.body.transaction.id), 409, 'CONFLICT');
        assert.equal((await abort(m, first.id)).status, 200);
      });

      test('concurrent sales on one terminal: exactly one takes it, every other one is TERMINAL_BUSY', async () => {
        const results = await Promise.all(Array.from({ length: 12 }, (_, i) => sale(m, { terminalId: fallback, amount: 100 + i })));
        assert.ok(
          results.every((r) => r.status === 200),
          results.map((r) => r.text).join('\n'),
        );
        const txs = results.map((r) => r.body.transaction);
        const taken = txs.filter((tx) => UNPAID.includes(tx.state));
        const busy = txs.filter((tx) => tx.errorCode === 'TERMINAL_BUSY');
        assert.equal(taken.length, 1, `one sale holds the terminal: ${JSON.stringify(txs.map((x) => x.state))}`);
        assert.equal(busy.length, 11);
        await waitForState(m, taken[0].id, ['PROCESSING']);
        assert.equal((await abort(m, taken[0].id)).status, 200);
      });
    });

    describe('abort refusals', () => {
      test('after the tap → 409; the sale stays SUCCESS', async () => {
        const waiting = await waitingSale();
        assert.equal((await tap(t, fallback, CARDS.VISA)).status, 200);
        expectError(await abort(m, waiting.id), 409, 'CONFLICT');
        assert.equal((await detail(m, waiting.id)).transaction.state, 'SUCCESS');
      });

      test('once final (aborted already) → 409', async () => {
        const waiting = await waitingSale();
        assert.equal((await abort(m, waiting.id)).status, 200);
        expectError(await abort(m, waiting.id), 409, 'CONFLICT');
      });

      test('a transaction that is not a card terminal one (MOTO) → 400; it is untouched', async () => {
        const moto = await m.api.post(`${API}/moto`, {
          transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency: 'DKK', instantCapture: 'OFF' },
          card: card(CARDS.VISA),
        });
        assert.equal(moto.status, 200, moto.text);
        expectError(await abort(m, moto.body.transaction.id), 400, 'BAD_REQUEST');
        assert.equal((await detail(m, moto.body.transaction.id)).transaction.state, 'SUCCESS');
      });

      test('an unknown transaction → 404', async () => {
        expectError(await abort(m, 'ZZZZZZZZZZZ'), 404, 'NOT_FOUND');
      });
    });

    describe('refund and void of a physical sale', () => {
      test('online refund, void and capture of a paid SALE are refused; nothing moves', async () => {
        const waiting = await waitingSale({ amount: 900 });
        assert.equal((await tap(t, fallback, CARDS.VISA)).status, 200);
        for (const action of ['refund', 'void', 'capture']) {
          const res = await m.api.post(`${API}/transactions/${waiting.id}/${action}`, { amount: 900 });
          assert.ok(res.status === 200 ? res.body.success === false : res.status >= 400 && res.status < 500, `${action}: ${res.text}`);
        }
        const d = await detail(m, waiting.id);
        assert.deepEqual([d.aggregates.captured, d.aggregates.refunded, d.aggregates.voided], [900, 0, 0]);
        assert.deepEqual(
          d.operations.map((o) => o.type),
          ['SALE'],
        );
      });
    });

    describe('the terminal device (sandbox tap)', () => {
      test('no sale waiting → 409; unknown terminal → 404', async () => {
        const kiosk = await physicalPointOfSale(1);
        expectError(await tap(t, kiosk.terminalIds[0]!, CARDS.VISA), 409, 'CONFLICT');
        expectError(await tap(t, '00000000-0000-4000-8000-000000000000', CARDS.VISA), 404, 'NOT_FOUND');
      });

      test('an invalid card number → 422 on card.number; the sale still waits for a card', async () => {
        const waiting = await waitingSale();
        const res = await t.operator.post(`/sandbox/v1/terminals/${fallback}/tap`, { card: card('4111111111111112') });
        expectValidation(res, 'card.number');
        assert.equal((await detail(m, waiting.id)).transaction.state, 'PROCESSING');
        assert.equal((await abort(m, waiting.id)).status, 200);
      });

      test('a tap racing an abort: exactly one wins', async () => {
        for (let round = 0; round < 4; round++) {
          const waiting = await waitingSale({ amount: 200 + round });
          const [tapped, aborted] = await Promise.all([tap(t, fallback, CARDS.VISA), abort(m, waiting.id)]);
          const final = await waitForState(m, waiting.id, ['SUCCESS', 'FAILED']);
          if (aborted.status === 200) {
            assert.equal(tapped.status, 409, tapped.text);
            assert.equal(final.errorCode, 'MANUAL_ABORTED');
            assert.equal((await detail(m, waiting.id)).operations.length, 0);
          } else {
            assert.equal(aborted.status, 409, aborted.text);
            assert.equal(tapped.status, 200, tapped.text);
            assert.equal(final.state, 'SUCCESS');
          }
        }
      });
    });
  });

  describe(`terminal sales before dispatch (${kind}, no workers)`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('abort and tap before the sale reached the terminal → 409; once dispatched, abort works', async () => {
      const res = await sale(m);
      const id = res.body.transaction.id;
      expectError(await abort(m, id), 409, 'CONFLICT');
      expectError(await tap(t, m.terminalIds[0]!, CARDS.VISA), 409, 'CONFLICT');
      assert.equal((await detail(m, id)).transaction.state, 'PENDING');
      await t.runtime.runner.drain();
      assert.equal((await detail(m, id)).transaction.state, 'PROCESSING');
      assert.equal((await abort(m, id)).status, 200);
    });
  });
}
