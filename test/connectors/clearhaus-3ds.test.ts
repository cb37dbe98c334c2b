/**
 * The Clearhaus connector with a 3-D Secure result (INTERFACE §12.3, §13): the ARes or RReq goes
 * as `card[3dsecure][v2][ares|rreq]`, exactly as the 3DS Server sent it, and the fake Clearhaus
 * (written from the published contract) accepts it, echoes it, and declines N with 40310.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { AuthorizeRequest } from '../../src/connectors/acquirer.js';
import { ClearhausAcquirer } from '../../src/connectors/clearhaus/connector.js';
import { SigningKey } from '../../src/connectors/clearhaus/signing.js';
import { CLEARHAUS_DOCS_KEY, type ClearhausFake, startClearhausFake } from '../support/clearhaus-fake.js';

const ARES_Y =
  '{"acsOperatorID":"3dsecure.io-standin-acs","acsReferenceNumber":"3dsecure.io-standin-acs","acsTransID":"43163cd0-c849-4924-82c1-7bec32b94881","authenticationValue":"mK225wGt2bLnnLB0UlRky0oHLnU=","dsReferenceNumber":"3dsecure.io-standin-ds","dsTransID":"1cf815e5-cc85-436f-8e13-9f5e5aea731f","eci":"05","messageType":"ARes","messageVersion":"2.1.0","threeDSServerTransID":"3f1ed47a-2edc-4b0e-a4cf-bdb0f65d48c6","transStatus":"Y"}';
const RREQ_N =
  '{"acsTransID":"ed476e98-40de-48df-a55d-b13baef7aea1","dsTransID":"a0bf2f11-9368-4898-be0b-fd5314c912b2","interactionCounter":"01","messageCategory":"01","messageType":"RReq","messageVersion":"2.2.0","threeDSServerTransID":"ac80bcae-27f9-4308-97a6-bcef25793b9c","transStatus":"N","transStatusReason":"01"}';

describe('Clearhaus connector: the 3-D Secure result on the wire', () => {
  const apiKey = randomUUID();
  let fake: ClearhausFake;
  let connector: ClearhausAcquirer;
  before(async () => {
    fake = await startClearhausFake({ merchants: [{ apiKey }] });
    connector = new ClearhausAcquirer({
      baseUrl: fake.url,
      signingKeyId: CLEARHAUS_DOCS_KEY.id,
      signingKey: SigningKey.fromPem(CLEARHAUS_DOCS_KEY.privateKeyPem),
      timeoutMs: 2_000,
      maxInFlight: 4,
    });
  });
  after(async () => {
    await connector.close();
    await fake.close();
  });

  const request = (transactionId: string, threeDSecure: AuthorizeRequest['threeDSecure']): AuthorizeRequest => ({
    transactionId,
    attempt: 1,
    amount: 2050,
    currency: 'EUR',
    instrument: { kind: 'card', pan: '4000100511112003', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123', holderName: 'Jane Doe' },
    initiator: 'CIT',
    scaMode: 'NORMAL',
    capture: false,
    agreement: { apiKey, mcc: '5411', textOnStatement: null },
    textOnStatement: null,
    clientIp: '203.0.113.7',
    series: null,
    threeDSecure,
  });

  test('a frictionless ARes Y: sent unchanged, approved, echoed by Clearhaus', async () => {
    const result = await connector.authorize(request('0THREEDS001', { kind: 'ares', message: ARES_Y }));
    assert.equal(result.outcome, 'approved', JSON.stringify(result));
    const [sent] = fake.requestsTo('/authorizations');
    assert.equal(sent!.form['card[3dsecure][v2][ares]'], ARES_Y, 'byte for byte');
    const record = fake.authorization(result.outcome === 'approved' ? result.acquirerReference : '')!;
    assert.equal(record.threeDSecure?.message, ARES_Y);
    assert.equal(record.threeDSecure?.transStatus, 'Y');
  });

  test('an RReq N: Clearhaus declines 40310, mapped to REJECTED_BY_SCA', async () => {
    const result = await connector.authorize(request('0THREEDS002', { kind: 'rreq', message: RREQ_N }));
    assert.equal(result.outcome, 'declined');
    assert.equal(result.outcome === 'declined' && result.errorCode, 'REJECTED_BY_SCA');
    assert.equal(result.outcome === 'declined' && result.externalStatusCodes.acquirer, '40310');
  });

  test('no 3-D Secure: nothing under card[3dsecure]', async () => {
    await connector.authorize(request('0THREEDS003', null));
    const sent = fake.requestsTo('/authorizations').at(-1)!;
    assert.ok(!Object.keys(sent.form).some((key) => key.includes('3dsecure')));
  });
});
