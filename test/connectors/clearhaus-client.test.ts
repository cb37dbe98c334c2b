/**
 * The Clearhaus connector on the wire, against a tiny local HTTP server written here: the exact
 * headers and bodies of every flow, the signature checked over the bytes the server received,
 * answers read alike whatever the HTTP status, and the two ways a call can fail — not_sent (never
 * written: refused, DNS, TLS, no free slot in time) and in_doubt (written, no usable answer: 5xx,
 * 50000, a hang, a reset) — plus the in-flight bound and that no secret reaches a result or a log.
 */
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { AcquirerResult, AuthorizeRequest, OperationRequest } from '../../src/connectors/acquirer.js';
import { ClearhausAcquirer, type ClearhausAcquirerOptions } from '../../src/connectors/clearhaus/connector.js';
import { SigningKey } from '../../src/connectors/clearhaus/signing.js';

/** The docs' published example key pair (test use only; clearhaus.md §4.4). */
const DOCS_PRIVATE_KEY = `-----BEGIN RSA PRIVATE KEY-----
MIIBOwIBAAJBALYK0zmwuYkH3YWcFNLLddx5cwDxEY7Gi1xITuQqRrU4yD3uSw+J
WYKknb4Tbndb6iEHY+e6gIGD+49TojnNeIUCAwEAAQJARyuYRRe4kcBHdPL+mSL+
Y0IAGkAlUyKAXYXPghidKD/v/oLrFaZWALGM2clv6UoYYpPnInSgbcud4sTcfeUm
QQIhAN2JZ2qv0WGcbIopBpwpQ5jDxMGVkmkVVUEWWABGF8+pAiEA0lySxTELZm8b
Gx9UEDRghN+Qv/OuIKFldu1Ba4f8W30CIQCaQFIBtunTTVdF28r+cLzgYW9eWwbW
pEP4TdZ4WlW6AQIhAMDCTUdeUpjxlH/87BXROORozAXocBW8bvJUI486U5ctAiAd
InviQqJd1KTGRDmWIGrE5YACVmW2JSszD9t5VKxkAA==
-----END RSA PRIVATE KEY-----
`;
const DOCS_PUBLIC_KEY = createPublicKey(`-----BEGIN PUBLIC KEY-----
MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBALYK0zmwuYkH3YWcFNLLddx5cwDxEY7G
i1xITuQqRrU4yD3uSw+JWYKknb4Tbndb6iEHY+e6gIGD+49TojnNeIUCAwEAAQ==
-----END PUBLIC KEY-----
`);

const SIGNING_KEY_ID = '4390aec7-f76a-4c2f-8597-c87c2d06cb4f';
const API_KEY = 'f1b7c0de-5e1f-4c0a-9d2b-7a3e6c9d8b21';
const PAN = '4111111111111111';
const CSC = '987';
const AUTH_ID = '84412a34-fa29-4369-a098-0165a80e8fda';
const HAL = 'application/vnd.clearhaus-gateway.hal+json; version=0.10.0; charset=utf-8';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

type Respond = (req: Received, res: http.ServerResponse, raw: http.IncomingMessage) => void;

const received: Received[] = [];
/** Every result and log line of the file, checked for secrets at the end. */
const seen: unknown[] = [];
let respond: Respond;
let server: http.Server;
let base: string;
const connectors: ClearhausAcquirer[] = [];

const hal = (res: http.ServerResponse, status: number, body: unknown, contentType = HAL) => {
  res.writeHead(status, { 'content-type': contentType }).end(JSON.stringify(body));
};
const approvedWith = (id: string) => ({ id, status: { code: 20000 }, processed_at: '2026-08-01T10:15:00+00:00', _links: {} });

const logLines: unknown[] = [];
function connector(overrides: Partial<ClearhausAcquirerOptions> = {}): ClearhausAcquirer {
  const made = new ClearhausAcquirer({
    baseUrl: base,
    signingKeyId: SIGNING_KEY_ID,
    signingKey: SigningKey.fromPem(DOCS_PRIVATE_KEY),
    timeoutMs: 2_000,
    maxInFlight: 32,
    logger: { warn: (obj, msg) => logLines.push({ obj, msg }) },
    ...overrides,
  });
  connectors.push(made);
  return made;
}

const agreement = { apiKey: API_KEY, mcc: '5999', textOnStatement: 'Agreement Shop' };
const visa = { kind: 'card' as const, pan: PAN, expiryMonth: 6, expiryYear: 2030, cvc: CSC, holderName: 'Jane Doe' };

function authorizeRequest(overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    transactionId: '0ABCDEFGHJK',
    attempt: 1,
    amount: 2050,
    currency: 'EUR',
    instrument: visa,
    initiator: 'CIT',
    scaMode: null,
    capture: false,
    agreement,
    textOnStatement: null,
    clientIp: '203.0.113.7',
    series: null,
    ...overrides,
  };
}

function operation(overrides: Partial<OperationRequest> = {}): OperationRequest {
  return {
    transactionId: '0ABCDEFGHJK',
    operationId: '0190f5c2-8c1e-7b3a-9d4e-2f6a8b0c1d2e',
    attempt: 1,
    amount: 1000,
    currency: 'EUR',
    instrument: visa,
    authorizationReference: AUTH_ID,
    agreement,
    textOnStatement: null,
    ...overrides,
  };
}

async function track(result: Promise<AcquirerResult>): Promise<AcquirerResult> {
  const value = await result;
  seen.push(value);
  return value;
}

/** Resolves once `count` requests reached the server (or fails after a while). */
async function arrived(count: number): Promise<void> {
  for (let i = 0; i < 200 && received.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(received.length >= count, `${received.length} of ${count} requests arrived`);
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      received.push(entry);
      respond(entry, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  respond = (_req, res) => hal(res, 201, approvedWith(AUTH_ID));
});

/** The one request the server received, its headers checked: Basic auth, form type, a signature that verifies over the bytes received. */
function onlyRequest(): Received {
  assert.equal(received.length, 1);
  const req = received[0]!;
  assert.equal(req.headers.authorization, `Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`);
  if (req.method === 'POST') {
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(req.headers['content-length'], String(req.body.length));
    const signature = String(req.headers.signature);
    const match = /^([0-9a-f-]{36}) RS256-hex ([0-9a-f]+)$/.exec(signature);
    assert.ok(match, signature);
    assert.equal(match[1], SIGNING_KEY_ID);
    assert.ok(verify('sha256', req.body, DOCS_PUBLIC_KEY, Buffer.from(match[2]!, 'hex')), 'the signature verifies over the exact body received');
  }
  assert.equal(req.headers.connection, 'close', 'each request on a fresh connection');
  return req;
}

describe('Clearhaus connector: what goes on the wire', () => {
  test('a CIT that stores the card (first-in-series): initiator cardholder, credential_on_file=store, series[type], the card with CSC', async () => {
    const result = await track(connector().authorize(authorizeRequest({ textOnStatement: 'Order 42', series: { role: 'first', type: 'recurring' } })));
    assert.deepEqual(result, {
      outcome: 'approved',
      acquirerReference: AUTH_ID,
      externalStatusCodes: { terminal: null, acquirer: '20000', network: null, sca: null },
    });
    const req = onlyRequest();
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/authorizations');
    assert.equal(
      req.body.toString(),
      'amount=2050&currency=EUR&reference=0ABCDEFGHJK&text_on_statement=Order%2042&ip=203.0.113.7&initiator=cardholder&credential_on_file=store&series[type]=recurring' +
        `&card[pan]=${PAN}&card[expire_month]=06&card[expire_year]=2030&card[csc]=${CSC}`,
    );
  });

  test("a plain CIT: the agreement's statement text when the payment's does not qualify; no ip when it is not an address", async () => {
    await track(connector().authorize(authorizeRequest({ textOnStatement: '1234', clientIp: 'unknown', series: null })));
    assert.equal(
      onlyRequest().body.toString(),
      `amount=2050&currency=EUR&reference=0ABCDEFGHJK&text_on_statement=Agreement%20Shop&initiator=cardholder&card[pan]=${PAN}&card[expire_month]=06&card[expire_year]=2030&card[csc]=${CSC}`,
    );
  });

  test('a subsequent MIT: series[previous][id], the card without CSC, no initiator (Clearhaus defaults to merchant)', async () => {
    const previousId = '1b722683-92ad-4c6b-85da-e119d550670d';
    await track(connector().authorize(authorizeRequest({ initiator: 'MIT', clientIp: null, series: { role: 'subsequent', previousId } })));
    assert.equal(
      onlyRequest().body.toString(),
      `amount=2050&currency=EUR&reference=0ABCDEFGHJK&text_on_statement=Agreement%20Shop&series[previous][id]=${previousId}&card[pan]=${PAN}&card[expire_month]=06&card[expire_year]=2030`,
    );
  });

  test('a MOTO: the moto method, no CSC, no series, no credential_on_file', async () => {
    await track(connector().authorize(authorizeRequest({ initiator: 'MOTO', clientIp: null, series: { role: 'first', type: 'unscheduled' } })));
    assert.equal(
      onlyRequest().body.toString(),
      `amount=2050&currency=EUR&reference=0ABCDEFGHJK&text_on_statement=Agreement%20Shop&moto[pan]=${PAN}&moto[expire_month]=06&moto[expire_year]=2030`,
    );
  });

  test('capture: under the authorization, an explicit amount, the statement text only when it qualifies', async () => {
    respond = (_req, res) => hal(res, 201, approvedWith('d8e92a70-3030-4d4d-8ad2-684b230c1bed'));
    const result = await track(connector().capture(operation({ textOnStatement: 'Order 42' })));
    assert.equal(result.outcome === 'approved' && result.acquirerReference, 'd8e92a70-3030-4d4d-8ad2-684b230c1bed');
    const req = onlyRequest();
    assert.equal(req.url, `/authorizations/${AUTH_ID}/captures`);
    assert.equal(req.body.toString(), 'amount=1000&text_on_statement=Order%2042');
    received.length = 0;
    await track(connector().capture(operation({ textOnStatement: 'aaaa' })));
    assert.equal(onlyRequest().body.toString(), 'amount=1000');
  });

  test('refund: under the authorization (not the capture), an explicit amount', async () => {
    await track(connector().refund(operation({ amount: 500 })));
    const req = onlyRequest();
    assert.equal(req.url, `/authorizations/${AUTH_ID}/refunds`);
    assert.equal(req.body.toString(), 'amount=500');
  });

  test('void: an empty body, signed all the same', async () => {
    const result = await track(connector().void(operation()));
    assert.equal(result.outcome, 'approved');
    const req = onlyRequest();
    assert.equal(req.url, `/authorizations/${AUTH_ID}/voids`);
    assert.equal(req.body.length, 0);
    assert.equal(req.headers['content-length'], '0');
  });

  test('payout: POST /credits with the card (no CSC) and card[name] when the holder name fits', async () => {
    await track(connector().payout(operation({ amount: 50000, transactionId: '0PAYOUT0001' })));
    const req = onlyRequest();
    assert.equal(req.url, '/credits');
    assert.equal(
      req.body.toString(),
      `amount=50000&currency=EUR&reference=0PAYOUT0001&text_on_statement=Agreement%20Shop&card[pan]=${PAN}&card[expire_month]=06&card[expire_year]=2030&card[name]=Jane%20Doe`,
    );
    received.length = 0;
    await track(connector().payout(operation({ instrument: { ...visa, holderName: 'Jöns Ångström' } })));
    assert.ok(!onlyRequest().body.toString().includes('card[name]'));
  });

  test('a base URL with a path prefix keeps it', async () => {
    await track(connector({ baseUrl: `${base}/prefix/` }).void(operation()));
    assert.equal(onlyRequest().url, `/prefix/authorizations/${AUTH_ID}/voids`);
  });
});

describe('Clearhaus connector: reading answers', () => {
  test('201, 200 and 400 bodies are read alike; only 20000 approves', async () => {
    for (const status of [201, 200, 400]) {
      respond = (_req, res) => hal(res, status, approvedWith(AUTH_ID));
      assert.equal((await track(connector().authorize(authorizeRequest()))).outcome, 'approved', `HTTP ${status}`);
      respond = (_req, res) => hal(res, status, { status: { code: 40413, message: 'Insufficient funds' } });
      assert.deepEqual(await track(connector().authorize(authorizeRequest())), {
        outcome: 'declined',
        errorCode: 'INSUFFICIENT_FUNDS',
        message: 'Insufficient funds',
        externalStatusCodes: { terminal: null, acquirer: '40413', network: null, sca: null },
      });
    }
  });

  test('plain application/json is read too; a decline without a message gets the table text', async () => {
    respond = (_req, res) => hal(res, 400, { status: { code: 40000 } }, 'application/json; charset=utf-8');
    const result = await track(connector().authorize(authorizeRequest()));
    assert.deepEqual(result.outcome === 'declined' && [result.errorCode, result.message], ['ACQUIRER_DECLINED', 'General input error.']);
  });

  test('a decline whose message would echo the card number gets the table text instead', async () => {
    respond = (_req, res) => hal(res, 400, { status: { code: 40110, message: `card[pan] ${PAN} is invalid` } });
    const result = await track(connector().authorize(authorizeRequest()));
    assert.deepEqual(result.outcome === 'declined' && [result.errorCode, result.message], ['INVALID_CARD_NUMBER', 'Invalid card number.']);
  });

  test('HTTP 401: declined ACQUIRER_DECLINED, the message says the key was refused, never the key', async () => {
    respond = (_req, res) => res.writeHead(401).end();
    const result = await track(connector().authorize(authorizeRequest()));
    assert.equal(result.outcome, 'declined');
    assert.ok(result.outcome === 'declined' && result.errorCode === 'ACQUIRER_DECLINED' && /refused the API key/.test(result.message));
  });

  test('HTTP 404: declined ACQUIRER_DECLINED', async () => {
    respond = (_req, res) => res.writeHead(404).end();
    const result = await track(connector().capture(operation({ authorizationReference: 'f0000000-0000-4000-8000-000000000000' })));
    assert.ok(result.outcome === 'declined' && result.errorCode === 'ACQUIRER_DECLINED');
  });

  test('HTTP 500 and 502 (with an HTML page): in doubt', async () => {
    respond = (_req, res) => res.writeHead(500).end();
    assert.deepEqual(await track(connector().authorize(authorizeRequest())), {
      outcome: 'in_doubt',
      reason: 'No answer from Clearhaus: HTTP 500.',
      acquirerReference: null,
    });
    respond = (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
    assert.equal((await track(connector().capture(operation()))).outcome, 'in_doubt');
  });

  test('50000 on an authorization: in doubt with the id it named, ACQUIRER_DOWN, acquirer code 50000', async () => {
    const id = 'a50000aa-0000-4000-8000-000000000001';
    respond = (_req, res) => hal(res, 201, { id, status: { code: 50000, message: 'Clearhaus error' } });
    const result = await track(connector().authorize(authorizeRequest()));
    assert.equal(result.outcome, 'in_doubt');
    assert.ok(result.outcome === 'in_doubt');
    assert.equal(result.acquirerReference, id);
    assert.equal(result.errorCode, 'ACQUIRER_DOWN');
    assert.equal(result.externalStatusCodes?.acquirer, '50000');
  });

  test('50000 on a capture, refund, credit or void: in doubt (the operator resolves; a void may be sent again)', async () => {
    respond = (_req, res) => hal(res, 400, { id: 'c50000cc-0000-4000-8000-000000000002', status: { code: 50000 } });
    const c = connector();
    for (const result of [await c.capture(operation()), await c.refund(operation()), await c.payout(operation()), await c.void(operation())]) {
      seen.push(result);
      assert.ok(result.outcome === 'in_doubt' && result.acquirerReference === 'c50000cc-0000-4000-8000-000000000002');
    }
    assert.deepEqual(
      (['authorize', 'capture', 'refund', 'void', 'renew', 'payout'] as const).filter((call) => c.isRepeatable(call)),
      ['void'],
    );
  });

  test('an unreadable 201 body, and an approval without an id: in doubt', async () => {
    respond = (_req, res) => res.writeHead(201, { 'content-type': HAL }).end('{"id": "x", "status": ');
    assert.equal((await track(connector().authorize(authorizeRequest()))).outcome, 'in_doubt');
    respond = (_req, res) => hal(res, 201, { status: { code: 20000 } });
    assert.equal((await track(connector().authorize(authorizeRequest()))).outcome, 'in_doubt');
    respond = (_req, res) => res.writeHead(201, { 'content-type': 'text/plain' }).end(JSON.stringify(approvedWith(AUTH_ID)));
    assert.equal((await track(connector().authorize(authorizeRequest()))).outcome, 'in_doubt', 'a media type that is not HAL or JSON');
  });
});

describe('Clearhaus connector: transport failures', () => {
  test('a server that hangs past the timeout: in doubt, ended at the deadline', async () => {
    respond = () => undefined;
    const started = performance.now();
    const result = await track(connector({ timeoutMs: 300 }).authorize(authorizeRequest()));
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { outcome: 'in_doubt', reason: 'No answer from Clearhaus: no answer within 300 ms.', acquirerReference: null });
    assert.ok(elapsed >= 290 && elapsed < 1_500, `ended after ${elapsed} ms`);
    assert.equal(received.length, 1, 'the request was on the wire');
  });

  test('a socket destroyed after the request was read: in doubt', async () => {
    respond = (_req, _res, raw) => raw.socket.destroy();
    const result = await track(connector().capture(operation()));
    assert.equal(result.outcome, 'in_doubt');
    assert.equal(received.length, 1);
  });

  test('connection refused (nothing listening): not sent', async () => {
    const result = await track(connector({ baseUrl: `http://127.0.0.1:${await closedPort()}` }).authorize(authorizeRequest()));
    assert.deepEqual(result, { outcome: 'not_sent', reason: 'Not sent to Clearhaus: connection refused (ECONNREFUSED).' });
  });

  test('a TLS handshake that fails (https to a plain HTTP server): not sent, nothing reached the handler', async () => {
    const result = await track(connector({ baseUrl: base.replace('http:', 'https:') }).authorize(authorizeRequest()));
    assert.equal(result.outcome, 'not_sent');
    assert.equal(received.length, 0);
  });

  test('a host that does not resolve: not sent', async () => {
    const result = await track(connector({ baseUrl: 'http://clearhaus-gateway.invalid', timeoutMs: 3_000 }).authorize(authorizeRequest()));
    assert.equal(result.outcome, 'not_sent');
  });

  test('the in-flight bound: with 2 at most and a slow server, the third request is not on the wire until one ends', async () => {
    const held: http.ServerResponse[] = [];
    respond = (_req, res) => held.push(res);
    const c = connector({ maxInFlight: 2, timeoutMs: 5_000 });
    const calls = [1, 2, 3].map((n) => track(c.authorize(authorizeRequest({ transactionId: `0BOUND0000${n}` }))));
    await arrived(2);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(received.length, 2, 'the third waits for a slot');
    assert.deepEqual(
      received.map((r) => /reference=(\w+)/.exec(r.body.toString())?.[1]),
      ['0BOUND00001', '0BOUND00002'],
      'first come, first served',
    );
    hal(held.shift()!, 201, approvedWith(AUTH_ID));
    await arrived(3);
    assert.equal(/reference=(\w+)/.exec(received[2]!.body.toString())?.[1], '0BOUND00003');
    for (const res of held.splice(0)) hal(res, 201, approvedWith(AUTH_ID));
    assert.deepEqual(
      (await Promise.all(calls)).map((r) => r.outcome),
      ['approved', 'approved', 'approved'],
    );
  });

  test('signatures are made off the event loop, yet requests keep the order of the calls: one slot, eight calls, eight in turn', async () => {
    respond = (_req, res) => hal(res, 201, approvedWith(AUTH_ID));
    const c = connector({ maxInFlight: 1, timeoutMs: 10_000 });
    // Signed on libuv's pool (4 threads), eight signatures do not all finish in call order.
    const ids = Array.from({ length: 8 }, (_, n) => `0ORDER${String(n).padStart(5, '0')}`);
    const calls = ids.map((transactionId) => track(c.authorize(authorizeRequest({ transactionId }))));
    const results = await Promise.all(calls);
    assert.deepEqual(
      results.map((r) => r.outcome),
      ids.map(() => 'approved'),
    );
    assert.deepEqual(
      received.map((r) => /reference=(\w+)/.exec(r.body.toString())?.[1]),
      ids,
    );
  });

  test('a request still waiting for a slot at its deadline: not sent, and never written', async () => {
    const held: http.ServerResponse[] = [];
    respond = (_req, res) => held.push(res);
    const c = connector({ maxInFlight: 1, timeoutMs: 400 });
    const first = track(c.capture(operation()));
    await arrived(1);
    const second = await track(c.capture(operation({ operationId: 'second' })));
    // It waits half its timeout at most, so that a request that goes out has the other half on the wire.
    assert.deepEqual(second, { outcome: 'not_sent', reason: 'Not sent to Clearhaus: no free connection slot within 200 ms.' });
    assert.equal((await first).outcome, 'in_doubt', 'the first, on the wire, timed out');
    assert.equal(received.length, 1);
    for (const res of held) res.destroy();
  });

  test('closing the connector answers waiting requests not_sent', async () => {
    const held: http.ServerResponse[] = [];
    respond = (_req, res) => held.push(res);
    const c = connector({ maxInFlight: 1, timeoutMs: 5_000 });
    const first = track(c.refund(operation()));
    await arrived(1);
    const waiting = track(c.refund(operation({ operationId: 'waiting' })));
    await new Promise((r) => setTimeout(r, 50));
    const closing = c.close();
    assert.deepEqual(await waiting, { outcome: 'not_sent', reason: 'Not sent to Clearhaus: the connector is closing.' });
    hal(held.shift()!, 201, approvedWith(AUTH_ID));
    assert.equal((await first).outcome, 'approved', 'the request on the wire still gets its answer');
    await closing;
    assert.equal((await track(c.refund(operation()))).outcome, 'not_sent');
  });
});

describe('Clearhaus connector: answered here, nothing sent', () => {
  const cases: Array<[string, () => Promise<AcquirerResult>, string]> = [
    [
      'a wallet',
      () => connector().authorize(authorizeRequest({ instrument: { kind: 'wallet', paymentMethodType: 'APPLE_PAY' } })),
      'NOT_SUPPORTED_FOR_PAYMENT_METHOD',
    ],
    ['a currency Clearhaus does not list', () => connector().authorize(authorizeRequest({ currency: 'BGN' })), 'ACQUIRER_DECLINED'],
    ['a MIT without a series', () => connector().authorize(authorizeRequest({ initiator: 'MIT', series: null })), 'INVALID_AGREEMENT'],
    ['a card-present sale', () => connector().authorize(authorizeRequest({ initiator: 'TERMINAL' })), 'NOT_SUPPORTED_FOR_PAYMENT_METHOD'],
    ['an amount above 999 999 999', () => connector().authorize(authorizeRequest({ amount: 1_000_000_000 })), 'ACQUIRER_DECLINED'],
    ['no agreement', () => connector().authorize(authorizeRequest({ agreement: null })), 'MISSING_ACQUIRER_AGREEMENT'],
    ['a renewal', () => connector().renew(operation()), 'NOT_SUPPORTED_FOR_PAYMENT_METHOD'],
    ['a capture without an authorization', () => connector().capture(operation({ authorizationReference: null })), 'ACQUIRER_DECLINED'],
    [
      'a payout to a wallet',
      () => connector().payout(operation({ instrument: { kind: 'wallet', paymentMethodType: 'MOBILEPAY' } })),
      'NOT_SUPPORTED_FOR_PAYMENT_METHOD',
    ],
  ];
  for (const [what, call, errorCode] of cases) {
    test(`${what}: declined ${errorCode} without a request`, async () => {
      const result = await track(call());
      assert.ok(result.outcome === 'declined' && result.errorCode === errorCode, JSON.stringify(result));
      assert.equal(received.length, 0);
    });
  }

  test('an instant capture authorizes only (the engine captures next)', async () => {
    await track(connector().authorize(authorizeRequest({ capture: true })));
    assert.equal(onlyRequest().url, '/authorizations');
  });

  test('callTimeoutMs is the configured timeout', () => {
    assert.equal(connector({ timeoutMs: 12_345 }).callTimeoutMs, 12_345);
  });
});

describe('Clearhaus connector: GET /account', () => {
  test("the docs' example account, read; leading zeros of the merchant id kept", async () => {
    respond = (_req, res) =>
      hal(res, 200, {
        merchant_id: '000000003000001',
        name: 'Merchant Ltd.',
        country: 'GB',
        mcc: '1111',
        descriptor: 'merchant.com',
        transaction_rules: 'reject authorization if amount > 100 EUR and (not fully 3dsecure)',
        acquirer: { visa_bin: 438309, mastercard_bin: 526571 },
      });
    const lookup = await connector().account(API_KEY);
    assert.deepEqual(lookup, {
      ok: true,
      account: {
        merchantId: '000000003000001',
        descriptor: 'merchant.com',
        name: 'Merchant Ltd.',
        country: 'GB',
        currency: null,
        mcc: '1111',
        acquirer: { visaBin: '438309', mastercardBin: '526571' },
      },
    });
    const req = onlyRequest();
    assert.deepEqual([req.method, req.url], ['GET', '/account']);
  });

  test('a refused key, an unreadable answer, an unreachable host: typed errors', async () => {
    respond = (_req, res) => res.writeHead(401).end();
    assert.deepEqual(await connector().account(API_KEY), { ok: false, error: 'key_refused', message: 'Clearhaus refused the API key (HTTP 401).' });
    respond = (_req, res) => hal(res, 200, { name: 'no merchant id' });
    assert.equal(((await connector().account(API_KEY)) as { error: string }).error, 'bad_answer');
    const unreachable = await connector({ baseUrl: `http://127.0.0.1:${await closedPort()}` }).account(API_KEY);
    assert.equal((unreachable as { error: string }).error, 'unreachable');
    seen.push(unreachable);
  });
});

describe('Clearhaus connector: secrets', () => {
  test('no card number, CSC, API key, signing key or Signature value in any result or log line of this file', () => {
    assert.ok(seen.length > 40, `${seen.length} results checked`);
    const text = JSON.stringify([seen, logLines]);
    const pemLine = DOCS_PRIVATE_KEY.split('\n')[1]!;
    for (const secret of [PAN, API_KEY, Buffer.from(`${API_KEY}:`).toString('base64'), pemLine, 'RS256-hex', 'BEGIN RSA']) {
      assert.ok(!text.includes(secret), `found ${secret.slice(0, 6)}…`);
    }
    assert.ok(!new RegExp(`[^0-9]${CSC}[^0-9]`).test(text), 'the CSC');
    assert.ok(logLines.length > 0, 'in-doubt answers and the refused key were logged');
  });
});
