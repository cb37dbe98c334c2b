/**
 * The dashboard's derived payment status and the actions it offers (dashboard/src/payment-status.ts),
 * and its amounts in major units (dashboard/src/format.ts): pure functions, no browser.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { amountHint, inMajorUnits, major, money, parseAmount, plural } from '../../dashboard/src/format.js';
import { actionLimits, inFlightOf, paymentStatus, type AggregateFacts } from '../../dashboard/src/payment-status.js';

const agg = (a: Partial<AggregateFacts>): AggregateFacts => ({ authorized: 0, captured: 0, refunded: 0, voided: 0, paidOut: 0, ...a });
const ok = { state: 'SUCCESS', type: 'MOTO' };

describe('payment status (derived from state and aggregates)', () => {
  const cases: Array<[string, { state: string; type: string; terminalId?: string | null }, Partial<AggregateFacts>, string, string]> = [
    ['waiting for the customer', { state: 'PENDING', type: 'PAYMENT' }, {}, 'Pending', 'warning'],
    ['sent to the acquirer', { state: 'PROCESSING', type: 'PAYMENT' }, {}, 'Processing', 'warning'],
    ['declined', { state: 'FAILED', type: 'PAYMENT' }, {}, 'Failed', 'danger'],
    ['authorized only', ok, { authorized: 1000 }, 'Authorized', 'info'],
    ['part captured, rest open', ok, { authorized: 1000, captured: 400 }, 'Partially captured', 'info'],
    ['captured in full', ok, { authorized: 1000, captured: 1000 }, 'Captured', 'success'],
    ['captured in part, rest voided', ok, { authorized: 1000, captured: 400, voided: 600 }, 'Captured', 'success'],
    ['refunded in part', ok, { authorized: 1000, captured: 1000, refunded: 400 }, 'Partially refunded', 'warning'],
    ['refunded in full', ok, { authorized: 1000, captured: 1000, refunded: 1000 }, 'Refunded', 'neutral'],
    ['part captured and all of that refunded', ok, { authorized: 1000, captured: 400, voided: 600, refunded: 400 }, 'Refunded', 'neutral'],
    ['voided', ok, { authorized: 1000, voided: 1000 }, 'Voided', 'neutral'],
    ['voided in part', ok, { authorized: 1000, voided: 300 }, 'Authorized', 'info'],
    ['payout', { state: 'SUCCESS', type: 'PAYOUT' }, { paidOut: 500 }, 'Paid out', 'success'],
    ['card stored (amount 0)', { state: 'SUCCESS', type: 'PAYMENT' }, {}, 'Succeeded', 'success'],
    ['terminal sale', { state: 'SUCCESS', type: 'PAYMENT', terminalId: 'T' }, { authorized: 1000, captured: 1000 }, 'Captured', 'success'],
  ];
  for (const [what, tx, a, label, tone] of cases) {
    test(`${what}: ${label}`, () => {
      const s = paymentStatus(tx, agg(a));
      assert.equal(s.label, label);
      assert.equal(s.tone, tone);
    });
  }

  test('a fully refunded payment is never green', () => {
    assert.notEqual(paymentStatus(ok, agg({ authorized: 1000, captured: 1000, refunded: 1000 })).tone, 'success');
  });

  test('operations in flight are the note; pending and processing say what they wait for', () => {
    const s = paymentStatus(ok, agg({ authorized: 1000, captured: 1000 }), { capture: 0, void: 0, refund: 300 }, (n) => money(n, 'DKK'));
    assert.equal(s.label, 'Captured');
    assert.equal(s.note, 'refund of 3.00 DKK in progress');
    assert.match(paymentStatus({ state: 'PROCESSING', type: 'PAYMENT' }, agg({})).note!, /acquirer/);
    assert.equal(paymentStatus(ok, agg({ authorized: 1000 })).note, null);
  });

  test('in flight: the PROCESSING operations by kind', () => {
    assert.deepEqual(
      inFlightOf([
        { type: 'AUTHORIZATION', state: 'SUCCESS', amount: 1000 },
        { type: 'CAPTURE', state: 'PROCESSING', amount: 300 },
        { type: 'CAPTURE', state: 'FAILED', amount: 200 },
        { type: 'REFUND', state: 'PROCESSING', amount: 50 },
        { type: 'VOID', state: 'PROCESSING', amount: 100 },
      ]),
      { capture: 300, void: 100, refund: 50 },
    );
  });
});

describe('actions the state allows, and their most', () => {
  test('authorized: capture and void up to the authorization, no refund', () => {
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000 })), { capture: 1000, void: 1000, refund: 0, renew: false });
  });
  test('partly captured: the rest to capture or void, the captured part to refund', () => {
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000, captured: 400, refunded: 100 })), { capture: 600, void: 600, refund: 300, renew: false });
  });
  test('captured in full: refund only; refunded in full: nothing', () => {
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000, captured: 1000 })), { capture: 0, void: 0, refund: 1000, renew: false });
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000, captured: 1000, refunded: 1000 })), { capture: 0, void: 0, refund: 0, renew: false });
  });
  test('voided, failed, pending, payout, terminal sale: nothing', () => {
    const none = { capture: 0, void: 0, refund: 0, renew: false };
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000, voided: 1000 })), none);
    assert.deepEqual(actionLimits({ state: 'FAILED', type: 'PAYMENT' }, agg({})), none);
    assert.deepEqual(actionLimits({ state: 'PENDING', type: 'PAYMENT' }, agg({})), none);
    assert.deepEqual(actionLimits({ state: 'SUCCESS', type: 'PAYOUT' }, agg({ paidOut: 500 })), none);
    assert.deepEqual(actionLimits({ state: 'SUCCESS', type: 'PAYMENT', terminalId: 'T' }, agg({ authorized: 1000, captured: 1000 })), none);
  });
  test('amounts in flight are held back; renew only for Klarna and ViaBill with an uncaptured balance', () => {
    assert.deepEqual(actionLimits(ok, agg({ authorized: 1000, captured: 1000 }), { capture: 0, void: 0, refund: 1000 }).refund, 0);
    assert.equal(actionLimits(ok, agg({ authorized: 1000 }), { capture: 600, void: 0, refund: 0 }).capture, 400);
    assert.equal(actionLimits({ ...ok, paymentMethodType: 'KLARNA' }, agg({ authorized: 1000 })).renew, true);
    assert.equal(actionLimits({ ...ok, paymentMethodType: 'KLARNA' }, agg({ authorized: 1000, captured: 1000 })).renew, false);
    assert.equal(actionLimits({ ...ok, paymentMethodType: 'CARD' }, agg({ authorized: 1000 })).renew, false);
  });
});

describe('amounts in major units, by the currency exponent of the service', () => {
  test('shown: DKK 2, JPY 0, KWD 3, CLF 4; negative; unknown codes as 2', () => {
    assert.equal(money(1000, 'DKK'), '10.00 DKK');
    assert.equal(money(5, 'DKK'), '0.05 DKK');
    assert.equal(money(1000, 'JPY'), '1000 JPY');
    assert.equal(money(1234, 'KWD'), '1.234 KWD');
    assert.equal(money(12345, 'CLF'), '1.2345 CLF');
    assert.equal(money(-125, 'DKK'), '-1.25 DKK');
    assert.equal(major(0, 'EUR'), '0.00');
    assert.equal(money(null, 'DKK'), '');
  });
  test('typed: exact, decimals bounded by the exponent, comma accepted', () => {
    assert.equal(parseAmount('10', 'DKK'), 1000);
    assert.equal(parseAmount('10.5', 'DKK'), 1050);
    assert.equal(parseAmount('10,05', 'DKK'), 1005);
    assert.equal(parseAmount('0.07', 'DKK'), 7);
    assert.equal(parseAmount('10.001', 'DKK'), null);
    assert.equal(parseAmount('1000', 'JPY'), 1000);
    assert.equal(parseAmount('10.5', 'JPY'), null);
    assert.equal(parseAmount('1.234', 'KWD'), 1234);
    assert.equal(parseAmount('-1', 'DKK'), null);
    assert.equal(parseAmount('abc', 'DKK'), null);
    assert.equal(parseAmount('', 'DKK'), null);
    assert.match(amountHint('JPY'), /no decimals/);
    assert.match(amountHint('DKK'), /at most 2 decimals, e\.g\. 4\.00/);
  });
  test('the service’s refusals with their minor-unit figures in major units', () => {
    assert.equal(
      inMajorUnits('The amount exceeds the captured amount not yet refunded (600 available).', 'DKK'),
      'The amount exceeds the captured amount not yet refunded (6.00 DKK available).',
    );
    assert.match(inMajorUnits('void with amount -1 (or 2500, all that is left uncaptured).', 'DKK'), /\(or 25\.00 DKK, all that is left/);
    assert.equal(inMajorUnits('Nothing to convert (x available).', 'DKK'), 'Nothing to convert (x available).');
  });
  test('plurals', () => {
    assert.equal(plural(1, 'attempt'), '1 attempt');
    assert.equal(plural(2, 'attempt'), '2 attempts');
    assert.equal(plural(0, 'attempt'), '0 attempts');
  });
});
