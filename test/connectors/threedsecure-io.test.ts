/**
 * The 3dsecure.io client (src/connectors/threeds/threedsecure-io.ts) and the AReq builder
 * (src/modules/three-d-secure/areq.ts) against the fake 3DS Server, which is written from the
 * published facts alone and refuses what the real one would: each case a sandbox PAN.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ThreeDSecureIo, chooseVersion } from '../../src/connectors/threeds/threedsecure-io.js';
import { type AReqInput, asciiHolderName, buildAReq, colorDepthOf } from '../../src/modules/three-d-secure/areq.js';
import { encodeBase64urlJson, NOT_ENROLLED_PAN, startThreeDSFake, type ThreeDSFake } from '../support/threeds-fake.js';

const BROWSER = {
  acceptHeader: 'text/html,application/xhtml+xml',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Test',
  ip: '203.0.113.7',
  javascriptEnabled: true,
  language: 'da-DK',
  javaEnabled: false,
  colorDepth: '30',
  screenHeight: '1080',
  screenWidth: '1920',
  timezoneOffset: '-60',
};

function areqInput(crd: { threeDSServerTransID: string; messageVersion: string }, pan: string, overrides: Partial<AReqInput> = {}): AReqInput {
  return {
    threeDSServerTransID: crd.threeDSServerTransID,
    messageVersion: crd.messageVersion,
    threeDSCompInd: 'U',
    scaMode: 'NORMAL',
    notificationURL: 'https://pay.example.com/3ds/challenge',
    requestorURL: 'https://shop.example.com',
    card: { pan, expiryMonth: 12, expiryYear: 2030, holderName: 'Åse Ødegård' },
    amount: 2050,
    currency: 'EUR',
    nowMs: Date.now(),
    merchant: { acquirerBin: '438309', merchantId: '000000003000001', mcc: '5411', country: 'DK', name: 'Merchant Ltd.' },
    browser: BROWSER,
    ...overrides,
  };
}

describe('3dsecure.io client against the fake 3DS Server', () => {
  let fake: ThreeDSFake;
  let client: ThreeDSecureIo;
  let apiKey: string;

  before(async () => {
    fake = await startThreeDSFake();
    apiKey = fake.apiKeys[0]!;
    client = new ThreeDSecureIo({ baseUrl: fake.url, timeoutMs: 2_000 });
  });
  after(async () => {
    await client.close();
    await fake.close();
  });

  test('/preauth: a card range with the 3DS Method URL and the highest common version; not enrolled; a refused key', async () => {
    const withMethod = await client.versioning(apiKey, '4000100511112003');
    assert.equal(withMethod.kind, 'card_range');
    assert.ok(withMethod.kind === 'card_range' && withMethod.threeDSMethodURL?.startsWith(fake.url));
    assert.equal(withMethod.kind === 'card_range' && withMethod.messageVersion, '2.2.0');
    const v21 = await client.versioning(apiKey, '6000100611111103');
    assert.deepEqual(v21.kind === 'card_range' && [v21.messageVersion, v21.threeDSMethodURL], ['2.1.0', null]);
    assert.deepEqual(await client.versioning(apiKey, NOT_ENROLLED_PAN), { kind: 'not_enrolled' });
    const refused = await client.versioning('00000000-0000-4000-8000-000000000000', '4000100511112003');
    assert.equal(refused.kind, 'unavailable');
    assert.match(refused.kind === 'unavailable' ? refused.reason : '', /API key was refused \(HTTP 401\)/);
  });

  test('/auth: the AReq the builder makes passes the fake; frictionless Y comes back with its exact text', async () => {
    const pan = '6000100611111103'; // 2.1.0, no 3DS Method, Y
    const crd = await client.versioning(apiKey, pan);
    assert.equal(crd.kind, 'card_range');
    if (crd.kind !== 'card_range') return;
    const areq = buildAReq(areqInput(crd, pan));
    assert.ok(areq);
    const result = await client.authenticate(apiKey, areq);
    assert.equal(result.kind, 'message', JSON.stringify(result));
    if (result.kind !== 'message') return;
    assert.equal(result.message.transStatus, 'Y');
    assert.equal(result.message.hasAuthenticationValue, true);
    assert.deepEqual(JSON.parse(result.raw), fake.transaction(crd.threeDSServerTransID)!.ares, 'the ARes as the server sent it');
    const received = fake.transaction(crd.threeDSServerTransID)!.areq as Record<string, unknown>;
    assert.equal(received.cardholderName, 'Ase Odegard', 'ASCII only in 2.1/2.2');
    assert.equal(received.browserColorDepth, '24', '30 bits → the closest lower value');
    assert.equal(received.purchaseCurrency, '978');
  });

  test('/auth after the 3DS Method: threeDSCompInd Y when its page ran; a 2.2.0 challenge answers C with the ACS URL', async () => {
    const pan = '7000100911112070'; // 2.2, method, challenge that passes
    const crd = await client.versioning(apiKey, pan);
    if (crd.kind !== 'card_range') return assert.fail(JSON.stringify(crd));
    assert.ok(crd.threeDSMethodURL);
    const data = encodeBase64urlJson({ threeDSServerTransID: crd.threeDSServerTransID, threeDSMethodNotificationURL: 'http://127.0.0.1:9/m' });
    const page = await fetch(crd.threeDSMethodURL, { method: 'POST', body: new URLSearchParams({ threeDSMethodData: data }) });
    assert.equal(page.status, 200);
    const result = await client.authenticate(apiKey, buildAReq(areqInput(crd, pan, { threeDSCompInd: 'Y' }))!);
    assert.equal(result.kind === 'message' && result.message.transStatus, 'C');
    assert.ok(result.kind === 'message' && result.message.acsURL?.startsWith(fake.url));
    const early = await client.challengeResult(apiKey, crd.threeDSServerTransID);
    assert.equal(early.kind === 'erro' && early.errorCode, '305', 'no RReq before the challenge ends');
  });

  test('errors: an Erro is read as one (DS timeout 405); a hanging server is unavailable at the deadline', async () => {
    const pan = '4000100511110063'; // all versions, method, DS timeout
    const crd = await client.versioning(apiKey, pan);
    if (crd.kind !== 'card_range') return assert.fail(JSON.stringify(crd));
    const result = await client.authenticate(apiKey, buildAReq(areqInput(crd, pan, { threeDSCompInd: 'N' }))!);
    assert.equal(result.kind, 'erro');
    assert.equal(result.kind === 'erro' && result.errorCode, '405');
    const quick = new ThreeDSecureIo({ baseUrl: fake.url, timeoutMs: 300 });
    fake.script({ path: '/preauth', action: 'hang' });
    const hung = await quick.versioning(apiKey, '4000100511112003');
    assert.deepEqual(hung, { kind: 'unavailable', reason: '3dsecure.io /preauth: no answer in time' });
    await quick.close();
  });

  test('a refused AReq (a required field missing) comes back as the Erro naming it, never as a message', async () => {
    const pan = '6000100611111103';
    const crd = await client.versioning(apiKey, pan);
    if (crd.kind !== 'card_range') return assert.fail();
    const areq = buildAReq(areqInput(crd, pan))!;
    delete areq.mcc;
    const result = await client.authenticate(apiKey, areq);
    assert.equal(result.kind === 'erro' && result.errorCode, '201');
    assert.equal(result.kind === 'erro' && result.errorDetail, 'mcc');
  });
});

describe('AReq builder and version choice (units)', () => {
  test('colour depth: listed values kept, others the closest lower; holder names made ASCII or left out', () => {
    assert.deepEqual(['24', '30', '48', '2', 'x'].map(colorDepthOf), ['24', '24', '48', '1', null]);
    assert.equal(asciiHolderName('Åse Ødegård'), 'Ase Odegard');
    assert.equal(asciiHolderName('李小龍'), null);
    assert.equal(asciiHolderName('J'), null);
  });

  test('no AReq for a currency or merchant country without an ISO number', () => {
    const crd = { threeDSServerTransID: '00000000-0000-4000-8000-000000000000', messageVersion: '2.2.0' };
    assert.equal(buildAReq(areqInput(crd, '4000100511112003', { currency: 'XCG' })), null);
    assert.equal(buildAReq({ ...areqInput(crd, '4000100511112003'), merchant: { ...areqInput(crd, '').merchant, country: 'ZZ' } }), null);
  });

  test('the version: the highest of ours within both ranges; the listed ACS versions win over the range', () => {
    assert.deepEqual(
      chooseVersion({ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.1.0', dsStartProtocolVersion: '2.1.0', dsEndProtocolVersion: '2.2.0' }),
      {
        version: '2.1.0',
        threeDSMethodURL: null,
      },
    );
    assert.deepEqual(
      chooseVersion({
        acsStartProtocolVersion: '2.1.0',
        acsEndProtocolVersion: '2.3.1',
        dsProtocolVersions: ['2.1.0', '2.2.0', '2.3.1'],
        acsProtocolVersions: [{ version: '2.2.0', threeDSMethodURL: 'https://acs/m22' }, { version: '2.3.1' }],
        threeDSMethodURL: 'https://acs/m',
      }),
      { version: '2.2.0', threeDSMethodURL: 'https://acs/m22' },
    );
    assert.equal(
      chooseVersion({ acsStartProtocolVersion: '2.3.1', acsEndProtocolVersion: '2.3.1', dsStartProtocolVersion: '2.1.0', dsEndProtocolVersion: '2.3.1' }),
      null,
    );
  });
});
