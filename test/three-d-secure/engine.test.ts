/**
 * A 3-D Secure decision through the payment engine to Clearhaus (INTERFACE §13), on both stores:
 * the window's result is sent unchanged with the authorization and the transaction's `sca` says so;
 * a refusal sends nothing and ends the attempt FAILED REJECTED_BY_SCA, the session open for another.
 * (The browser flow that makes the decision is tested with the fake 3DS Server; here it is given.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decide } from '../../src/modules/three-d-secure/decision.js';
import { availableStores } from '../support/stores.js';
import { type ClearhausSetup, cardOf, freshPan, startClearhaus } from '../acquirers/clearhaus-support.js';
import { ok } from '../acquirers/support.js';

const ARES_Y =
  '{"acsTransID":"43163cd0-c849-4924-82c1-7bec32b94881","authenticationValue":"mK225wGt2bLnnLB0UlRky0oHLnU=","dsTransID":"1cf815e5-cc85-436f-8e13-9f5e5aea731f","eci":"05","messageType":"ARes","messageVersion":"2.2.0","threeDSServerTransID":"3f1ed47a-2edc-4b0e-a4cf-bdb0f65d48c6","transStatus":"Y"}';

for (const kind of await availableStores()) {
  describe(`3-D Secure decisions through the engine (${kind})`, () => {
    let ch: ClearhausSetup;
    before(async () => {
      ch = await startClearhaus(kind);
    });
    after(() => ch.close());

    async function openSession(scaMode: string) {
      const m = await ch.merchant();
      const init = ok(await m.api.post('/public/api/v1/cit', { pointOfSaleId: m.onlinePointOfSaleId, amount: 2050, currency: 'EUR', scaMode }), 'POST /cit');
      const key = new URL(init.paymentWindowUrl).pathname.split('/').pop()!;
      const session = (await ch.t.runtime.services.sessions.byClientKey(key))!;
      return { m, session, id: init.session.id as string };
    }

    test('ARes Y: sent as card[3dsecure][v2][ares] byte for byte; sca FRICTIONLESS, externalStatusCodes.sca Y', async () => {
      const { m, session } = await openSession('NORMAL');
      const pan = freshPan();
      const decision = decide({ kind: 'message', messageType: 'ARes', transStatus: 'Y', raw: ARES_Y }, 'NORMAL');
      const { transaction } = await ch.t.runtime.services.sessions.pay(session, { card: cardOf(pan) }, '203.0.113.7', { threeDS: decision });
      assert.equal(transaction?.state, 'SUCCESS');
      const sent = ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === pan);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.form['card[3dsecure][v2][ares]'], ARES_Y);
      assert.deepEqual(transaction!.sca, { rejected: false, type: '3DS', verification: 'FRICTIONLESS' });
      assert.equal(transaction!.externalStatusCodes?.sca, 'Y');
      const details = ok(await m.api.get(`/public/api/v1/transactions/${transaction!.id}`), 'details');
      assert.match(JSON.stringify(details), /"sca":"Y"/, 'externalStatusCodes.sca in the details');
      assert.equal(JSON.stringify(details).includes('mK225wGt2bLnnLB0UlRky0oHLnU='), false, 'no authentication value in the API');
    });

    test('N: refused before Clearhaus (nothing sent), FAILED REJECTED_BY_SCA, the session takes another attempt', async () => {
      const { session, id, m } = await openSession('NORMAL');
      const pan = freshPan();
      const decision = decide({ kind: 'message', messageType: 'ARes', transStatus: 'N', raw: '{"messageType":"ARes","transStatus":"N"}' }, 'NORMAL');
      const { transaction } = await ch.t.runtime.services.sessions.pay(session, { card: cardOf(pan) }, '203.0.113.7', { threeDS: decision });
      assert.equal(transaction?.state, 'FAILED');
      assert.equal(transaction?.errorCode, 'REJECTED_BY_SCA');
      assert.equal(ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === pan).length, 0, 'nothing reached Clearhaus');
      assert.deepEqual(transaction?.sca, { rejected: true, type: '3DS', verification: 'FRICTIONLESS' });
      const after = ok(await m.api.get(`/public/api/v1/sessions/${id}`), 'session').session;
      assert.equal(after.state, 'PENDING', 'attempts remain');
    });

    test('not enrolled under FORCE: refused without a request; under NORMAL: authorized without 3-D Secure', async () => {
      const forced = await openSession('FORCE');
      const pan = freshPan();
      const refused = await ch.t.runtime.services.sessions.pay(forced.session, { card: cardOf(pan) }, null, {
        threeDS: decide({ kind: 'not_enrolled' }, 'FORCE'),
      });
      assert.equal(refused.transaction?.errorCode, 'REJECTED_BY_SCA');
      assert.equal(ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === pan).length, 0);
      const normal = await openSession('NORMAL');
      const paid = await ch.t.runtime.services.sessions.pay(normal.session, { card: cardOf(pan) }, null, {
        threeDS: decide({ kind: 'not_enrolled' }, 'NORMAL'),
      });
      assert.equal(paid.transaction?.state, 'SUCCESS');
      const [sent] = ch.fake.requestsTo('/authorizations').filter((r) => r.form['card[pan]'] === pan);
      assert.ok(sent && !Object.keys(sent.form).some((k) => k.includes('3dsecure')));
    });
  });
}
