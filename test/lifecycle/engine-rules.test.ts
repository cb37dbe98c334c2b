/**
 * The payment engine's rules (src/modules/transactions/engine-rules.ts), one question at a time:
 * what an answer does to the aggregates, what it starts, which events and whether a callback.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callbackDue, combined, eventsOf, followUpOf, reservationDelta, settlementDelta } from '../../src/modules/transactions/engine-rules.js';
import { OPERATION_TYPES, type Operation, type Transaction } from '../../src/modules/transactions/transaction.js';

const tx = (over: Partial<Transaction> = {}): Transaction =>
  ({
    id: 'T1',
    accountId: 'a',
    pointOfSaleId: 'p',
    state: 'SUCCESS',
    flow: 'MOTO',
    type: 'MOTO',
    amount: 1000,
    currency: 'DKK',
    instantCapture: 'OFF',
    notificationUrl: 'https://shop.example/cb',
    authorizedAmount: 1000,
    capturedAmount: 0,
    refundedAmount: 0,
    voidedAmount: 0,
    paidOutAmount: 0,
    pendingAmount: 0,
    ...over,
  }) as Transaction;

const op = (over: Partial<Operation> = {}): Operation => ({
  id: 'O1',
  accountId: 'a',
  transactionId: 'T1',
  pointOfSaleId: 'p',
  type: 'CAPTURE',
  state: 'SUCCESS',
  amount: 400,
  referenceOperationId: null,
  errorCode: null,
  externalStatusCodes: null,
  acquirerReference: null,
  chain: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  finalizedAt: '2026-01-01T00:00:01.000Z',
  ...over,
});

describe('engine rules', () => {
  test('every operation type has a settlement; a reservation always ends, money moves only when approved', () => {
    for (const type of OPERATION_TYPES) {
      const approved = settlementDelta(type, 400, true);
      const declined = settlementDelta(type, 400, false);
      const reserved = reservationDelta(type, 400);
      // What was reserved is given back either way.
      assert.equal((approved.pending ?? 0) + (reserved.pending ?? 0), 0, `${type} approved ends its reservation`);
      assert.equal((declined.pending ?? 0) + (reserved.pending ?? 0), 0, `${type} declined ends its reservation`);
      assert.equal((declined.pendingRefund ?? 0) + (reserved.pendingRefund ?? 0), 0, `${type} refund reservation`);
      for (const key of ['authorized', 'captured', 'voided', 'refunded', 'paidOut'] as const)
        assert.equal(declined[key] ?? 0, 0, `${type} declined moves no ${key}`);
    }
    assert.deepEqual(settlementDelta('CAPTURE', 400, true), { pending: -400, captured: 400 });
    assert.deepEqual(settlementDelta('REFUND', 50, true), { pendingRefund: -50, refunded: 50 });
    assert.deepEqual(settlementDelta('SALE', 70, true), { authorized: 70, captured: 70 });
    assert.deepEqual(combined({ authorized: 1000 }, { pending: 1000 }), { authorized: 1000, pending: 1000 });
  });

  test('follow-ups: instant capture after an approved authorization, its void when declined (VOID mode), the rest after a capture with voidRemaining', () => {
    const auth = op({ type: 'AUTHORIZATION', amount: 1000 });
    assert.deepEqual(followUpOf(tx({ instantCapture: 'VOID' }), auth, true), { type: 'CAPTURE', amount: 1000, chain: 'INSTANT_CAPTURE' });
    assert.deepEqual(followUpOf(tx({ instantCapture: 'NO_VOID' }), auth, true), { type: 'CAPTURE', amount: 1000, chain: 'INSTANT_CAPTURE' });
    assert.equal(followUpOf(tx({ instantCapture: 'OFF' }), auth, true), null);
    assert.equal(followUpOf(tx({ instantCapture: 'VOID' }), auth, false), null, 'a declined authorization starts nothing');
    const instant = op({ chain: 'INSTANT_CAPTURE' });
    assert.deepEqual(followUpOf(tx({ instantCapture: 'VOID' }), instant, false), { type: 'VOID', amount: 'REST', chain: 'INSTANT_CAPTURE' });
    assert.equal(followUpOf(tx({ instantCapture: 'NO_VOID' }), instant, false), null, 'NO_VOID leaves the authorization');
    assert.equal(followUpOf(tx({ instantCapture: 'VOID' }), instant, true), null);
    assert.deepEqual(followUpOf(tx(), op({ chain: 'VOID_REMAINING' }), true), { type: 'VOID', amount: 'REST', chain: null });
    assert.equal(followUpOf(tx(), op({ chain: 'VOID_REMAINING' }), false), null, 'a declined capture voids nothing');
    assert.equal(followUpOf(tx({ instantCapture: 'VOID' }), op({ chain: null }), false), null, "a merchant's declined capture voids nothing");
  });

  test('events: the operation type’s success event, and the final state’s once', () => {
    const names = (t: Transaction, o: Operation, final: boolean) => eventsOf(t, o, final).map((e) => e.name);
    assert.deepEqual(names(tx(), op({ type: 'AUTHORIZATION' }), true), ['transaction.success.v1']);
    assert.deepEqual(names(tx({ state: 'FAILED' }), op({ type: 'AUTHORIZATION', state: 'FAILED' }), true), ['transaction.failed.v1']);
    assert.deepEqual(names(tx(), op({ type: 'CAPTURE' }), false), ['transaction.captured.v1']);
    assert.deepEqual(names(tx(), op({ type: 'REFUND' }), false), ['transaction.refunded.v1']);
    assert.deepEqual(names(tx(), op({ type: 'VOID' }), false), ['transaction.voided.v1']);
    assert.deepEqual(names(tx(), op({ type: 'RENEW' }), false), ['transaction.renewed.v1']);
    assert.deepEqual(names(tx(), op({ type: 'CAPTURE', state: 'FAILED' }), false), [], 'a declined capture is no event');
    const [captured] = eventsOf(tx({ capturedAmount: 400 }), op(), false);
    assert.deepEqual((captured!.payload as { aggregates: { captured: number } }).aggregates.captured, 400, 'the event carries the aggregates after the answer');
  });

  test('callback: once the transaction is final and nothing it started is in flight', () => {
    assert.equal(callbackDue(tx(), op({ type: 'AUTHORIZATION' }), true, false), true);
    assert.equal(callbackDue(tx(), op({ type: 'AUTHORIZATION' }), true, true), false, 'the instant capture is still to come');
    assert.equal(callbackDue(tx(), op({ chain: 'INSTANT_CAPTURE' }), false, false), true, 'the instant-capture chain ended');
    assert.equal(callbackDue(tx(), op({ chain: null }), false, false), false, "a merchant's capture sends no callback");
    assert.equal(callbackDue(tx({ notificationUrl: null }), op({ type: 'AUTHORIZATION' }), true, false), false);
    assert.equal(callbackDue(tx({ state: 'PROCESSING' }), op({ type: 'AUTHORIZATION' }), false, false), false);
  });
});
