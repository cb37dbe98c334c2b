/** INTERFACE §13's table: each 3-D Secure result, under NORMAL and FORCE, becomes one decision. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { THREEDS_SANDBOX_PANS } from '../../src/connectors/threeds/sandbox-cards.js';
import { validateCard } from '../../src/modules/payment-methods/card.js';
import { decide, type ThreeDSOutcome } from '../../src/modules/three-d-secure/decision.js';
import { FieldErrorCollector } from '../../src/shared/errors.js';

const ares = (transStatus: string): ThreeDSOutcome => ({
  kind: 'message',
  messageType: 'ARes',
  transStatus,
  raw: `{"messageType":"ARes","transStatus":"${transStatus}"}`,
});
const rreq = (transStatus: string): ThreeDSOutcome => ({
  kind: 'message',
  messageType: 'RReq',
  transStatus,
  raw: `{"messageType":"RReq","transStatus":"${transStatus}"}`,
});

describe('3-D Secure decision table (INTERFACE §13)', () => {
  for (const status of ['Y', 'A', 'I']) {
    test(`ARes ${status}: authorize with the ARes unchanged, frictionless, whatever the mode`, () => {
      for (const mode of ['NORMAL', 'FORCE']) {
        const decision = decide(ares(status), mode);
        assert.deepEqual(decision, {
          action: 'authorize',
          authentication: { kind: 'ares', message: `{"messageType":"ARes","transStatus":"${status}"}` },
          sca: { rejected: false, type: '3DS', verification: 'FRICTIONLESS' },
          scaCode: status,
        });
      }
    });
  }

  test('RReq Y after a challenge: authorize with the RReq, CHALLENGED', () => {
    const decision = decide(rreq('Y'), 'NORMAL');
    assert.equal(decision.action, 'authorize');
    assert.deepEqual(decision.action === 'authorize' && decision.authentication, { kind: 'rreq', message: '{"messageType":"RReq","transStatus":"Y"}' });
    assert.deepEqual(decision.sca, { rejected: false, type: '3DS', verification: 'CHALLENGED' });
  });

  for (const status of ['N', 'R']) {
    test(`${status}: refused with REJECTED_BY_SCA in both modes, nothing to send`, () => {
      for (const outcome of [ares(status), rreq(status)]) {
        for (const mode of ['NORMAL', 'FORCE']) {
          const decision = decide(outcome, mode);
          assert.equal(decision.action, 'refuse');
          assert.equal(decision.action === 'refuse' && decision.errorCode, 'REJECTED_BY_SCA');
          assert.equal(decision.sca.rejected, true);
          assert.equal(decision.scaCode, status);
        }
      }
    });
  }

  test('U: NORMAL authorizes without 3-D Secure (no message sent); FORCE refuses', () => {
    const normal = decide(ares('U'), 'NORMAL');
    assert.deepEqual(normal, { action: 'authorize', authentication: null, sca: { rejected: false, type: '3DS', verification: 'FRICTIONLESS' }, scaCode: 'U' });
    const force = decide(rreq('U'), 'FORCE');
    assert.equal(force.action, 'refuse');
    assert.deepEqual(force.sca, { rejected: true, type: '3DS', verification: 'CHALLENGED' });
  });

  test('not enrolled (305): NORMAL authorizes as without SCA; FORCE refuses', () => {
    assert.deepEqual(decide({ kind: 'not_enrolled' }, 'NORMAL'), {
      action: 'authorize',
      authentication: null,
      sca: { rejected: false, type: 'UNKNOWN', verification: 'NONE' },
      scaCode: null,
    });
    const force = decide({ kind: 'not_enrolled' }, 'FORCE');
    assert.equal(force.action, 'refuse');
    assert.equal(force.sca.rejected, true);
  });

  test('a provider error or timeout: NORMAL goes on without 3-D Secure; FORCE refuses', () => {
    const outcome: ThreeDSOutcome = { kind: 'no_result', reason: 'Erro 405' };
    assert.deepEqual(decide(outcome, 'NORMAL'), {
      action: 'authorize',
      authentication: null,
      sca: { rejected: false, type: '3DS', verification: 'UNKNOWN' },
      scaCode: null,
    });
    const force = decide(outcome, 'FORCE');
    assert.equal(force.action, 'refuse');
    assert.equal(force.action === 'refuse' && force.errorCode, 'REJECTED_BY_SCA');
  });
});

describe('card rules: the 3-D Secure sandbox cards (INTERFACE §13)', () => {
  test('a documented test card failing Luhn is taken only when exempted (sandbox mode); others never', () => {
    const card = { number: '4000100511112003', expiryMonth: 12, expiryYear: 2099, cvc: '123', holderName: null };
    const run = (exempt?: ReadonlySet<string>, number = card.number) => {
      const errors = new FieldErrorCollector();
      validateCard({ ...card, number }, 'card', Date.parse('2026-12-01T00:00:00Z'), errors, { luhnExempt: exempt });
      return errors.empty;
    };
    assert.equal(run(), false, 'outside sandbox mode: a field error');
    assert.equal(run(THREEDS_SANDBOX_PANS), true);
    assert.equal(run(THREEDS_SANDBOX_PANS, '4000100511112004'), false, 'an undocumented number failing Luhn');
  });
});
