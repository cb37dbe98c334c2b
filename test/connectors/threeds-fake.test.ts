/**
 * The fake 3dsecure.io 3DS Server and ACS of test/support/threeds-fake.ts, checked against
 * shared/acquirers/3dsecure-io.md with plain fetch requests (nothing of our connector): the API key
 * and JSON rules, /preauth's CRD and not-enrolled Erro, the sandbox's last-4 cases, every AReq rule
 * refused with the right Erro naming the element, threeDSCompInd against the 3DS Method, each ARes
 * outcome, the timers on the injected clock (80 s, 30 s, 10 min, 300 s), the ACS pages (parsed and
 * posted by hand, no browser) and the scripted failures.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  ACS_PATHS,
  caseOf,
  encodeBase64urlJson,
  type Message,
  type PageForm,
  readPageForm,
  SANDBOX_PANS,
  sandboxPan,
  startThreeDSFake,
  type ThreeDSFake,
} from '../support/threeds-fake.js';

const API_KEY = 'b1946ac9-2f6e-4b8a-9d0c-5e7f3a2b1c4d';
const OTHER_KEY = '0d6a8f3e-5b2c-4e1a-8f7d-9c3b2a1e0f6d';
const NOTIFICATION_URL = 'https://pay.gateway.example/3ds/challenge-result';
const METHOD_NOTIFICATION_URL = 'http://127.0.0.1:9/3ds/method-notification';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const AV = /^[a-zA-Z0-9+/]{27}=$/;

/** 2.2.0 only, no 3DS Method (threeDSCompInd U), frictionless Y: the card for the field rules. */
const PLAIN_22 = sandboxPan({ versions: '2.2.0', method: 'absent', outcome: 'Y' });

let clock = Date.now();

interface Answer {
  status: number;
  contentType: string | null;
  headers: Headers;
  text: string;
  json: any;
}

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type'), headers: res.headers, text, json };
}

interface CallOptions {
  apiKey?: string | null;
  contentType?: string;
  method?: string;
  signal?: AbortSignal;
  url?: string;
}

async function call(fake: ThreeDSFake, path: string, body: unknown, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json; charset=utf-8' };
  if (options.apiKey !== null) headers.APIKey = options.apiKey ?? API_KEY;
  const method = options.method ?? 'POST';
  const res = await fetch(`${options.url ?? fake.url}${path}`, {
    method,
    headers,
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.signal,
  });
  return answerOf(res);
}

async function postForm(url: string, fields: Record<string, string>, contentType = 'application/x-www-form-urlencoded'): Promise<Answer> {
  return answerOf(await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: new URLSearchParams(fields).toString() }));
}

const decode = (value: string): Message => JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
const purchaseDate = (ms = clock) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);

function assertErro(answer: Answer, code: string, detail?: string, status = 400): any {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.contentType, 'application/json; charset=utf-8');
  assert.equal(answer.json.messageType, 'Erro', answer.text);
  assert.equal(answer.json.errorCode, code, answer.text);
  if (detail !== undefined) assert.equal(answer.json.errorDetail, detail, answer.text);
  return answer.json;
}

async function preauth(fake: ThreeDSFake, pan: string): Promise<any> {
  const answer = await call(fake, '/preauth', { acctNumber: pan });
  assert.equal(answer.status, 200, answer.text);
  return answer.json;
}

/** A complete valid browser AReq for the CRD's transaction (overrides: undefined removes a field). */
function areqFor(crd: any, pan: string, overrides: Record<string, unknown> = {}): Message {
  const areq: Message = {
    messageType: 'AReq',
    messageVersion: crd.acsEndProtocolVersion === '2.3.1' && crd.acsStartProtocolVersion !== '2.3.1' ? '2.2.0' : crd.acsEndProtocolVersion,
    messageCategory: '01',
    deviceChannel: '02',
    threeDSServerTransID: crd.threeDSServerTransID,
    threeDSCompInd: crd.threeDSMethodURL ? 'Y' : 'U',
    threeDSRequestorAuthenticationInd: '01',
    threeDSRequestorChallengeInd: '01',
    threeDSRequestorURL: 'https://shop.example.com',
    notificationURL: NOTIFICATION_URL,
    acctNumber: pan,
    cardExpiryDate: '2812',
    cardholderName: 'Jane Doe',
    email: 'jane@example.com',
    billAddrLine1: 'Example Street 1',
    billAddrCity: 'Aarhus',
    billAddrPostCode: '8000',
    billAddrCountry: '208',
    acquirerBIN: '438309',
    acquirerMerchantID: '000000003000001',
    mcc: '5411',
    merchantCountryCode: '208',
    merchantName: 'Merchant Ltd.',
    purchaseAmount: '2050',
    purchaseCurrency: '978',
    purchaseExponent: '2',
    purchaseDate: purchaseDate(),
    transType: '01',
    browserAcceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    browserIP: '203.0.113.7',
    browserJavascriptEnabled: true,
    browserJavaEnabled: false,
    browserLanguage: 'da-DK',
    browserColorDepth: '24',
    browserScreenHeight: '1080',
    browserScreenWidth: '1920',
    browserTZ: '-120',
    browserUserAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  };
  if (areq.messageVersion === '2.3.1') {
    areq.threeDSRequestorChallengeInd = ['01'];
    areq.acceptLanguage = ['da-DK', 'en'];
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete areq[key];
    else areq[key] = value;
  }
  return areq;
}

/** Posts the 3DS Method form as the hidden iframe would; returns the page's answer and its form. */
async function runMethod(fake: ThreeDSFake, crd: any, notificationURL = METHOD_NOTIFICATION_URL): Promise<{ answer: Answer; form?: PageForm }> {
  const threeDSMethodData = encodeBase64urlJson({ threeDSServerTransID: crd.threeDSServerTransID, threeDSMethodNotificationURL: notificationURL });
  const answer = await postForm(crd.threeDSMethodURL ?? fake.methodURL, { threeDSMethodData });
  return { answer, form: answer.status === 200 ? readPageForm(answer.text) : undefined };
}

/** /preauth, then the 3DS Method when one is offered; the CRD and the threeDSCompInd to send. */
async function ready(fake: ThreeDSFake, pan: string): Promise<{ crd: any; compInd: string }> {
  const crd = await preauth(fake, pan);
  if (!crd.threeDSMethodURL) return { crd, compInd: 'U' };
  const { answer, form } = await runMethod(fake, crd);
  assert.equal(answer.status, 200, answer.text);
  return { crd, compInd: form ? 'Y' : 'N' };
}

async function authenticate(fake: ThreeDSFake, pan: string, overrides: Record<string, unknown> = {}): Promise<{ crd: any; answer: Answer }> {
  const { crd, compInd } = await ready(fake, pan);
  const answer = await call(fake, '/auth', areqFor(crd, pan, { threeDSCompInd: compInd, ...overrides }));
  return { crd, answer };
}

/** A fresh transaction of PLAIN_22 sent with these AReq overrides. */
async function authPlain(fake: ThreeDSFake, overrides: Record<string, unknown>): Promise<Answer> {
  return (await authenticate(fake, PLAIN_22, overrides)).answer;
}

async function challengeAres(fake: ThreeDSFake, pan: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const { answer } = await authenticate(fake, pan, overrides);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.transStatus, 'C', answer.text);
  return answer.json;
}

function creqOf(ares: any, overrides: Record<string, unknown> = {}): Message {
  const creq: Message = {
    threeDSServerTransID: ares.threeDSServerTransID,
    acsTransID: ares.acsTransID,
    messageType: 'CReq',
    messageVersion: ares.messageVersion,
    challengeWindowSize: '05',
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete creq[key];
    else creq[key] = value;
  }
  return creq;
}

const postCReq = (ares: any, creq: Message, sessionData?: string) =>
  postForm(ares.acsURL, { creq: encodeBase64urlJson(creq), ...(sessionData !== undefined && { threeDSSessionData: sessionData }) });

const postauth = (fake: ThreeDSFake, id: string) => call(fake, '/postauth', { threeDSServerTransID: id });

describe('3dsecure.io fake', () => {
  let fake: ThreeDSFake;
  before(async () => {
    fake = await startThreeDSFake({ apiKeys: [API_KEY, OTHER_KEY], now: () => clock });
  });
  beforeEach(() => {
    clock = Date.now();
  });
  after(() => fake.close());

  describe('transport (§2.1, §5 items 1–4)', () => {
    test('a missing or unknown APIKey is a 401, text/plain, "Invalid API Key"', async () => {
      for (const apiKey of [null, 'c2f1e0d9-8b7a-4c6d-9e5f-4a3b2c1d0e9f', 'not-a-uuid']) {
        const answer = await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless }, { apiKey });
        assert.equal(answer.status, 401);
        assert.equal(answer.contentType, 'text/plain; charset=utf-8');
        assert.equal(answer.text, 'Invalid API Key');
        assert.equal(answer.headers.get('content-length'), '15');
      }
      assert.equal((await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless }, { apiKey: OTHER_KEY })).status, 200);
      const recorded = fake.requestsTo('/preauth').at(-1)!;
      assert.equal(recorded.apiKey, OTHER_KEY);
      assert.deepEqual(recorded.json, { acctNumber: SANDBOX_PANS.frictionless });
      assert.equal(recorded.headers['content-type'], 'application/json; charset=utf-8');
    });

    test('only POST /preauth, /auth and /postauth: other methods 405, other paths 404', async () => {
      const get = await call(fake, '/preauth', undefined, { method: 'GET' });
      assert.equal(get.status, 405);
      assert.equal(get.headers.get('allow'), 'POST');
      assert.equal((await call(fake, '/auth', {}, { method: 'PUT' })).status, 405);
      assert.equal((await call(fake, '/versioning', { acctNumber: SANDBOX_PANS.frictionless })).status, 404);
      assert.equal((await call(fake, ACS_PATHS.challenge, undefined, { method: 'GET' })).status, 405);
    });

    test('a body that is not JSON, or not sent as application/json, is Erro 101', async () => {
      const body = JSON.stringify({ acctNumber: SANDBOX_PANS.frictionless });
      assertErro(await call(fake, '/preauth', body, { contentType: 'text/plain' }), '101', 'Content-Type');
      assertErro(await call(fake, '/preauth', body, { contentType: 'application/x-www-form-urlencoded' }), '101', 'Content-Type');
      assertErro(await call(fake, '/preauth', body, { contentType: 'application/json; charset=iso-8859-1' }), '101', 'Content-Type');
      assert.equal((await call(fake, '/preauth', body, { contentType: 'application/json' })).status, 200);
      assertErro(await call(fake, '/preauth', '{"acctNumber":'), '101', 'body');
      assertErro(await call(fake, '/preauth', '["4000100511112003"]'), '101', 'body');
    });

    test('the HTTP status of Erro answers is configurable', async () => {
      fake.erroStatus = 502;
      try {
        assertErro(await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.notEnrolled }), '305', undefined, 502);
        assertErro(await call(fake, '/postauth', {}), '201', 'threeDSServerTransID', 502);
      } finally {
        fake.erroStatus = 400;
      }
    });
  });

  describe('/preauth (§2.2, §2.8, §5 items 5–9)', () => {
    test('not enrolled: Erro 305 "Unknown BIN", without threeDSServerTransID and without the PAN', async () => {
      // The generic PAN, a last-4 matching no case (1111), decoupled (83, unmerged), I on a 2.1.0-only range.
      for (const pan of [SANDBOX_PANS.notEnrolled, '4111111111111111', '4000100511112083', '4000100511111043', '4000100511114003']) {
        const answer = await call(fake, '/preauth', { acctNumber: pan });
        const erro = assertErro(answer, '305');
        assert.deepEqual(Object.keys(erro), ['errorCode', 'errorComponent', 'errorDescription', 'errorDetail', 'messageType', 'messageVersion']);
        assert.equal(erro.errorComponent, 'S');
        assert.equal(erro.errorDescription, 'Unknown BIN');
        assert.equal(erro.messageVersion, '2.2.0');
        assert.ok(!answer.text.includes(pan.slice(0, 6)), 'the Erro must not echo the card number');
      }
      assert.equal(fake.transactions.filter((t) => t.pan === SANDBOX_PANS.notEnrolled).length, 0);
    });

    test('acctNumber is ^[0-9]{13,19}$ and ds one of the enum', async () => {
      assertErro(await call(fake, '/preauth', {}), '201', 'acctNumber');
      for (const acctNumber of ['4000 1005 1111 2003', '400010051111', '40001005111120031234', 4000100511112003]) {
        assertErro(await call(fake, '/preauth', { acctNumber }), '203', 'acctNumber');
      }
      assertErro(await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless, ds: 'discover' }), '203', 'ds');
      for (const ds of ['standin', 'visa', 'upi', 'sbn'])
        assert.equal((await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless, ds })).status, 200);
    });

    test('the CRD of documented PANs: version ranges, acsProtocolVersions, threeDSMethodURL when the card has a method', async () => {
      const expected = [
        { pan: SANDBOX_PANS.frictionless, acs: ['2.2.0'], method: true },
        { pan: SANDBOX_PANS.frictionlessNoMethod, acs: ['2.1.0'], method: false },
        { pan: SANDBOX_PANS.methodTimeout, acs: ['2.1.0', '2.2.0', '2.3.1'], method: true },
        { pan: SANDBOX_PANS.challengeFail, acs: ['2.1.0'], method: true },
      ];
      for (const { pan, acs, method } of expected) {
        const crd = await preauth(fake, pan);
        assert.equal(crd.messageType, 'CRD');
        assert.match(crd.threeDSServerTransID, UUID_V4);
        assert.equal(crd.scheme, 'standin');
        assert.equal(crd.acsStartProtocolVersion, acs[0]);
        assert.equal(crd.acsEndProtocolVersion, acs.at(-1));
        assert.equal(crd.dsStartProtocolVersion, '2.1.0');
        assert.equal(crd.dsEndProtocolVersion, '2.3.1');
        assert.deepEqual(crd.dsProtocolVersions, ['2.1.0', '2.2.0', '2.3.1']);
        assert.deepEqual(crd.threeDSServerProtocolVersions, ['2.1.0', '2.2.0', '2.3.1']);
        assert.deepEqual(crd.acsInfoInd, ['01', '02']);
        assert.deepEqual(
          crd.acsProtocolVersions,
          acs.map((version) => (method ? { acsInfoInd: ['01', '02'], threeDSMethodURL: fake.methodURL, version } : { acsInfoInd: ['01', '02'], version })),
        );
        if (method) assert.equal(crd.threeDSMethodURL, `${fake.url}/acs/3dsmethod`);
        else assert.ok(!('threeDSMethodURL' in crd));
        const tx = fake.transaction(crd.threeDSServerTransID)!;
        assert.equal(tx.pan, pan);
        assert.equal(tx.state, 'issued');
      }
      const [a, b] = [await preauth(fake, SANDBOX_PANS.frictionless), await preauth(fake, SANDBOX_PANS.frictionless)];
      assert.notEqual(a.threeDSServerTransID, b.threeDSServerTransID, 'a fresh id for every /preauth');
    });

    test("the last-4 scheme: the documented PANs' cases, and sandboxPan builds PANs that select a case", () => {
      assert.deepEqual(caseOf(SANDBOX_PANS.methodTimeout), {
        last4: '0203',
        acsVersions: ['2.1.0', '2.2.0', '2.3.1'],
        method: 'timeout',
        outcome: 'Y',
        mastercardLike: true,
      });
      assert.equal(caseOf(SANDBOX_PANS.frictionlessNoMethod)!.method, 'absent');
      assert.equal(caseOf(SANDBOX_PANS.manualChallenge)!.challenge, 'manual');
      assert.equal(caseOf(SANDBOX_PANS.challengePass)!.challenge, 'pass');
      assert.equal(caseOf(SANDBOX_PANS.challengeFail)!.challenge, 'fail');
      assert.equal(caseOf(SANDBOX_PANS.notEnrolled), undefined);
      assert.equal(sandboxPan({ versions: '2.2.0', outcome: 'C', challenge: 'manual' }), '4000100511112072');
      assert.equal(sandboxPan({ outcome: 'ds-timeout', method: 'absent', prefix: '222100000000' }), '2221000000000163');
      assert.throws(() => sandboxPan({ versions: '2.1.0', outcome: 'I' }), /no such case/);
    });
  });

  describe('/auth: the transaction id (§5 item 16)', () => {
    test('frictionless Y from 4000100511112003: the 3DS Method posts back, a valid AReq gets an ARes Y, all of it recorded', async () => {
      const pan = SANDBOX_PANS.frictionless;
      const crd = await preauth(fake, pan);
      const { answer: methodAnswer, form } = await runMethod(fake, crd);
      assert.equal(methodAnswer.status, 200);
      assert.equal(methodAnswer.contentType, 'text/html; charset=utf-8');
      assert.ok(form?.autoSubmits, 'the method page posts by itself');
      assert.equal(form.action, METHOD_NOTIFICATION_URL);
      assert.deepEqual(Object.keys(form.fields), ['threeDSMethodData']);
      assert.doesNotMatch(form.fields.threeDSMethodData!, /=/);
      assert.deepEqual(decode(form.fields.threeDSMethodData!), { threeDSServerTransID: crd.threeDSServerTransID });

      const areq = areqFor(crd, pan, { threeDSCompInd: 'Y' });
      const answer = await call(fake, '/auth', areq);
      assert.equal(answer.status, 200, answer.text);
      const ares = answer.json;
      assert.deepEqual(Object.keys(ares), [
        'acsOperatorID',
        'acsReferenceNumber',
        'acsTransID',
        'authenticationValue',
        'dsReferenceNumber',
        'dsTransID',
        'eci',
        'messageType',
        'messageVersion',
        'threeDSServerTransID',
        'transStatus',
      ]);
      assert.equal(ares.messageType, 'ARes');
      assert.equal(ares.messageVersion, '2.2.0');
      assert.equal(ares.threeDSServerTransID, crd.threeDSServerTransID);
      assert.equal(ares.transStatus, 'Y');
      assert.equal(ares.eci, '05');
      assert.match(ares.authenticationValue, AV);
      assert.match(ares.acsTransID, UUID_V4);
      assert.match(ares.dsTransID, UUID_V4);
      assert.notEqual(ares.acsTransID, ares.dsTransID);

      const tx = fake.transaction(crd.threeDSServerTransID)!;
      assert.equal(tx.state, 'frictionless');
      assert.equal(tx.methodServed, true);
      assert.equal(tx.methodPostedBack, true);
      assert.equal(tx.methodNotificationURL, METHOD_NOTIFICATION_URL);
      assert.deepEqual(tx.areq, areq);
      assert.equal(tx.areqRaw, JSON.stringify(areq));
      assert.deepEqual(tx.ares, ares);
      assert.equal(tx.acsTransID, ares.acsTransID);
      assert.equal(tx.dsTransID, ares.dsTransID);
      assert.equal(fake.acsRequests.at(-1)!.threeDSServerTransID, crd.threeDSServerTransID);
    });

    test('an id is used once: a second /auth with it is Erro 301, carrying the id', async () => {
      const { crd, answer } = await authenticate(fake, PLAIN_22);
      assert.equal(answer.status, 200, answer.text);
      const again = await call(fake, '/auth', areqFor(crd, PLAIN_22));
      const erro = assertErro(again, '301', 'threeDSServerTransID');
      assert.equal(erro.threeDSServerTransID, crd.threeDSServerTransID);
      assert.equal(erro.errorMessageType, 'AReq');
      assert.match(erro.errorDescription, /already used/);
      assert.equal(fake.transaction(crd.threeDSServerTransID)!.state, 'frictionless', 'the refused retry changes nothing');
    });

    test('an Erro after the id check uses the id up too (start over with /preauth)', async () => {
      const crd = await preauth(fake, PLAIN_22);
      assertErro(await call(fake, '/auth', areqFor(crd, PLAIN_22, { mcc: undefined })), '201', 'mcc');
      assert.equal(fake.transaction(crd.threeDSServerTransID)!.state, 'refused');
      assertErro(await call(fake, '/auth', areqFor(crd, PLAIN_22)), '301', 'threeDSServerTransID');
    });

    test('an id never issued, issued for another card, or malformed', async () => {
      const crd = await preauth(fake, PLAIN_22);
      const unknown = await call(fake, '/auth', areqFor({ ...crd, threeDSServerTransID: '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b' }, PLAIN_22));
      assert.equal(assertErro(unknown, '301', 'threeDSServerTransID').threeDSServerTransID, '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b');
      const otherCard = sandboxPan({ versions: '2.2.0', method: 'absent', outcome: 'Y', prefix: '400000000000' });
      assertErro(await call(fake, '/auth', areqFor(crd, otherCard)), '301', 'threeDSServerTransID');
      assert.equal(fake.transaction(crd.threeDSServerTransID)!.state, 'issued', "another card's AReq does not use the id up");
      assertErro(await call(fake, '/auth', areqFor(crd, PLAIN_22, { threeDSServerTransID: 'not-a-uuid' })), '203', 'threeDSServerTransID');
      assertErro(await call(fake, '/auth', areqFor(crd, PLAIN_22, { threeDSServerTransID: undefined })), '201', 'threeDSServerTransID');
      assert.equal((await call(fake, '/auth', areqFor(crd, PLAIN_22))).status, 200);
    });

    test('the id lives 80 s after /preauth, on the injected clock', async () => {
      const start = clock;
      const kept = await preauth(fake, PLAIN_22);
      clock = start + 80_000;
      assert.equal((await call(fake, '/auth', areqFor(kept, PLAIN_22))).status, 200, 'still alive at 80 s');

      clock = start;
      const lost = await preauth(fake, PLAIN_22);
      const withMethod = await preauth(fake, SANDBOX_PANS.frictionless);
      clock = start + 80_001;
      const erro = assertErro(await call(fake, '/auth', areqFor(lost, PLAIN_22)), '301', 'threeDSServerTransID');
      assert.match(erro.errorDescription, /expired/);
      const { answer } = await runMethod(fake, withMethod);
      assertErro(answer, '301', 'threeDSServerTransID');
    });
  });

  describe('/auth: message type and version (§5 item 15)', () => {
    test('messageType must be AReq (101) and messageVersion one the card range supports (102)', async () => {
      assertErro(await authPlain(fake, { messageType: 'ARes' }), '101', 'messageType');
      assertErro(await authPlain(fake, { messageType: undefined }), '201', 'messageType');
      assertErro(await authPlain(fake, { messageVersion: undefined }), '201', 'messageVersion');
      for (const messageVersion of ['2.0.0', '2.2', 2.2]) assertErro(await authPlain(fake, { messageVersion }), '102', 'messageVersion');
      // PLAIN_22 is a 2.2.0-only range.
      for (const messageVersion of ['2.1.0', '2.3.1']) {
        const erro = assertErro(await authPlain(fake, { messageVersion }), '102', 'messageVersion');
        assert.equal(erro.messageVersion, messageVersion);
        assert.match(erro.errorDescription, /outside the card's range \(2\.2\.0/);
      }
      // 2.1.0-only card asked in 2.2.0.
      const { answer } = await authenticate(fake, SANDBOX_PANS.challengeFail, { messageVersion: '2.2.0' });
      assertErro(answer, '102', 'messageVersion');
    });

    test('I exists from 2.2.0 on: a case with outcome I asked in 2.1.0 is refused', async () => {
      const pan = sandboxPan({ versions: 'all', method: 'absent', outcome: 'I' });
      assertErro((await authenticate(fake, pan, { messageVersion: '2.1.0' })).answer, '102', 'messageVersion');
      const { answer } = await authenticate(fake, pan, { messageVersion: '2.2.0' });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.transStatus, 'I');
      assert.ok(!('eci' in answer.json) && !('authenticationValue' in answer.json));
    });
  });

  describe('/auth: required elements → Erro 201 naming the element (§5 item 18)', () => {
    const REQUIRED = [
      'messageCategory',
      'deviceChannel',
      'threeDSCompInd',
      'threeDSRequestorAuthenticationInd',
      'threeDSRequestorURL',
      'notificationURL',
      'acctNumber',
      'cardExpiryDate',
      'cardholderName',
      'acquirerBIN',
      'acquirerMerchantID',
      'mcc',
      'merchantCountryCode',
      'merchantName',
      'purchaseAmount',
      'purchaseCurrency',
      'purchaseExponent',
      'purchaseDate',
      'browserAcceptHeader',
      'browserUserAgent',
      'browserLanguage',
      'browserJavascriptEnabled',
      'browserJavaEnabled',
      'browserColorDepth',
      'browserScreenHeight',
      'browserScreenWidth',
      'browserTZ',
    ];
    test('each required element of a browser payment AReq (2.2.0)', async () => {
      for (const field of REQUIRED) {
        const erro = assertErro(await authPlain(fake, { [field]: undefined }), '201', field);
        assert.equal(erro.errorComponent, 'S');
        assert.equal(erro.messageVersion, '2.2.0');
        assert.equal(erro.errorMessageType, 'AReq');
        if (field !== 'acctNumber') assert.match(erro.threeDSServerTransID, UUID_V4, field);
      }
    });

    test('with JavaScript off the JavaScript-only browser fields may be left out', async () => {
      const off = { browserJavascriptEnabled: false, browserJavaEnabled: undefined, browserColorDepth: undefined, browserScreenHeight: undefined };
      const answer = await authPlain(fake, { ...off, browserScreenWidth: undefined, browserTZ: undefined });
      assert.equal(answer.status, 200, answer.text);
    });

    test('2.1.0 has no browserJavascriptEnabled and always needs the screen fields', async () => {
      const pan = sandboxPan({ versions: '2.1.0', method: 'absent', outcome: 'Y' });
      assert.equal((await authenticate(fake, pan, { browserJavascriptEnabled: undefined })).answer.status, 200);
      assertErro((await authenticate(fake, pan, { browserJavascriptEnabled: false, browserColorDepth: undefined })).answer, '201', 'browserColorDepth');
      assertErro((await authenticate(fake, pan, { threeDSRequestorChallengeInd: '05' })).answer, '203', 'threeDSRequestorChallengeInd');
      assertErro((await authenticate(fake, pan, { threeDSRequestorDecReqInd: 'N' })).answer, '203', 'threeDSRequestorDecReqInd');
    });

    test('2.3.1 needs acceptLanguage and takes threeDSRequestorChallengeInd as an array', async () => {
      const pan = sandboxPan({ versions: '2.3.1', method: 'absent', outcome: 'Y' });
      assert.equal((await authenticate(fake, pan)).answer.status, 200);
      assertErro((await authenticate(fake, pan, { acceptLanguage: undefined })).answer, '201', 'acceptLanguage');
      assertErro((await authenticate(fake, pan, { threeDSRequestorChallengeInd: '01' })).answer, '203', 'threeDSRequestorChallengeInd');
      assert.equal((await authenticate(fake, pan, { cardholderName: 'Jörg Müller' })).answer.status, 200, '2.3.1 lifts the ASCII rule');
    });

    test('a non-payment AReq (02) needs no purchase fields; a recurring one (authenticationInd 02) needs recurringExpiry/Frequency', async () => {
      const npa = { messageCategory: '02', purchaseAmount: undefined, purchaseCurrency: undefined, purchaseExponent: undefined, purchaseDate: undefined };
      assert.equal((await authPlain(fake, { ...npa, acquirerBIN: undefined, mcc: undefined })).status, 200);
      assertErro(await authPlain(fake, { threeDSRequestorAuthenticationInd: '02' }), '201', 'recurringExpiry');
      assertErro(await authPlain(fake, { threeDSRequestorAuthenticationInd: '02', recurringExpiry: '20991231' }), '201', 'recurringFrequency');
      const recurring = { threeDSRequestorAuthenticationInd: '02', recurringExpiry: '20991231', recurringFrequency: '30' };
      assert.equal((await authPlain(fake, recurring)).status, 200);
    });
  });

  describe('/auth: formats → Erro 203 naming the element (§5 item 18)', () => {
    const minutes = (n: number) => purchaseDate(clock + n * 60_000);
    const BAD: [string, () => unknown][] = [
      ['notificationURL', () => 'http://pay.gateway.example/3ds/challenge-result'],
      ['notificationURL', () => `https://pay.gateway.example/${'a'.repeat(240)}`],
      ['notificationURL', () => '/3ds/challenge-result'],
      ['threeDSRequestorURL', () => 'ftp://shop.example.com'],
      ['acctNumber', () => '4000-1005-1111-2103'],
      ['messageCategory', () => '03'],
      ['deviceChannel', () => '01'],
      ['threeDSCompInd', () => 'X'],
      ['threeDSRequestorAuthenticationInd', () => '07'],
      ['threeDSRequestorChallengeInd', () => '10'],
      ['cardExpiryDate', () => '2813'],
      ['cardExpiryDate', () => '122028'],
      ['cardholderName', () => 'Jörg Müller'],
      ['cardholderName', () => 'J'],
      ['cardholderName', () => 'x'.repeat(46)],
      ['acquirerBIN', () => '438309438309'],
      ['mcc', () => '541'],
      ['merchantCountryCode', () => '999'],
      ['merchantCountryCode', () => '20'],
      ['merchantName', () => 'm'.repeat(41)],
      ['purchaseAmount', () => '20.50'],
      ['purchaseAmount', () => 2050],
      ['purchaseAmount', () => ''],
      ['purchaseCurrency', () => 'EUR'],
      ['purchaseCurrency', () => '999'],
      ['purchaseCurrency', () => '960'],
      ['purchaseExponent', () => '3'],
      ['purchaseDate', () => minutes(-10)],
      ['purchaseDate', () => minutes(120)],
      ['purchaseDate', () => '20261301000000'],
      ['purchaseDate', () => new Date(clock).toISOString()],
      ['transType', () => '02'],
      ['browserJavascriptEnabled', () => 'true'],
      ['browserJavaEnabled', () => 'false'],
      ['browserColorDepth', () => '30'],
      ['browserColorDepth', () => 24],
      ['browserScreenHeight', () => '1080px'],
      ['browserTZ', () => '+120min'],
      ['browserLanguage', () => 'de-DE-1996x'],
      ['browserIP', () => '300.1.1.1'],
      ['browserUserAgent', () => null],
      ['billAddrCountry', () => 'DNK'],
      ['email', () => 'jane'],
      ['ds', () => 'upi'],
      ['mobilePhone', () => ({ cc: '+45', subscriber: '12345678' })],
      ['messageExtension', () => ({})],
    ];
    test('each malformed element', async () => {
      for (const [field, value] of BAD) {
        const erro = assertErro(await authPlain(fake, { [field]: value() }), '203', field);
        assert.ok(erro.errorDescription.startsWith('Format or value of one or more Data Elements is Invalid'), erro.errorDescription);
      }
    });

    test("purchaseExponent is the currency's ISO 4217 exponent; a state needs its country", async () => {
      assertErro(await authPlain(fake, { purchaseCurrency: '392', purchaseExponent: '2' }), '203', 'purchaseExponent');
      assert.equal((await authPlain(fake, { purchaseCurrency: '392', purchaseExponent: '0' })).status, 200);
      assert.equal((await authPlain(fake, { purchaseCurrency: '414', purchaseExponent: '3' })).status, 200);
      assertErro(await authPlain(fake, { shipAddrState: 'CA' }), '201', 'shipAddrCountry');
      assert.equal((await authPlain(fake, { shipAddrState: 'CA', shipAddrCountry: '840' })).status, 200);
    });

    test('URLs on a loopback host may be plain http', async () => {
      for (const url of ['http://127.0.0.1:8080/3ds/challenge-result', 'http://localhost:3000/n', 'http://[::1]/n']) {
        assert.equal((await authPlain(fake, { notificationURL: url, threeDSRequestorURL: url })).status, 200, url);
      }
    });
  });

  describe('/auth: threeDSCompInd against the 3DS Method (§5 item 17)', () => {
    test('a method URL was offered: U refused, Y refused until the method page was served, N accepted', async () => {
      const pan = SANDBOX_PANS.frictionless;
      for (const threeDSCompInd of ['U', 'Y']) {
        const crd = await preauth(fake, pan);
        assertErro(await call(fake, '/auth', areqFor(crd, pan, { threeDSCompInd })), '305', 'threeDSCompInd');
      }
      const crd = await preauth(fake, pan);
      assert.equal((await call(fake, '/auth', areqFor(crd, pan, { threeDSCompInd: 'N' }))).status, 200);
    });

    test('no method URL: only U', async () => {
      for (const threeDSCompInd of ['Y', 'N']) assertErro(await authPlain(fake, { threeDSCompInd }), '305', 'threeDSCompInd');
      assert.equal((await authPlain(fake, { threeDSCompInd: 'U' })).status, 200);
    });

    test('the method times out (5000100411110203): its page never posts back, Y is refused, N gets the ARes (Mastercard-like ECI)', async () => {
      const pan = SANDBOX_PANS.methodTimeout;
      const crd = await preauth(fake, pan);
      const { answer, form } = await runMethod(fake, crd);
      assert.equal(answer.status, 200);
      assert.equal(form, undefined, 'no form: nothing is posted to the notification URL');
      const tx = fake.transaction(crd.threeDSServerTransID)!;
      assert.equal(tx.methodServed, true);
      assert.equal(tx.methodPostedBack, false);
      assertErro(await call(fake, '/auth', areqFor(crd, pan, { threeDSCompInd: 'Y' })), '305', 'threeDSCompInd');

      const second = await preauth(fake, pan);
      await runMethod(fake, second);
      const ares = await call(fake, '/auth', areqFor(second, pan, { threeDSCompInd: 'N' }));
      assert.equal(ares.status, 200, ares.text);
      assert.equal(ares.json.transStatus, 'Y');
      assert.equal(ares.json.eci, '02');
    });
  });

  describe('/auth: outcomes (§5 item 19)', () => {
    test('Y and A carry a 28-character AV and the ECI of the scheme; N, R and U a transStatusReason and no AV', async () => {
      const expected = [
        { outcome: 'Y', visa: '05', mastercard: '02' },
        { outcome: 'A', visa: '06', mastercard: '01' },
        { outcome: 'N', reason: '01' },
        { outcome: 'R', reason: '11' },
        { outcome: 'U', reason: '22' },
      ] as const;
      for (const row of expected) {
        for (const prefix of ['400010051111', '500010041111', '222100000000']) {
          const pan = sandboxPan({ method: 'absent', outcome: row.outcome, prefix });
          const { answer } = await authenticate(fake, pan);
          assert.equal(answer.status, 200, answer.text);
          const ares = answer.json;
          assert.equal(ares.transStatus, row.outcome);
          if ('reason' in row) {
            assert.equal(ares.transStatusReason, row.reason);
            assert.ok(!('authenticationValue' in ares) && !('eci' in ares));
          } else {
            assert.match(ares.authenticationValue, AV);
            assert.equal(ares.eci, prefix.startsWith('4') ? row.visa : row.mastercard, `${row.outcome} ${prefix}`);
            assert.ok(!('transStatusReason' in ares));
          }
        }
      }
    });

    test('C: acsURL on the fake ACS, acsChallengeMandated, authenticationType (2.3.1: authenticationMethod)', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengePass);
      assert.equal(ares.acsURL, fake.acsURL);
      assert.equal(ares.acsURL, `${fake.url}/acs/challenge`);
      assert.equal(ares.acsChallengeMandated, 'N');
      assert.equal(ares.authenticationType, '01');
      assert.ok(!('authenticationValue' in ares) && !('eci' in ares));
      assert.equal(fake.transaction(ares.threeDSServerTransID)!.state, 'challenge');
      const mandated = await challengeAres(fake, SANDBOX_PANS.challengePass, { threeDSRequestorChallengeInd: '04' });
      assert.equal(mandated.acsChallengeMandated, 'Y');
      const v231 = await challengeAres(fake, sandboxPan({ versions: '2.3.1', outcome: 'C' }));
      assert.deepEqual(v231.authenticationMethod, ['01']);
      assert.ok(!('authenticationType' in v231));
    });

    test('DS timeout: Erro 405 "Unable to contact Directory Server", after dsTimeoutDelayMs', async () => {
      const pan = sandboxPan({ method: 'absent', outcome: 'ds-timeout' });
      const { crd, answer } = await authenticate(fake, pan);
      const erro = assertErro(answer, '405', 'Connection timeout');
      assert.deepEqual(erro, {
        errorCode: '405',
        errorComponent: 'S',
        errorDescription: 'Unable to contact Directory Server',
        errorDetail: 'Connection timeout',
        errorMessageType: 'AReq',
        messageType: 'Erro',
        messageVersion: '2.2.0',
        threeDSServerTransID: crd.threeDSServerTransID,
      });
      assert.equal(fake.transaction(crd.threeDSServerTransID)!.state, 'refused');

      fake.dsTimeoutDelayMs = 300;
      try {
        const crd2 = await preauth(fake, pan);
        const started = performance.now();
        assertErro(await call(fake, '/auth', areqFor(crd2, pan, { threeDSCompInd: 'U' })), '405');
        assert.ok(performance.now() - started >= 280, 'answered after the delay');
        // A client that gives up first gets nothing, and the fake does not crash writing to it.
        const crd3 = await preauth(fake, pan);
        await assert.rejects(call(fake, '/auth', areqFor(crd3, pan, { threeDSCompInd: 'U' }), { signal: AbortSignal.timeout(50) }));
      } finally {
        fake.dsTimeoutDelayMs = 0;
      }
    });
  });

  describe('the 3DS Method page (§5 items 10–14)', () => {
    const methodData = (value: unknown) => encodeBase64urlJson(value);

    test('threeDSMethodData must be base64url without padding, of JSON with a known id and a notification URL', async () => {
      const crd = await preauth(fake, SANDBOX_PANS.frictionless);
      const id = crd.threeDSServerTransID;
      const good = { threeDSServerTransID: id, threeDSMethodNotificationURL: METHOD_NOTIFICATION_URL };
      const padded = encodeBase64urlJson(good, true);
      assert.match(padded, /=$/, 'this JSON pads');
      const paddedErro = assertErro(await postForm(fake.methodURL, { threeDSMethodData: padded }), '203', 'threeDSMethodData');
      assert.equal(paddedErro.errorComponent, 'A');
      assert.match(paddedErro.errorDescription, /padded/);
      assertErro(
        await postForm(fake.methodURL, { threeDSMethodData: Buffer.from(JSON.stringify(good)).toString('base64') + '+/' }),
        '203',
        'threeDSMethodData',
      );
      assertErro(await postForm(fake.methodURL, { threeDSMethodData: Buffer.from('not json').toString('base64url') }), '203', 'threeDSMethodData');
      assertErro(await postForm(fake.methodURL, {}), '201', 'threeDSMethodData');
      assertErro(await postForm(fake.methodURL, { threeDSMethodData: methodData(good) }, 'application/json'), '101', 'Content-Type');
      assertErro(
        await postForm(fake.methodURL, { threeDSMethodData: methodData({ ...good, threeDSServerTransID: undefined }) }),
        '201',
        'threeDSServerTransID',
      );
      assertErro(
        await postForm(fake.methodURL, { threeDSMethodData: methodData({ ...good, threeDSServerTransID: '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b' }) }),
        '301',
        'threeDSServerTransID',
      );
      for (const url of [undefined, 'http://acs-notify.example/m', 'ftp://127.0.0.1/m', 42]) {
        const answer = await postForm(fake.methodURL, { threeDSMethodData: methodData({ ...good, threeDSMethodNotificationURL: url }) });
        assertErro(answer, url === undefined ? '201' : '203', 'threeDSMethodNotificationURL');
      }
      assert.equal(fake.transaction(id)!.methodServed, false, 'refused requests serve nothing');
      for (const url of ['https://pay.gateway.example/3ds/method', 'http://localhost:3000/3ds/method']) {
        const answer = await postForm(fake.methodURL, { threeDSMethodData: methodData({ ...good, threeDSMethodNotificationURL: url }) });
        assert.equal(readPageForm(answer.text)!.action, url);
      }
      assert.equal(fake.transaction(id)!.methodServed, true);
    });

    test('no method for a card without a method URL, nor after /auth', async () => {
      const crd = await preauth(fake, PLAIN_22);
      assertErro((await runMethod(fake, crd)).answer, '305', 'threeDSServerTransID');
      const { crd: used } = await authenticate(fake, SANDBOX_PANS.frictionless);
      assertErro((await runMethod(fake, used)).answer, '305', 'threeDSServerTransID');
    });

    test('options: a padded notification, and the key of the sandbox sample', async () => {
      const other = await startThreeDSFake({ apiKeys: [API_KEY], padNotifications: true, methodNotificationKey: 'threeDSMethodData' });
      try {
        const crd = await preauth(other, SANDBOX_PANS.frictionless);
        const { form } = await runMethod(other, crd);
        const value = form!.fields.threeDSMethodData!;
        assert.equal(value.length % 4, 0);
        assert.deepEqual(decode(value.replace(/=+$/, '')), { threeDSMethodData: crd.threeDSServerTransID });
      } finally {
        await other.close();
      }
    });
  });

  describe('the challenge (§5 items 20–25) and /postauth (items 26–28)', () => {
    test('auto pass (7000100911112070): CReq → CRes Y posted to notificationURL → RReq Y at /postauth for 300 s', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengePass);
      const id = ares.threeDSServerTransID;
      const early = assertErro(await postauth(fake, id), '305', 'No response from directory server yet');
      assert.equal(early.errorDescription, 'No RReq has been received');
      assert.equal(early.threeDSServerTransID, id);

      const page = await postCReq(ares, creqOf(ares), 'c2Vzc2lvbi0xMjM');
      assert.equal(page.status, 200, page.text);
      const form = readPageForm(page.text)!;
      assert.ok(form.autoSubmits);
      assert.equal(form.action, NOTIFICATION_URL);
      assert.deepEqual(Object.keys(form.fields), ['cres', 'threeDSSessionData']);
      assert.equal(form.fields.threeDSSessionData, 'c2Vzc2lvbi0xMjM');
      assert.doesNotMatch(form.fields.cres!, /=/);
      assert.deepEqual(decode(form.fields.cres!), {
        acsTransID: ares.acsTransID,
        challengeCompletionInd: 'Y',
        messageType: 'CRes',
        messageVersion: '2.2.0',
        threeDSServerTransID: id,
        transStatus: 'Y',
      });

      const answer = await postauth(fake, id);
      assert.equal(answer.status, 200, answer.text);
      const rreq = answer.json;
      assert.equal(rreq.messageType, 'RReq');
      assert.equal(rreq.messageVersion, '2.2.0');
      assert.equal(rreq.messageCategory, '01');
      assert.equal(rreq.threeDSServerTransID, id);
      assert.equal(rreq.acsTransID, ares.acsTransID);
      assert.equal(rreq.dsTransID, ares.dsTransID);
      assert.equal(rreq.transStatus, 'Y');
      assert.equal(rreq.eci, '05');
      assert.match(rreq.authenticationValue, AV);
      assert.equal(rreq.authenticationType, '01');
      assert.equal(rreq.interactionCounter, '00');
      assert.ok(!('challengeCancel' in rreq) && !('transStatusReason' in rreq));
      const tx = fake.transaction(id)!;
      assert.equal(tx.state, 'completed');
      assert.deepEqual(tx.rreq, rreq);
      assert.equal(tx.challenge!.windowSize, '05');
      assert.equal(tx.challenge!.decision, 'Y');

      clock += 300_000;
      assert.equal((await postauth(fake, id)).status, 200, 'still there at 300 s');
      clock += 1;
      const gone = assertErro(await postauth(fake, id), '203', 'Unknown threeDSServerTransID');
      assert.equal(gone.errorDescription, 'Unknown threeDSServerTransID');
    });

    test('auto fail (3000101011111071, 2.1.0): CRes N, RReq N with transStatusReason and no AV', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengeFail);
      assert.equal(ares.messageVersion, '2.1.0');
      const form = readPageForm((await postCReq(ares, creqOf(ares, { challengeWindowSize: '01' }))).text)!;
      assert.deepEqual(Object.keys(form.fields), ['cres'], 'no threeDSSessionData when none was sent');
      const cres = decode(form.fields.cres!);
      assert.equal(cres.transStatus, 'N');
      assert.equal(cres.messageVersion, '2.1.0');
      const rreq = (await postauth(fake, ares.threeDSServerTransID)).json;
      assert.equal(rreq.transStatus, 'N');
      assert.equal(rreq.transStatusReason, '01');
      assert.equal(rreq.messageVersion, '2.1.0');
      assert.ok(!('authenticationValue' in rreq) && !('eci' in rreq));
    });

    test('manual (3000100811111072): a page with Authenticate, Fail authentication and Cancel, each posting the CRes', async () => {
      const results: Record<string, { cres: string; rreq: any }> = {};
      for (const label of ['Authenticate', 'Fail authentication', 'Cancel']) {
        const ares = await challengeAres(fake, SANDBOX_PANS.manualChallenge);
        const page = await postCReq(ares, creqOf(ares), 'abc');
        assert.equal(page.status, 200);
        assert.match(page.text, /<html lang="en">/);
        assert.match(page.text, /<h1>Authenticate this purchase<\/h1>/);
        const form = readPageForm(page.text)!;
        assert.equal(form.autoSubmits, false);
        assert.equal(form.action, `${fake.url}/acs/challenge/manual`);
        assert.deepEqual(
          form.buttons.map((b) => b.label),
          ['Authenticate', 'Fail authentication', 'Cancel'],
        );
        assert.equal(fake.transaction(ares.threeDSServerTransID)!.state, 'challenging');
        assertErro(await postauth(fake, ares.threeDSServerTransID), '305');

        const button = form.buttons.find((b) => b.label === label)!;
        const done = await postForm(form.action, { ...form.fields, [button.name]: button.value });
        const posted = readPageForm(done.text)!;
        assert.equal(posted.action, NOTIFICATION_URL);
        assert.equal(posted.fields.threeDSSessionData, 'abc');
        results[label] = { cres: decode(posted.fields.cres!).transStatus as string, rreq: (await postauth(fake, ares.threeDSServerTransID)).json };
        const again = await postForm(form.action, { ...form.fields, [button.name]: button.value });
        assertErro(again, '305', 'acsTransID');
      }
      assert.equal(results.Authenticate!.cres, 'Y');
      assert.equal(results.Authenticate!.rreq.transStatus, 'Y');
      assert.equal(results.Authenticate!.rreq.interactionCounter, '01');
      assert.equal(results['Fail authentication']!.cres, 'N');
      assert.equal(results['Fail authentication']!.rreq.transStatusReason, '01');
      assert.equal(results.Cancel!.cres, 'N');
      assert.equal(results.Cancel!.rreq.transStatus, 'N');
      assert.equal(results.Cancel!.rreq.challengeCancel, '01');
    });

    test('manual: a button pressed after 10 minutes finds the challenge timed out', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.manualChallenge);
      const form = readPageForm((await postCReq(ares, creqOf(ares))).text)!;
      clock += 10 * 60_000 + 1;
      const posted = readPageForm((await postForm(form.action, { ...form.fields, outcome: 'Y' })).text)!;
      assert.equal(decode(posted.fields.cres!).transStatus, 'N');
      const rreq = (await postauth(fake, ares.threeDSServerTransID)).json;
      assert.equal(rreq.challengeCancel, '04');
      assert.equal(rreq.transStatusReason, '14');
    });

    test('CReq rules: base64url without padding, messageType CReq, the ARes version and ids, challengeWindowSize 01–05, session data', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengePass);
      const creq = creqOf(ares);
      const padded = encodeBase64urlJson(creq, true);
      if (/=$/.test(padded)) assertErro(await postForm(ares.acsURL, { creq: padded }), '203', 'creq');
      assertErro(await postForm(ares.acsURL, { creq: `${encodeBase64urlJson(creq)}=` }), '203', 'creq');
      assertErro(await postForm(ares.acsURL, {}), '201', 'creq');
      assertErro(await postCReq(ares, creqOf(ares, { messageType: 'CRes' })), '101', 'messageType');
      const version = assertErro(await postCReq(ares, creqOf(ares, { messageVersion: '2.1.0' })), '102', 'messageVersion');
      assert.equal(version.errorComponent, 'A');
      assert.equal(version.errorMessageType, 'CReq');
      assert.equal(version.threeDSServerTransID, ares.threeDSServerTransID);
      assertErro(await postCReq(ares, creqOf(ares, { acsTransID: ares.dsTransID })), '301', 'acsTransID');
      assertErro(await postCReq(ares, creqOf(ares, { threeDSServerTransID: '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b' })), '301', 'threeDSServerTransID');
      assertErro(await postCReq(ares, creqOf(ares, { dsTransID: ares.acsTransID })), '301', 'dsTransID');
      assertErro(await postCReq(ares, creqOf(ares, { challengeWindowSize: '06' })), '203', 'challengeWindowSize');
      assertErro(await postCReq(ares, creqOf(ares, { challengeWindowSize: undefined })), '201', 'challengeWindowSize');
      assertErro(await postCReq(ares, creq, 'abc='), '203', 'threeDSSessionData');
      assertErro(await postCReq(ares, creq, 'a'.repeat(1025)), '203', 'threeDSSessionData');
      assert.equal(fake.transaction(ares.threeDSServerTransID)!.state, 'challenge', 'refused CReqs start nothing');

      const ok = await postCReq(ares, creqOf(ares, { dsTransID: ares.dsTransID }), 'a'.repeat(1024));
      assert.equal(ok.status, 200, ok.text);
      assertErro(await postCReq(ares, creq), '305', 'threeDSServerTransID');
    });

    test('the CReq must come within 30 s of the ARes; a frictionless transaction has no challenge', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengePass);
      clock += 30_001;
      assertErro(await postCReq(ares, creqOf(ares)), '402', 'CReq');
      assertErro(await postauth(fake, ares.threeDSServerTransID), '305');

      const inTime = await challengeAres(fake, SANDBOX_PANS.challengePass);
      clock += 30_000;
      assert.equal((await postCReq(inTime, creqOf(inTime))).status, 200);

      const { answer } = await authenticate(fake, PLAIN_22);
      assertErro(await postCReq({ ...answer.json, acsURL: fake.acsURL }, creqOf(answer.json)), '301', 'threeDSServerTransID');
    });

    test('setChallengeMode: an Erro posted as cres, an abandoned challenge, an automatic cancel, a CRes contradicting the RReq', async () => {
      const pan = sandboxPan({ outcome: 'C', prefix: '400000000111' });
      try {
        fake.setChallengeMode(pan, 'erro');
        const erroAres = await challengeAres(fake, pan);
        const erroForm = readPageForm((await postCReq(erroAres, creqOf(erroAres), 'xyz')).text)!;
        const erro = decode(erroForm.fields.cres!);
        assert.equal(erro.messageType, 'Erro');
        assert.equal(erro.errorComponent, 'A');
        assert.equal(erro.threeDSServerTransID, erroAres.threeDSServerTransID);
        assert.equal(erroForm.fields.threeDSSessionData, 'xyz');
        assert.equal(fake.transaction(erroAres.threeDSServerTransID)!.state, 'erro-posted');
        assertErro(await postauth(fake, erroAres.threeDSServerTransID), '305');

        fake.setChallengeMode(pan, 'abandon');
        const abandoned = await challengeAres(fake, pan);
        const page = await postCReq(abandoned, creqOf(abandoned));
        assert.equal(page.status, 200);
        assert.equal(readPageForm(page.text), undefined, 'never posts');
        assertErro(await postauth(fake, abandoned.threeDSServerTransID), '305');

        fake.setChallengeMode(pan, 'cancel');
        const cancelled = await challengeAres(fake, pan);
        const cancelForm = readPageForm((await postCReq(cancelled, creqOf(cancelled))).text)!;
        assert.equal(decode(cancelForm.fields.cres!).transStatus, 'N');
        assert.equal((await postauth(fake, cancelled.threeDSServerTransID)).json.challengeCancel, '01');

        fake.setChallengeMode(pan, 'cres-mismatch');
        const lying = await challengeAres(fake, pan);
        const lyingForm = readPageForm((await postCReq(lying, creqOf(lying))).text)!;
        assert.equal(decode(lyingForm.fields.cres!).transStatus, 'Y', 'the CRes says Y');
        assert.equal((await postauth(fake, lying.threeDSServerTransID)).json.transStatus, 'N', 'the RReq says N');
      } finally {
        fake.setChallengeMode(pan, undefined);
      }
      const normal = await challengeAres(fake, pan);
      assert.equal(decode(readPageForm((await postCReq(normal, creqOf(normal))).text)!.fields.cres!).transStatus, 'Y');
    });

    test('/postauth: the id is required (201) and a UUID (203); an unknown id is 203; a frictionless one has no RReq (305)', async () => {
      assertErro(await call(fake, '/postauth', {}), '201', 'threeDSServerTransID');
      assertErro(await call(fake, '/postauth', { threeDsServerTransId: '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b' }), '201', 'threeDSServerTransID');
      assertErro(await call(fake, '/postauth', { threeDSServerTransID: 'abc' }), '203', 'threeDSServerTransID');
      const unknown = assertErro(await postauth(fake, '8f0c5e2a-3b4d-4c6e-9a1b-2c3d4e5f6a7b'), '203', 'Unknown threeDSServerTransID');
      assert.equal(unknown.errorComponent, 'S');
      const { answer } = await authenticate(fake, PLAIN_22);
      assertErro(await postauth(fake, answer.json.threeDSServerTransID), '305', 'No response from directory server yet');
    });
  });

  describe('scripted failures', () => {
    test('hang: the /auth is carried out and never answered', async () => {
      const crd = await preauth(fake, PLAIN_22);
      const handle = fake.script({ path: '/auth', action: 'hang' });
      // The client gives up only once the fake has taken the request (not after a fixed time: a loaded host is slow).
      const abort = new AbortController();
      const pending = call(fake, '/auth', areqFor(crd, PLAIN_22), { signal: abort.signal });
      const deadline = Date.now() + 5_000;
      while (!fake.requestsTo('/auth').some((r) => r.scripted === 'hang' && r.processed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      abort.abort();
      await assert.rejects(pending);
      assert.equal(handle.done, true);
      const request = fake.requestsTo('/auth').at(-1)!;
      assert.equal(request.scripted, 'hang');
      assert.equal(request.processed, true);
      assert.equal(request.answered, false);
      assert.equal(fake.transaction(crd.threeDSServerTransID)!.state, 'frictionless');
      assertErro(await call(fake, '/auth', areqFor(crd, PLAIN_22)), '301', 'threeDSServerTransID');
    });

    test('http-500: an HTML 500, not carried out unless said so', async () => {
      fake.script({ path: '/preauth', action: 'http-500' });
      const before = fake.transactions.length;
      const answer = await call(fake, '/preauth', { acctNumber: PLAIN_22 });
      assert.equal(answer.status, 500);
      assert.equal(answer.contentType, 'text/html');
      assert.equal(fake.transactions.length, before);
      fake.script({ path: '/preauth', action: 'http-500', applied: true, status: 503 });
      assert.equal((await call(fake, '/preauth', { acctNumber: PLAIN_22 })).status, 503);
      assert.equal(fake.transactions.length, before + 1);
      assert.equal((await call(fake, '/preauth', { acctNumber: PLAIN_22 })).status, 200, 'one request only');
    });

    test('slow: answered after the delay; when and times narrow the script; cancel', async () => {
      const ares = await challengeAres(fake, SANDBOX_PANS.challengePass);
      await postCReq(ares, creqOf(ares));
      fake.script({ path: '/postauth', action: { slow: 250 } });
      const started = performance.now();
      assert.equal((await postauth(fake, ares.threeDSServerTransID)).status, 200);
      assert.ok(performance.now() - started >= 230);

      const handle = fake.script({ path: '/preauth', action: 'http-500', times: 2, when: (json) => json.acctNumber === SANDBOX_PANS.frictionless });
      assert.equal((await call(fake, '/preauth', { acctNumber: PLAIN_22 })).status, 200);
      assert.equal((await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless })).status, 500);
      assert.equal(handle.hits, 1);
      handle.cancel();
      assert.equal((await call(fake, '/preauth', { acctNumber: SANDBOX_PANS.frictionless })).status, 200);
    });
  });

  test('reset forgets requests, transactions, scripts and challenge modes', async () => {
    const crd = await preauth(fake, PLAIN_22);
    fake.script({ path: '/preauth', action: 'http-500' });
    fake.reset();
    assert.equal(fake.requests.length, 0);
    assert.equal(fake.acsRequests.length, 0);
    assert.equal(fake.transaction(crd.threeDSServerTransID), undefined);
    assert.equal((await call(fake, '/preauth', { acctNumber: PLAIN_22 })).status, 200);
  });
});
