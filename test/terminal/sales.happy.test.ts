import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { abort, advanceClock, CARDS, detail, sale, sleep, startReceiver, tap, waitFor, waitForState } from './support.js';

for (const kind of await availableStores()) {
  describe(`terminal sales, happy paths (${kind})`, () => {
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

    /** A sale that has reached its terminal (PROCESSING: waiting for the card). */
    async function waitingSale(o: Parameters<typeof sale>[1] = {}) {
      const res = await sale(m, o);
      assert.equal(res.status, 200, res.text);
      return waitForState(m, res.body.transaction.id, ['PROCESSING']);
    }

    test('a sale without terminal goes to the fallback terminal, PENDING, type PAYMENT; it then reaches the terminal', async () => {
      const url = rx.newUrl();
      const res = await sale(m, { amount: 3300, notificationUrl: url, customerId: 'cust-7' });
      assert.equal(res.status, 200, res.text);
      const tx = res.body.transaction;
      assert.match(tx.id, /^[0-9A-HJKMNP-TV-Z]{11}$/);
      assert.equal(tx.terminalId, fallback);
      assert.equal(tx.pointOfSaleId, m.physicalPointOfSaleId);
      assert.equal(tx.type, 'PAYMENT');
      assert.equal(tx.state, 'PENDING');
      assert.equal(tx.amount, 3300);
      assert.equal(tx.customerId, 'cust-7');
      assert.equal(tx.errorCode, null);
      await waitForState(m, tx.id, ['PROCESSING']);
      assert.equal((await abort(m, tx.id)).status, 200);
    });

    test('terminal.id routes the sale to that terminal', async () => {
      const res = await sale(m, { terminalId: other });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.transaction.terminalId, other);
      await waitForState(m, res.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, res.body.transaction.id)).status, 200);
    });

    test('tap an approved card: SUCCESS, one SALE operation captured at once, the card stored, one callback', async () => {
      const url = rx.newUrl();
      const waiting = await waitingSale({ amount: 3300, notificationUrl: url, customerId: 'cust-1' });
      await sleep(100);
      assert.equal(rx.at(url).length, 0, 'no callback before the tap');

      const tapped = await tap(t, fallback, CARDS.VISA);
      assert.equal(tapped.status, 200, tapped.text);
      assert.equal(tapped.body.transaction.id, waiting.id);
      assert.equal(tapped.body.transaction.state, 'SUCCESS');
      assert.ok(!tapped.text.includes(CARDS.VISA), 'no card number in the tap response');

      const d = await detail(m, waiting.id);
      assert.equal(d.transaction.state, 'SUCCESS');
      assert.equal(d.transaction.paymentMethodType, 'CARD');
      assert.equal(d.transaction.paymentMethodSubType, 'Visa');
      assert.equal(d.transaction.errorCode, null);
      const sales = d.operations.filter((o) => o.type === 'SALE');
      assert.equal(d.operations.length, 1);
      assert.equal(sales.length, 1);
      assert.equal(sales[0].state, 'SUCCESS');
      assert.equal(sales[0].amount, 3300);
      assert.deepEqual(
        { authorized: d.aggregates.authorized, captured: d.aggregates.captured, remaining: d.aggregates.remaining, refunded: d.aggregates.refunded },
        { authorized: 3300, captured: 3300, remaining: 0, refunded: 0 },
      );

      const pm = await m.api.get(`${API}/payment-methods/${d.transaction.paymentMethodId}`);
      assert.equal(pm.status, 200, pm.text);
      assert.equal(pm.body.paymentMethod.customerId, 'cust-1');
      assert.equal(pm.body.paymentMethod.displayText, '41111111XXXX1111');

      const hit = await waitFor(async () => rx.at(url)[0], 'the sale callback');
      assert.match(String(hit.headers.authorization), /^Bearer cb-/);
      assert.equal(hit.body.transaction.id, waiting.id);
      assert.equal(hit.body.transaction.state, 'SUCCESS');
      assert.equal(hit.body.card.pan, '41111111XXXX1111');
      assert.ok(!JSON.stringify(hit.body).includes(CARDS.VISA));
      await sleep(300);
      assert.equal(rx.at(url).length, 1, 'exactly one callback');
    });

    test('a declined card: FAILED with the decline code, a FAILED SALE operation, and a callback', async () => {
      const url = rx.newUrl();
      const waiting = await waitingSale({ notificationUrl: url });
      const tapped = await tap(t, fallback, CARDS.DECLINED);
      assert.equal(tapped.status, 200, tapped.text);
      const final = await waitForState(m, waiting.id, ['FAILED']);
      assert.equal(final.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      const d = await detail(m, waiting.id);
      assert.equal(d.operations[0].type, 'SALE');
      assert.equal(d.operations[0].state, 'FAILED');
      assert.equal(d.aggregates.captured, 0);
      const hit = await waitFor(async () => rx.at(url)[0], 'the callback');
      assert.equal(hit.body.transaction.state, 'FAILED');
      assert.equal(hit.body.transaction.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
    });

    test('type PAYOUT: funds go to the tapped card with a PAYOUT operation', async () => {
      const waiting = await waitingSale({ type: 'PAYOUT', amount: 1200 });
      assert.equal(waiting.type, 'PAYOUT');
      assert.equal((await tap(t, fallback, CARDS.MASTERCARD)).status, 200);
      const final = await waitForState(m, waiting.id, ['SUCCESS']);
      assert.equal(final.type, 'PAYOUT');
      assert.equal(final.paymentMethodSubType, 'Mastercard');
      const d = await detail(m, waiting.id);
      assert.deepEqual(
        d.operations.map((o) => [o.type, o.state, o.amount]),
        [['PAYOUT', 'SUCCESS', 1200]],
      );
      assert.equal(d.aggregates.paidOut, 1200);
      assert.equal(d.aggregates.captured, 0);
    });

    test('abort while the terminal waits: 200 with an empty body, FAILED MANUAL_ABORTED, one callback, the terminal free again', async () => {
      const url = rx.newUrl();
      const waiting = await waitingSale({ notificationUrl: url });
      const res = await abort(m, waiting.id);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.text, '');
      const final = (await detail(m, waiting.id)).transaction;
      assert.equal(final.state, 'FAILED');
      assert.equal(final.errorCode, 'MANUAL_ABORTED');
      const hit = await waitFor(async () => rx.at(url)[0], 'the abort callback');
      assert.equal(hit.body.transaction.errorCode, 'MANUAL_ABORTED');
      await sleep(300);
      assert.equal(rx.at(url).length, 1);

      const next = await sale(m);
      assert.equal(next.body.transaction.state, 'PENDING', 'the terminal takes a new sale');
      await waitForState(m, next.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, next.body.transaction.id)).status, 200);
    });

    test('abort with an Idempotency-Key replays the empty 200', async () => {
      const waiting = await waitingSale();
      const key = `abort-${waiting.id}`;
      const first = await abort(m, waiting.id, key);
      const again = await abort(m, waiting.id, key);
      assert.equal(first.status, 200);
      assert.equal(again.status, 200);
      assert.equal(again.text, '');
      assert.equal(again.headers['idempotent-replayed'], 'true');
    });

    test('a sale not tapped within 2 minutes of service time ends FAILED EXPIRED with a callback', async () => {
      const url = rx.newUrl();
      const waiting = await waitingSale({ notificationUrl: url, terminalId: other });
      await advanceClock(t, 60);
      await sleep(200);
      assert.equal((await detail(m, waiting.id)).transaction.state, 'PROCESSING', 'still waiting after one minute');
      await advanceClock(t, 61);
      const final = await waitForState(m, waiting.id, ['FAILED']);
      assert.equal(final.errorCode, 'EXPIRED');
      const hit = await waitFor(async () => rx.at(url)[0], 'the expiry callback');
      assert.equal(hit.body.transaction.errorCode, 'EXPIRED');
      const late = await tap(t, other, CARDS.VISA);
      assert.equal(late.status, 409, 'an expired sale takes no card');
    });

    test('POST /sale with an Idempotency-Key creates one transaction', async () => {
      const key = `sale-${Date.now()}`;
      const first = await sale(m, { amount: 700 }, key);
      const again = await sale(m, { amount: 700 }, key);
      assert.equal(first.status, 200);
      assert.equal(again.status, 200);
      assert.equal(again.body.transaction.id, first.body.transaction.id);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const list = await m.api.get(`${API}/transactions?terminalId=${fallback}&amount=700&amountMode=EQUAL`);
      assert.equal(list.body.items.length, 1);
      await waitForState(m, first.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, first.body.transaction.id)).status, 200);
    });

    test('an acquirer timeout on the tap is not a decline: the sale stays PROCESSING (terminal busy) until the retry approves it', async () => {
      const waiting = await waitingSale({ amount: 4100 });
      const tapped = await tap(t, fallback, CARDS.TIMEOUT_THEN_APPROVED);
      assert.equal(tapped.status, 200, tapped.text);
      assert.equal(tapped.body.transaction.state, 'PROCESSING');
      const busy = await sale(m);
      assert.equal(busy.body.transaction.errorCode, 'TERMINAL_BUSY', 'the terminal stays taken while the outcome is unknown');
      await advanceClock(t, 5);
      const final = await waitForState(m, waiting.id, ['SUCCESS'], 15_000);
      assert.equal(final.state, 'SUCCESS');
      assert.equal((await detail(m, waiting.id)).aggregates.captured, 4100);
      const free = await sale(m);
      assert.equal(free.body.transaction.state, 'PENDING');
      await waitForState(m, free.body.transaction.id, ['PROCESSING']);
      assert.equal((await abort(m, free.body.transaction.id)).status, 200);
    });

    test('the virtual terminal page shows the waiting amount; its buttons pay with a test card', async () => {
      const waiting = await waitingSale({ amount: 12345, terminalId: other });
      const page = await t.client(null).get(`/sandbox/terminals/${other}`);
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /text\/html/);
      assert.ok(page.text.includes('DKK 123.45'), 'the amount');
      assert.ok(page.text.includes('role="status"'));
      assert.ok(page.text.includes('data-card="VISA"'));
      assert.ok(!page.text.includes(CARDS.VISA), 'the page carries no card number');

      const status = await t.client(null).get(`/sandbox/terminals/${other}/status`);
      assert.equal(status.body.sale.transactionId, waiting.id);
      assert.equal(status.body.sale.stage, 'WAITING_FOR_CARD');

      const pressed = await t.client(null).post(`/sandbox/terminals/${other}/tap`, { card: 'VISA' });
      assert.equal(pressed.status, 200, pressed.text);
      assert.match(pressed.body.message, /approved/);
      assert.equal((await detail(m, waiting.id)).transaction.state, 'SUCCESS');
      const idle = await t.client(null).get(`/sandbox/terminals/${other}/status`);
      assert.equal(idle.body.sale, null);
    });
  });
}
