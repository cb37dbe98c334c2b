import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LIFECYCLE_ACTIONS, LIFECYCLE_RULES, LIFECYCLE_STATES, type LifecycleAction, type LifecycleState } from '../../src/modules/operations/lifecycle.js';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { capture, detail, eventually, ok, refund, refusedWith, renew, seedAuthorized, type SeedOptions, stored, voidTx } from './fixtures.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const kind of await availableStores()) {
  describe(`lifecycle refusals and failures (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const acquirer = new ScriptedAcquirer();
    before(async () => {
      t = await startTestRuntime(kind, {}, { acquirer });
      m = await t.createMerchant();
    });
    after(() => t.close());

    /** A transaction in each lifecycle state, built through the API where an operation leads there. */
    async function inState(state: LifecycleState): Promise<string> {
      const klarna: SeedOptions = { paymentMethodType: 'KLARNA' }; // so that renew reaches the table
      switch (state) {
        case 'PENDING':
          return (await seedAuthorized(t, m, { ...klarna, state: 'PROCESSING' })).id;
        case 'FAILED':
          return (await seedAuthorized(t, m, { ...klarna, state: 'FAILED' })).id;
        case 'AUTHORIZED':
          return (await seedAuthorized(t, m, klarna)).id;
        case 'PARTIALLY_CAPTURED': {
          const tx = await seedAuthorized(t, m, klarna);
          ok(await capture(m, tx.id, 400));
          return tx.id;
        }
        case 'CAPTURED': {
          const tx = await seedAuthorized(t, m, klarna);
          ok(await capture(m, tx.id, 1000));
          return tx.id;
        }
        case 'VOIDED': {
          const tx = await seedAuthorized(t, m, klarna);
          ok(await voidTx(m, tx.id, -1));
          return tx.id;
        }
        case 'SALE':
          return (await seedAuthorized(t, m, { ...klarna, flow: 'SALE' })).id;
        case 'PAYOUT':
          return (await seedAuthorized(t, m, { ...klarna, flow: 'PAYOUT', type: 'PAYOUT' })).id;
      }
    }

    const attempt = (action: LifecycleAction, id: string): Promise<TestResponse> => {
      switch (action) {
        case 'CAPTURE':
          return capture(m, id, 100);
        case 'REFUND':
          return refund(m, id, 100);
        case 'VOID':
          return voidTx(m, id, 100);
        case 'RENEW':
          return renew(m, id);
      }
    };

    // Every cell of the table, through the API: refused cells change nothing, allowed cells succeed.
    for (const state of LIFECYCLE_STATES) {
      for (const action of LIFECYCLE_ACTIONS) {
        const rule = LIFECYCLE_RULES[state][action];
        test(`${state} × ${action} → ${rule}`, async () => {
          const id = await inState(state);
          const before = await detail(m, id);
          const res = await attempt(action, id);
          const after = await detail(m, id);
          if (rule === 'ALLOWED') {
            const body = ok(res, `${action} in ${state}`);
            assert.ok(body.operationId ?? body.operations?.[0]?.operationId);
            return;
          }
          const body = refusedWith(res, rule, `${action} in ${state}`);
          const error = body.errorCode ?? body.operations[0].errorCode;
          if (rule === 'INVALID_STATE') {
            assert.match(error.message, new RegExp(`${action.toLowerCase()} .*state ${state}`), 'the refusal names the action and the state');
          }
          assert.deepEqual(after.aggregates, before.aggregates, 'a refusal moves nothing');
          assert.equal(after.operations.length, before.operations.length, 'a refusal records nothing');
        });
      }
    }

    test('renew of a CARD authorization → NOT_SUPPORTED_FOR_PAYMENT_METHOD, whatever its balance', async () => {
      const tx = await seedAuthorized(t, m, { amount: 900 });
      const body = refusedWith(await renew(m, tx.id), 'NOT_SUPPORTED_FOR_PAYMENT_METHOD');
      assert.match(body.errorCode.message, /KLARNA and VIABILL/);
      assert.equal(body.operationId, null);
      assert.equal((await detail(m, tx.id)).operations.length, 1);
    });

    test('refund of an uncaptured authorization → INVALID_STATE in a RefundResponse (one entry, operationId null)', async () => {
      const tx = await seedAuthorized(t, m, { amount: 500 });
      const body = refusedWith(await refund(m, tx.id, 500), 'INVALID_STATE');
      assert.deepEqual(Object.keys(body).sort(), ['operations', 'success']);
      assert.equal(body.operations.length, 1);
      assert.equal(body.operations[0].operationId, null);
      assert.equal(body.operations[0].success, false);
    });

    test('a declined capture records a FAILED operation, captures nothing and releases its reservation', async () => {
      const tx = await seedAuthorized(t, m, { amount: 800 });
      acquirer.script(tx.id, 'capture', ['decline']);
      const body = refusedWith(await capture(m, tx.id, 800), 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.match(body.operationId, UUID);
      assert.equal(body.state, 'FAILED');
      const d = await detail(m, tx.id);
      const op = d.operations.find((o) => o.id === body.operationId)!;
      assert.deepEqual([op.type, op.state, op.amount, op.errorCode], ['CAPTURE', 'FAILED', 800, 'DECLINED_BY_ISSUER_OR_SCHEME']);
      assert.equal(d.aggregates.captured, 0);
      assert.equal(d.aggregates.remaining, 800);
      assert.equal((await stored(t, tx.id)).pending, 0);
      ok(await capture(m, tx.id, 800), 'the authorization is still whole after the decline');
    });

    test('a timeout is not a decline: the capture stays PROCESSING holding its amount, and the resolver finishes it', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      acquirer.script(tx.id, 'capture', ['timeout']);
      const body = refusedWith(await capture(m, tx.id, 300), 'ACQUIRER_TIMEOUT');
      assert.match(body.operationId, UUID);
      assert.equal(body.state, 'PROCESSING');
      assert.equal((await stored(t, tx.id)).pending, 300, 'the reservation is held while the outcome is unknown');
      refusedWith(await capture(m, tx.id, 701), 'AMOUNT_EXCEEDS_REMAINING', 'the held 300 is not available');
      assert.equal((await detail(m, tx.id)).aggregates.captured, 0);

      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 31 });
      await eventually(async () => ((await stored(t, tx.id)).pending === 0 ? true : null), 'the resolver');
      const d = await detail(m, tx.id);
      assert.equal(d.operations.find((o) => o.id === body.operationId)!.state, 'SUCCESS');
      assert.equal(d.aggregates.captured, 300);
      assert.deepEqual(
        acquirer.callsOf(tx.id, 'capture').map((c) => [c.operationId, c.attempt]),
        [
          [body.operationId, 1],
          [body.operationId, 2],
        ],
      );
    });

    test('an acquirer error (exception) is an unknown outcome too; a later decline releases the reservation', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000, paymentMethodType: 'KLARNA' });
      acquirer.script(tx.id, 'void', ['throw', 'decline']);
      const body = refusedWith(await voidTx(m, tx.id, -1), 'ACQUIRER_TIMEOUT');
      assert.equal((await stored(t, tx.id)).pending, 1000);
      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 31 });
      await eventually(async () => ((await stored(t, tx.id)).pending === 0 ? true : null), 'the resolver');
      const d = await detail(m, tx.id);
      assert.equal(d.operations.find((o) => o.id === body.operationId)!.state, 'FAILED');
      assert.equal(d.aggregates.voided, 0);
      assert.equal(d.aggregates.remaining, 1000);
    });

    test('a refund across two captures where the older capture is declined → success:false with both results', async () => {
      const tx = await seedAuthorized(t, m, { amount: 1000 });
      ok(await capture(m, tx.id, 400));
      ok(await capture(m, tx.id, 600));
      acquirer.script(tx.id, 'refund', ['approve', 'decline']);
      const res = await refund(m, tx.id, 1000);
      assert.equal(res.status, 200);
      assert.equal(res.body.success, false);
      assert.deepEqual(
        res.body.operations.map((o: { success: boolean; state: string }) => [o.success, o.state]),
        [
          [true, 'SUCCESS'],
          [false, 'FAILED'],
        ],
      );
      assert.equal(res.body.operations[1].errorCode.code, 'DECLINED_BY_ISSUER_OR_SCHEME');
      const d = await detail(m, tx.id);
      assert.equal(d.aggregates.refunded, 600);
      assert.equal((await stored(t, tx.id)).pendingRefund, 0);
      const again = ok(await refund(m, tx.id, 400), 'the declined capture can be refunded again');
      assert.equal(again.operations.length, 1);
    });

    test('an instant capture in flight holds its reservation: lifecycle captures and voids cannot take the same money', async () => {
      acquirer.scriptAny('capture', ['timeout']);
      const res = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'instant-in-flight', instantCapture: 'NO_VOID' },
        card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
      });
      assert.equal(res.status, 200, res.text);
      const id = res.body.transaction.id as string;
      const instant = (await detail(m, id)).operations.find((o: { type: string }) => o.type === 'CAPTURE');
      assert.equal(instant?.state, 'PROCESSING', 'the instant capture timed out');
      assert.equal((await stored(t, id)).pending, 1000, 'the instant capture reserves what it captures');
      refusedWith(await capture(m, id, 100), 'AMOUNT_EXCEEDS_REMAINING');
      refusedWith(await voidTx(m, id, -1), 'AMOUNT_EXCEEDS_REMAINING');
      // The drive job asks again (the safety net is due 5 s after the request) and settles the reservation.
      await t.operator.post('/sandbox/v1/clock', { advanceSeconds: 6 });
      const settled = await eventually(async () => {
        const a = await stored(t, id);
        return a.pending === 0 ? a : null;
      }, 'the drive job to finish the instant capture');
      assert.equal(settled.captured, 1000);
    });

    test('bad bodies → 422 with [rule]: text, nothing recorded', async () => {
      const tx = await seedAuthorized(t, m, { amount: 300 });
      const cases: Array<[string, unknown, string]> = [
        ['capture', {}, 'required'],
        ['capture', { amount: -5 }, 'min:1'],
        ['capture', { amount: 0 }, 'min:1'],
        ['capture', { amount: 1.5 }, 'int'],
        ['capture', { amount: 'ten' }, 'int'],
        ['capture', { amount: 1_000_000_000 }, 'max:999999999'],
        ['capture', { amount: 100, voidRemaining: 'yes' }, 'boolean'],
        ['refund', {}, 'required'],
        ['refund', { amount: 0 }, 'min:1'],
        ['void', {}, 'required'],
        ['void', { amount: 0 }, 'min:1'],
        ['void', { amount: -2 }, 'min:-1'],
      ];
      for (const [action, body, rule] of cases) {
        const res = await m.api.post(`${API}/transactions/${tx.id}/${action}`, body);
        assert.equal(res.status, 422, `${action} ${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
        const field = action === 'capture' && rule === 'boolean' ? 'voidRemaining' : 'amount';
        assert.ok(
          res.body.errors[field]?.some((msg: string) => msg.startsWith(`[${rule}]: `)),
          `${action} ${JSON.stringify(body)}: ${res.text}`,
        );
      }
      const d = await detail(m, tx.id);
      assert.equal(d.operations.length, 1);
      assert.equal(d.aggregates.captured, 0);
    });
  });

  describe(`lifecycle on the sandbox simulator (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());

    test('card 4000000000000259: authorization approved, every capture declined DECLINED_BY_ISSUER_OR_SCHEME', async () => {
      const tx = await seedAuthorized(t, m, { amount: 800, card: '4000000000000259' });
      const body = refusedWith(await capture(m, tx.id, 800), 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.match(body.operationId, UUID);
      const d = await detail(m, tx.id);
      assert.equal(d.aggregates.captured, 0);
      assert.equal(d.aggregates.remaining, 800);
      ok(await voidTx(m, tx.id, -1), 'the authorization can still be voided');
    });

    test('card 4111111111111111 and a KLARNA wallet: capture, refund and renew approved', async () => {
      const tx = await seedAuthorized(t, m, { amount: 800, card: '4111111111111111' });
      ok(await capture(m, tx.id, 800));
      ok(await refund(m, tx.id, 800));
      const klarna = await seedAuthorized(t, m, { amount: 800, paymentMethodType: 'KLARNA' });
      assert.equal(ok(await renew(m, klarna.id)).state, 'SUCCESS');
    });
  });
}
