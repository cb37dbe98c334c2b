/**
 * The fake Clearhaus of test/support/clearhaus-fake.ts, checked against clearhaus.md with plain
 * fetch requests (nothing of our connector): the docs' signing test vectors verify, signatures and
 * Basic auth are enforced, every parameter rule refuses what Clearhaus refuses, the test host's
 * magic amounts answer, the capture/refund/void arithmetic of §4.1 holds, series need their latest
 * authorization, and each scripted failure does what it says (and still applies the request).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  basicAuthHeader,
  type ClearhausFake,
  CLEARHAUS_DOCS_KEY,
  HAL_CONTENT_TYPE,
  refusedUrl,
  signatureHeader,
  signBody,
  startClearhausFake,
} from '../support/clearhaus-fake.js';

const API_KEY = '0b2b0a8e-6d6c-4b8a-9f0e-3c1d2e4f5a61';
const OTHER_KEY = '5f7e2c1a-8b3d-4e6f-a1b2-c3d4e5f60718';
const UNTRUSTED_KEY = 'c9d8e7f6-a5b4-4c3d-8e2f-1a0b9c8d7e6f';
const MERCHANTS = [{ apiKey: API_KEY }, { apiKey: OTHER_KEY }, { apiKey: UNTRUSTED_KEY, trusted: false }];
const YEAR = String(new Date().getUTCFullYear() + 3);
const VISA = '4111111111111111';
const CARD = { 'card[pan]': VISA, 'card[expire_month]': '06', 'card[expire_year]': YEAR, 'card[csc]': '123' };

type Params = Record<string, string | undefined>;
interface Answer {
  status: number;
  statusText: string;
  contentType: string | null;
  text: string;
  json: any;
}
interface CallOptions {
  apiKey?: string;
  /** false: no Signature header; a string: this header value. Default: signed with the docs' key. */
  signature?: false | string;
  contentType?: string | null;
  signal?: AbortSignal;
  url?: string;
}

const encode = (params: Params) => new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();

async function call(fake: ClearhausFake, method: string, path: string, body?: string | Params, options: CallOptions = {}): Promise<Answer> {
  const raw = body === undefined ? '' : typeof body === 'string' ? body : encode(body);
  const headers: Record<string, string> = { authorization: basicAuthHeader(options.apiKey ?? API_KEY) };
  if (method === 'POST' && options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/x-www-form-urlencoded';
  if (options.signature !== false && (method === 'POST' || options.signature !== undefined)) {
    headers.signature = options.signature ?? signatureHeader(CLEARHAUS_DOCS_KEY.id, CLEARHAUS_DOCS_KEY.privateKeyPem, raw);
  }
  // fetch gives a string body `text/plain` of its own: without a Content-Type, send bytes (or nothing).
  const payload = method !== 'POST' ? undefined : options.contentType !== null ? raw : raw === '' ? undefined : Buffer.from(raw);
  const res = await fetch(`${options.url ?? fake.url}${path}`, { method, headers, body: payload, signal: options.signal });
  const text = await res.text();
  let json: any;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, statusText: res.statusText, contentType: res.headers.get('content-type'), text, json };
}

const authorize = (fake: ClearhausFake, params: Params = {}, options?: CallOptions) =>
  call(fake, 'POST', '/authorizations', { amount: '1000', currency: 'EUR', ...CARD, ...params }, options);

async function approved(fake: ClearhausFake, params: Params = {}, options?: CallOptions): Promise<string> {
  const answer = await authorize(fake, params, options);
  assert.equal(answer.status, 201, answer.text);
  assert.equal(answer.json.status.code, 20000);
  return answer.json.id as string;
}

const follow = (fake: ClearhausFake, id: string, operation: 'captures' | 'refunds' | 'voids', params: Params = {}, options?: CallOptions) =>
  call(fake, 'POST', `/authorizations/${id}/${operation}`, params, options);

function assertRefused(answer: Answer, code: number, message?: RegExp): void {
  assert.equal(answer.status, 400, answer.text);
  assert.equal(answer.contentType, HAL_CONTENT_TYPE);
  assert.equal(answer.json.status.code, code, answer.text);
  if (message) assert.match(answer.json.status.message, message);
}

describe('Clearhaus fake', () => {
  let fake: ClearhausFake;
  before(async () => {
    fake = await startClearhausFake({ merchants: MERCHANTS });
  });
  after(() => fake.close());

  describe('signing (§4.4)', () => {
    const vectors = [
      {
        body: 'amount=2050&currency=EUR&ip=1.1.1.1&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2022&card[csc]=123',
        hex: '7ae0e14d35b2a15a7ff812a1899d7f0a5d28063f0c276081876a51fc3773f499459f944f8b57c6e0e76b47c218b20ebaad7c6250dcd1804dd19c87fb7f1216ba',
      },
      {
        body: 'amount=2050&currency=EUR&ip=1.1.1.1&card[number]=4111111111111111&card[expire_month]=06&card[expire_year]=2018&card[csc]=123',
        hex: 'af30dfbca8ae965accde234e49f93ced184feb612faf440d12a3993bcce747b729069241dd1b6e68420607301d737c6828289b9889c38727a6cc853dbfcae103',
      },
      {
        body: 'amount=2050&card%5Bcsc%5D=123&card%5Bexpire_month%5D=06&card%5Bexpire_year%5D=2018&card%5Bpan%5D=4111111111111111&currency=EUR',
        hex: '8ecc11eba5becdb416e8a5b714b5f365529b9796b7c86b9eb774489b92d5bd92006c832640b222a2f21cfa55aa7ca633ebe46fc4877d0925f8283c3cc43911d7',
      },
      {
        body: 'amount=2050&card%5Bcsc%5D=123&card%5Bexpire_month%5D=06&card%5Bexpire_year%5D=2018&card%5Bnumber%5D=4111111111111111&currency=EUR',
        hex: '078a0772cba9b78b92e0972cec446f4ed44d57f02b31d93723f4c54160cd653deaa919a863121bb514e67a8a69c1d2ebc141969ec7241302f56ed1f6c60cdefd',
      },
    ];

    test("the four published test vectors verify with the docs' example key (their cards then fail as expired or removed)", async () => {
      for (const [i, { body, hex }] of vectors.entries()) {
        const answer = await call(fake, 'POST', '/authorizations', body, { signature: `${CLEARHAUS_DOCS_KEY.id} RS256-hex ${hex}` });
        assert.equal(fake.requests.at(-1)!.signature, 'valid', `vector ${i + 1}`);
        assert.doesNotMatch(answer.json.status.message, /sign/, `vector ${i + 1}`);
        // Vectors 2 and 4 use card[number] (removed); 1 and 3 cards expired in 2022 and 2018.
        assertRefused(answer, body.includes('card[number]') || body.includes('card%5Bnumber%5D') ? 40000 : 40135);
        // And the helper tests sign with computes the same bytes as openssl did for the docs.
        assert.equal(signBody(body, CLEARHAUS_DOCS_KEY.privateKeyPem), hex);
      }
    });

    test('a signature over other bytes is refused; so is the same body with brackets encoded differently', async () => {
      const { body, hex } = vectors[0]!;
      const tampered = body.replace('2050', '2051');
      assertRefused(
        await call(fake, 'POST', '/authorizations', tampered, { signature: `${CLEARHAUS_DOCS_KEY.id} RS256-hex ${hex}` }),
        40000,
        /invalid signature/,
      );
      assert.equal(fake.requests.at(-1)!.signature, 'invalid');
      const encoded = body.replaceAll('[', '%5B').replaceAll(']', '%5D');
      assertRefused(
        await call(fake, 'POST', '/authorizations', encoded, { signature: `${CLEARHAUS_DOCS_KEY.id} RS256-hex ${hex}` }),
        40000,
        /invalid signature/,
      );
      assert.equal(fake.requests.at(-1)!.processed, false);
    });

    test('an unknown signing key id is refused with "invalid signing api-key"', async () => {
      const body = encode({ amount: '1000', currency: 'EUR', ...CARD });
      const answer = await call(fake, 'POST', '/authorizations', body, {
        signature: signatureHeader(crypto.randomUUID(), CLEARHAUS_DOCS_KEY.privateKeyPem, body),
      });
      assertRefused(answer, 40000, /^invalid signing api-key$/);
      assert.equal(fake.requests.at(-1)!.signature, 'unknown-key-id');
    });

    test('a POST must be signed; the header must be "<key id> RS256-hex <lowercase hex>"; a GET may be unsigned', async () => {
      assertRefused(await authorize(fake, {}, { signature: false }), 40000, /must be signed/);
      const body = encode({ amount: '1000', currency: 'EUR', ...CARD });
      const hex = signBody(body, CLEARHAUS_DOCS_KEY.privateKeyPem);
      for (const header of [
        `${CLEARHAUS_DOCS_KEY.id} RS256-hex ${hex.toUpperCase()}`,
        `${CLEARHAUS_DOCS_KEY.id} RS256 ${hex}`,
        hex,
        `${CLEARHAUS_DOCS_KEY.id} RS256-hex  ${hex}`,
      ]) {
        assertRefused(await call(fake, 'POST', '/authorizations', body, { signature: header }), 40000, /malformed Signature header/);
      }
      assert.equal((await call(fake, 'GET', '/account')).status, 200);
      assertRefused(await call(fake, 'GET', '/account', undefined, { signature: `${CLEARHAUS_DOCS_KEY.id} RS256-hex 00ff` }), 40000, /invalid signature/);
    });

    test('a fake given its own key verifies with it and refuses the docs key', async () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const keyId = crypto.randomUUID();
      const own = await startClearhausFake({
        merchants: [{ apiKey: API_KEY }],
        signingKeyId: keyId,
        signingPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
      });
      try {
        const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
        const body = encode({ amount: '1000', currency: 'EUR', ...CARD });
        assert.equal((await call(own, 'POST', '/authorizations', body, { signature: signatureHeader(keyId, privatePem, body) })).status, 201);
        assertRefused(
          await call(own, 'POST', '/authorizations', body, { signature: signatureHeader(keyId, CLEARHAUS_DOCS_KEY.privateKeyPem, body) }),
          40000,
          /invalid signature/,
        );
      } finally {
        await own.close();
      }
    });
  });

  describe('Basic auth (§1.3)', () => {
    test('the API key is the username and the password is empty; anything else is a bare 401', async () => {
      const headers = [
        undefined,
        basicAuthHeader(crypto.randomUUID()),
        `Basic ${Buffer.from(`${API_KEY}:secret`).toString('base64')}`,
        `Basic ${Buffer.from(API_KEY).toString('base64')}`,
        `Bearer ${API_KEY}`,
        `basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`,
      ];
      for (const authorization of headers) {
        const res = await fetch(`${fake.url}/account`, { headers: authorization === undefined ? {} : { authorization } });
        assert.equal(res.status, 401, String(authorization));
        assert.equal(res.statusText, 'Not Authorized');
        assert.equal(await res.text(), '');
      }
      const ok = await call(fake, 'GET', '/account');
      assert.equal(ok.status, 200);
      assert.equal(ok.contentType, HAL_CONTENT_TYPE);
    });

    test('a bad API key is answered 401 before the signature is looked at', async () => {
      const answer = await authorize(fake, {}, { apiKey: crypto.randomUUID(), signature: false });
      assert.equal(answer.status, 401);
      assert.equal(answer.text, '');
    });
  });

  describe('request format and discovery (§1.2, §1.4, §1.5, §2.8)', () => {
    test('bodies must be form-encoded: JSON is refused, a charset parameter is fine, an empty void needs no Content-Type', async () => {
      const json = JSON.stringify({ amount: 1000, currency: 'EUR' });
      assertRefused(await call(fake, 'POST', '/authorizations', json, { contentType: 'application/json' }), 40000, /x-www-form-urlencoded/);
      assert.equal((await authorize(fake, {}, { contentType: 'application/x-www-form-urlencoded; charset=utf-8' })).status, 201);
      assertRefused(await call(fake, 'POST', '/authorizations', encode({ amount: '1000' }), { contentType: null }), 40000, /x-www-form-urlencoded/);
      const id = await approved(fake);
      const voided = await call(fake, 'POST', `/authorizations/${id}/voids`, '', { contentType: null });
      assert.equal(voided.status, 201, voided.text);
    });

    test('bracket keys work raw (curl -d) and percent-encoded (ActiveMerchant); a key given twice is refused', async () => {
      const raw = `amount=1000&currency=EUR&card[pan]=${VISA}&card[expire_month]=06&card[expire_year]=${YEAR}&card[csc]=987`;
      const encoded = raw.replaceAll('[', '%5B').replaceAll(']', '%5D');
      for (const body of [raw, encoded]) {
        const answer = await call(fake, 'POST', '/authorizations', body);
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(answer.json.csc, { present: true, matches: true });
        assert.equal(fake.requests.at(-1)!.form['card[pan]'], VISA);
        assert.equal(fake.requests.at(-1)!.body, body);
      }
      assertRefused(await call(fake, 'POST', '/authorizations', `${raw}&amount=2000`), 40000, /'amount' is given more than once/);
    });

    test('an approval is 201 HAL JSON shaped like the docs, and GET /authorizations/:id shows the same', async () => {
      const answer = await authorize(fake, { reference: 'order-17', text_on_statement: 'Shop 42', ip: '2001:db8::1' });
      assert.equal(answer.status, 201);
      assert.equal(answer.contentType, HAL_CONTENT_TYPE);
      const id = answer.json.id;
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(answer.json.status, { code: 20000 });
      assert.match(answer.json.processed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
      assert.equal(answer.json.amount, 1000);
      assert.equal(answer.json.currency, 'EUR');
      assert.equal(answer.json.text_on_statement, 'Shop 42');
      assert.equal(answer.json.reference, 'order-17');
      assert.deepEqual(answer.json.csc, { present: true, matches: false });
      assert.deepEqual(answer.json._links.captures, { href: `/authorizations/${id}/captures` });
      const fetched = await call(fake, 'GET', `/authorizations/${id}`);
      assert.equal(fetched.status, 200);
      assert.deepEqual(fetched.json, answer.json);
    });

    test('the account descriptor is the default text on statement', async () => {
      const answer = await authorize(fake);
      assert.equal(answer.json.text_on_statement, 'Fake Shop');
    });

    test('GET / links the resources; GET /account describes the merchant', async () => {
      const root = await call(fake, 'GET', '/');
      assert.equal(root.status, 200);
      assert.deepEqual(root.json._links, { authorizations: { href: '/authorizations' }, account: { href: '/account' } });
      const named = await startClearhausFake({
        merchants: [{ apiKey: API_KEY, merchantId: '000000000000042', descriptor: 'Acme', mcc: '5999', currency: 'DKK' }],
      });
      try {
        const account = await call(named, 'GET', '/account');
        assert.equal(account.status, 200);
        assert.equal(account.json.merchant_id, '000000000000042');
        assert.equal(account.json.descriptor, 'Acme');
        assert.equal(account.json.mcc, '5999');
        assert.equal(account.json.currency, 'DKK');
        assert.equal(account.json.country, 'DK');
        assert.deepEqual(account.json.acquirer, { visa_bin: 438309, mastercard_bin: 526571 });
        assert.equal(typeof account.json.transaction_rules, 'string');
      } finally {
        await named.close();
      }
      assert.match((await call(fake, 'GET', '/account')).json.merchant_id, /^[0-9]{15}$/);
    });

    test('unknown routes and methods are 404 with no body', async () => {
      for (const [method, path] of [
        ['GET', '/nowhere'],
        ['GET', '/credits'],
        ['POST', '/account'],
        ['GET', '/authorizations'],
        ['POST', '/cards'],
        ['POST', '/debits'],
      ] as const) {
        const answer = await call(fake, method, path, method === 'POST' ? '' : undefined);
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.equal(answer.text, '');
      }
    });
  });

  describe('authorization parameters (§2.1, §2.10, §4.2)', () => {
    const refusals: Array<[string, Params, number, RegExp]> = [
      ['amount missing', { amount: undefined }, 40000, /'amount' is required/],
      ['amount with a leading zero', { amount: '01' }, 40000, /'amount'/],
      ['amount of ten digits', { amount: '1000000000' }, 40000, /'amount'/],
      ['negative amount', { amount: '-5' }, 40000, /'amount'/],
      ['decimal amount', { amount: '12.50' }, 40000, /'amount'/],
      ['currency missing', { currency: undefined }, 40000, /'currency' is required/],
      ['unknown currency', { currency: 'ABC' }, 40140, /invalid currency.*'currency'/],
      ['lower-case currency', { currency: 'eur' }, 40140, /'currency'/],
      ['retired currency HRK', { currency: 'HRK' }, 40140, /'currency'/],
      ['ip that is no address', { ip: '999.1.1.1' }, 40000, /'ip'/],
      ['ip with letters', { ip: 'localhost' }, 40000, /'ip'/],
      ['reference of 31 characters', { reference: 'r'.repeat(31) }, 40000, /'reference'/],
      ['reference not printable ASCII', { reference: 'ordre-æ' }, 40000, /'reference'/],
      ['empty reference', { reference: '' }, 40000, /'reference'/],
      ['text_on_statement all digits', { text_on_statement: '123456' }, 40150, /'text_on_statement'.*digits/],
      ['text_on_statement one repeated character', { text_on_statement: 'aaaa' }, 40150, /'text_on_statement'.*repeated/],
      ['text_on_statement sequential', { text_on_statement: 'abcdef' }, 40150, /'text_on_statement'.*sequential/],
      ['text_on_statement sequential backwards', { text_on_statement: 'FEDC' }, 40150, /'text_on_statement'.*sequential/],
      ['text_on_statement of one character', { text_on_statement: 'x' }, 40150, /'text_on_statement'/],
      ['text_on_statement of 23 characters', { text_on_statement: 'Shop '.repeat(4) + 'abc' }, 40150, /'text_on_statement'/],
      ['text_on_statement with a tab', { text_on_statement: 'Shop\t42' }, 40150, /'text_on_statement'/],
      ['the removed `recurring` parameter', { recurring: 'true' }, 40000, /'recurring' was removed/],
      ['sca_exemption not in the list', { sca_exemption: 'whitelisted' }, 40000, /'sca_exemption'/],
      ['initiator not in the list', { initiator: 'robot' }, 40000, /'initiator'/],
      ['credential_on_file not in the list', { credential_on_file: 'keep' }, 40000, /'credential_on_file'/],
      ['credential_on_file=store with initiator=merchant', { credential_on_file: 'store', initiator: 'merchant' }, 40000, /'credential_on_file'.*'merchant'/],
      ['series[type] not in the list', { 'series[type]': 'monthly' }, 40000, /'series\[type\]'/],
      ['series[type] with series[previous][id]', { 'series[type]': 'recurring', 'series[previous][id]': crypto.randomUUID() }, 40000, /mutually exclusive/],
      ['series with sca_exemption', { 'series[type]': 'recurring', sca_exemption: 'low_value_payment' }, 40000, /'sca_exemption'/],
      ['series[previous][id] not a UUID', { 'series[previous][id]': '1234' }, 40000, /'series\[previous\]\[id\]'/],
      ['raw scheme series reference', { 'series[previous][visa][tid]': '123456789012345' }, 40200, /explicit approval/],
      [
        'no payment method',
        { 'card[pan]': undefined, 'card[expire_month]': undefined, 'card[expire_year]': undefined, 'card[csc]': undefined },
        40000,
        /exactly one payment method/,
      ],
      ['two payment methods', { 'moto[pan]': VISA }, 40000, /exactly one payment method.*card and moto/],
      ['card[pan] missing', { 'card[pan]': undefined }, 40000, /'card\[pan\]' is required/],
      ['card[pan] of 11 digits', { 'card[pan]': '41111111111' }, 40110, /'card\[pan\]'/],
      ['card[pan] of 20 digits', { 'card[pan]': '41111111111111111111' }, 40110, /'card\[pan\]'/],
      ['card[pan] with spaces', { 'card[pan]': '4111 1111 1111 1111' }, 40110, /'card\[pan\]'/],
      ['card[expire_month] of one digit', { 'card[expire_month]': '6' }, 40130, /'card\[expire_month\]'/],
      ['card[expire_month] 13', { 'card[expire_month]': '13' }, 40130, /'card\[expire_month\]'/],
      ['card[expire_month] 00', { 'card[expire_month]': '00' }, 40130, /'card\[expire_month\]'/],
      ['card[expire_year] of two digits', { 'card[expire_year]': '29' }, 40130, /'card\[expire_year\]'/],
      ['card[expire_year] 1999', { 'card[expire_year]': '1999' }, 40130, /'card\[expire_year\]'/],
      ['an expired card', { 'card[expire_month]': '01', 'card[expire_year]': '2020' }, 40135, /expired/],
      ['card[csc] of two digits', { 'card[csc]': '12' }, 40120, /'card\[csc\]'/],
      ['card[csc] of four digits', { 'card[csc]': '1234' }, 40120, /'card\[csc\]'/],
      ['3-D Secure v1', { 'card[3dsecure][v1][pares]': 'abc' }, 40000, /'card\[3dsecure\]\[v1\]\[pares\]'/],
      ['an ARes that is not JSON', { 'card[3dsecure][v2][ares]': 'not json' }, 40300, /'card\[3dsecure\]\[v2\]\[ares\]'/],
      ['both ARes and RReq', { 'card[3dsecure][v2][ares]': '{}', 'card[3dsecure][v2][rreq]': '{}' }, 40000, /exactly one of/],
      [
        'a payment method the fake does not speak',
        { 'card[pan]': undefined, 'card[expire_month]': undefined, 'card[expire_year]': undefined, 'card[csc]': undefined, 'applepay[payment_token]': '{}' },
        40000,
        /'applepay' is not supported/,
      ],
    ];
    for (const [name, params, code, message] of refusals) {
      test(`refused: ${name}`, async () => {
        assertRefused(await authorize(fake, params), code, message);
        assert.equal(fake.requests.at(-1)!.reply!.body!.id, undefined, 'an input error creates no transaction');
      });
    }

    const accepted: Array<[string, Params]> = [
      ['amount 0 (verification)', { amount: '0' }],
      ['amount 999999999', { amount: '999999999' }],
      ['JPY (exponent 0)', { currency: 'JPY' }],
      ['ISK (exponent 0)', { currency: 'ISK' }],
      ['KWD (exponent 3)', { currency: 'KWD' }],
      ['DKK', { currency: 'DKK' }],
      ['IPv4', { ip: '1.1.1.1' }],
      ['IPv6', { ip: '::1' }],
      ['reference of 30 printable characters', { reference: '~'.repeat(15) + ' '.repeat(14) + '!' }],
      ['text_on_statement of 22 characters', { text_on_statement: 'The Fake Shop of Aarhu' }],
      ['a 12-digit PAN that fails Luhn', { 'card[pan]': '411111111112' }],
      ['a 19-digit PAN', { 'card[pan]': '4111111111111111112' }],
      [
        'an expiry in the current month',
        { 'card[expire_month]': String(new Date().getUTCMonth() + 1).padStart(2, '0'), 'card[expire_year]': String(new Date().getUTCFullYear()) },
      ],
      ['initiator=cardholder with credential_on_file=use', { initiator: 'cardholder', credential_on_file: 'use' }],
      ['sca_exemption', { sca_exemption: 'transaction_risk_analysis' }],
      ['unknown parameters are ignored', { order_id: '17', 'billing_address[city]': 'Aarhus' }],
      [
        'a raw 3-D Secure result',
        {
          'card[3dsecure][v2][raw][eci]': '05',
          'card[3dsecure][v2][raw][av]': 'mK225wGt2bLnnLB0UlRky0oHLnU=',
          'card[3dsecure][v2][raw][trans_status]': 'Y',
          'card[3dsecure][v2][raw][message_version]': '2.2.0',
          'card[3dsecure][v2][raw][message_type]': 'ARes',
        },
      ],
    ];
    for (const [name, params] of accepted) {
      test(`accepted: ${name}`, async () => {
        await approved(fake, params);
      });
    }

    test('an ARes goes through whole and its version and status come back', async () => {
      const ares = JSON.stringify({ messageType: 'ARes', messageVersion: '2.2.0', transStatus: 'Y', authenticationValue: 'AAABBBCCCDDDEEEFFFGGGHHHIII=' });
      const answer = await authorize(fake, { 'card[3dsecure][v2][ares]': ares });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(answer.json['3dsecure'], { version: '2.2.0', status: 'Y' });
    });

    test('card[csc] may be left out only by a trusted partner (every POST being signed)', async () => {
      const trusted = await authorize(fake, { 'card[csc]': undefined });
      assert.equal(trusted.status, 201, trusted.text);
      assert.deepEqual(trusted.json.csc, { present: false, matches: false });
      assertRefused(await authorize(fake, { 'card[csc]': undefined }, { apiKey: UNTRUSTED_KEY }), 40000, /'card\[csc\]' is required/);
      assert.equal((await authorize(fake, {}, { apiKey: UNTRUSTED_KEY })).status, 201);
    });

    test('moto: moto[pan|expire_month|expire_year], no series or credential_on_file, initiator not merchant', async () => {
      const moto = { 'moto[pan]': VISA, 'moto[expire_month]': '06', 'moto[expire_year]': YEAR };
      const noCard = { 'card[pan]': undefined, 'card[expire_month]': undefined, 'card[expire_year]': undefined, 'card[csc]': undefined };
      const answer = await authorize(fake, { ...noCard, ...moto });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.csc, undefined);
      assert.equal(fake.authorization(answer.json.id)!.method, 'moto');
      assertRefused(await authorize(fake, { ...noCard, ...moto, 'series[type]': 'recurring' }), 40000, /'series'.*moto/);
      assertRefused(await authorize(fake, { ...noCard, ...moto, credential_on_file: 'use' }), 40000, /'credential_on_file'.*moto/);
      assertRefused(await authorize(fake, { ...noCard, ...moto, initiator: 'merchant' }), 40000, /'initiator'.*moto/);
      assertRefused(await authorize(fake, { ...noCard, ...moto, 'moto[expire_year]': '26' }), 40130, /'moto\[expire_year\]'/);
      assertRefused(await authorize(fake, { ...noCard, ...moto, 'moto[pan]': '123' }), 40110, /'moto\[pan\]'/);
    });
  });

  describe('3-D Secure (§2.1.1; 3dsecure-io.md §4, §5 items 30–35)', () => {
    const ARES_KEY = 'card[3dsecure][v2][ares]';
    const RREQ_KEY = 'card[3dsecure][v2][rreq]';
    const MASTERCARD = '2221000000000009';
    /** The docs' frictionless ARes (3dsecure-io.md §4), byte for byte. */
    const DOCS_ARES =
      '{"acsOperatorID":"3dsecure.io-standin-acs","acsReferenceNumber":"3dsecure.io-standin-acs","acsTransID":"43163cd0-c849-4924-82c1-7bec32b94881","authenticationValue":"mK225wGt2bLnnLB0UlRky0oHLnU=","dsReferenceNumber":"3dsecure.io-standin-ds","dsTransID":"1cf815e5-cc85-436f-8e13-9f5e5aea731f","eci":"05","messageType":"ARes","messageVersion":"2.1.0","threeDSServerTransID":"3f1ed47a-2edc-4b0e-a4cf-bdb0f65d48c6","transStatus":"Y"}';
    const ares = (fields: Record<string, unknown> = {}) =>
      JSON.stringify({ ...(JSON.parse(DOCS_ARES) as Record<string, unknown>), messageVersion: '2.2.0', ...fields });
    const rreq = (fields: Record<string, unknown> = {}) =>
      JSON.stringify({
        messageType: 'RReq',
        messageVersion: '2.2.0',
        threeDSServerTransID: '3f1ed47a-2edc-4b0e-a4cf-bdb0f65d48c6',
        acsTransID: '43163cd0-c849-4924-82c1-7bec32b94881',
        dsTransID: '1cf815e5-cc85-436f-8e13-9f5e5aea731f',
        messageCategory: '01',
        interactionCounter: '01',
        authenticationType: '02',
        transStatus: 'Y',
        authenticationValue: 'mK225wGt2bLnnLB0UlRky0oHLnU=',
        eci: '05',
        ...fields,
      });
    const raw = (fields: Record<string, string | undefined>): Params =>
      Object.fromEntries(Object.entries(fields).map(([name, value]) => [`card[3dsecure][v2][raw][${name}]`, value]));
    /** The raw Mastercard example of 3dsecure-io.md §4 (from an RReq). */
    const MC_RAW = {
      eci: '02',
      av: '28oQUBZwIc2E16nA0W4qwixG0A0=',
      trans_status: 'Y',
      message_version: '2.2.0',
      message_type: 'RReq',
      authentication_type: '01',
      ds_trans_id: 'a0bf2f11-9368-4898-be0b-fd5314c912b2',
    };
    const VISA_RAW = { eci: '05', av: 'mK225wGt2bLnnLB0UlRky0oHLnU=', trans_status: 'Y', message_version: '2.2.0', message_type: 'ARes' };

    test("the docs' ARes is accepted, echoed as 3dsecure {version, status} (also by GET) and kept as the exact string", async () => {
      const answer = await authorize(fake, { [ARES_KEY]: DOCS_ARES });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(answer.json['3dsecure'], { version: '2.1.0', status: 'Y' });
      assert.deepEqual((await call(fake, 'GET', `/authorizations/${answer.json.id}`)).json['3dsecure'], { version: '2.1.0', status: 'Y' });
      assert.deepEqual(fake.authorization(answer.json.id)!.threeDSecure, {
        kind: 'ares',
        message: DOCS_ARES,
        messageType: 'ARes',
        version: '2.1.0',
        transStatus: 'Y',
      });
    });

    test('the record keeps the ARes byte for byte as sent: whitespace, key order, + / = and non-ASCII are not re-serialised', async () => {
      const sent = `{ "transStatus" : "A",\n  "messageType":"ARes", "messageVersion":"2.2.0", "eci":"06",
  "authenticationValue":"AJkBBkhgQQAAAE4gSEJydQAAAAA=", "acsOperatorID":"ACS ø+/=&%", "x":1.50 }`;
      const answer = await authorize(fake, { [ARES_KEY]: sent });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(answer.json['3dsecure'], { version: '2.2.0', status: 'A' });
      const record = fake.authorization(answer.json.id)!.threeDSecure!;
      assert.equal(record.kind, 'ares');
      assert.equal(record.message, sent);
      assert.notEqual(record.message, JSON.stringify(JSON.parse(sent)));
      assert.equal(fake.requests.at(-1)!.form[ARES_KEY], sent);
    });

    test('an RReq (challenge result) is accepted and echoed; an ARes with U or I is a result too', async () => {
      const message = rreq();
      const answer = await authorize(fake, { [RREQ_KEY]: message });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(answer.json['3dsecure'], { version: '2.2.0', status: 'Y' });
      const record = fake.authorization(answer.json.id)!.threeDSecure!;
      assert.equal(record.kind, 'rreq');
      assert.equal(record.message, message);
      assert.equal(record.messageType, 'RReq');
      for (const transStatus of ['U', 'I']) {
        const frictionless = await authorize(fake, { [ARES_KEY]: ares({ transStatus, authenticationValue: undefined, eci: '07' }) });
        assert.equal(frictionless.status, 201, frictionless.text);
        assert.equal(frictionless.json['3dsecure'].status, transStatus);
      }
    });

    test("raw results: the docs' Mastercard example and a Visa ARes are accepted; the record keeps the fields", async () => {
      const mc = await authorize(fake, { 'card[pan]': MASTERCARD, ...raw(MC_RAW) });
      assert.equal(mc.status, 201, mc.text);
      assert.deepEqual(mc.json['3dsecure'], { version: '2.2.0', status: 'Y' });
      assert.deepEqual(fake.authorization(mc.json.id)!.threeDSecure, {
        kind: 'raw',
        message: MC_RAW,
        messageType: 'RReq',
        version: '2.2.0',
        transStatus: 'Y',
      });
      // On the wire, the + / = of av percent-encoded (URLSearchParams does it): decoded back as sent.
      assert.match(fake.requests.at(-1)!.body, /card%5B3dsecure%5D%5Bv2%5D%5Braw%5D%5Bav%5D=28oQUBZwIc2E16nA0W4qwixG0A0%3D/);
      for (const av of ['mK225wGt2bLnnLB0UlRky0oHLnU=', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'mK225wGt2bLnnLB0UlRky0oHLn==']) {
        const visa = await authorize(fake, raw({ ...VISA_RAW, av }));
        assert.equal(visa.status, 201, `${av}: ${visa.text}`);
      }
      // Mastercard N: no eci/av needed (only for Y, A, I, U); ds_trans_id still is.
      const mcFailed = await authorize(fake, { 'card[pan]': MASTERCARD, ...raw({ ...MC_RAW, trans_status: 'N', eci: undefined, av: undefined }) });
      assert.equal(mcFailed.json.status.code, 40310, mcFailed.text);
    });

    const refusals: Array<[string, Params, number, RegExp]> = [
      [
        'ARes and raw together',
        { [ARES_KEY]: DOCS_ARES, ...raw(VISA_RAW) },
        40000,
        /'card\[3dsecure\]\[v2\]\[ares\]' and 'card\[3dsecure\]\[v2\]\[raw\]' cannot be combined/,
      ],
      [
        'RReq and raw together',
        { [RREQ_KEY]: rreq(), ...raw(VISA_RAW) },
        40000,
        /'card\[3dsecure\]\[v2\]\[rreq\]' and 'card\[3dsecure\]\[v2\]\[raw\]' cannot be combined/,
      ],
      [
        'all three',
        { [ARES_KEY]: DOCS_ARES, [RREQ_KEY]: rreq(), ...raw(VISA_RAW) },
        40000,
        /'card\[3dsecure\]\[v2\]\[ares\]' and 'card\[3dsecure\]\[v2\]\[rreq\]' and 'card\[3dsecure\]\[v2\]\[raw\]'/,
      ],
      [
        'none of the three under card[3dsecure][v2]',
        { 'card[3dsecure][v2][cavv]': 'x' },
        40000,
        /'card\[3dsecure\]\[v2\]\[cavv\]' is not supported.*exactly one of/,
      ],
      ['an ARes that is not JSON', { [ARES_KEY]: '{"messageType":"ARes",' }, 40300, /'card\[3dsecure\]\[v2\]\[ares\]'.*JSON/],
      ['an empty ARes', { [ARES_KEY]: '' }, 40300, /'card\[3dsecure\]\[v2\]\[ares\]'/],
      ['an ARes that is a JSON array', { [ARES_KEY]: `[${DOCS_ARES}]` }, 40300, /'card\[3dsecure\]\[v2\]\[ares\]'.*JSON object/],
      ['an RReq that is not JSON', { [RREQ_KEY]: 'transStatus=Y' }, 40300, /'card\[3dsecure\]\[v2\]\[rreq\]'/],
      ['an RReq sent as the ARes', { [ARES_KEY]: rreq() }, 40300, /'card\[3dsecure\]\[v2\]\[ares\]'.*must be an ARes.*"RReq"/],
      ['an ARes sent as the RReq', { [RREQ_KEY]: DOCS_ARES }, 40300, /'card\[3dsecure\]\[v2\]\[rreq\]'.*must be an RReq.*"ARes"/],
      ['a CRes sent as the RReq', { [RREQ_KEY]: rreq({ messageType: 'CRes' }) }, 40300, /must be an RReq/],
      ['an ARes without messageType', { [ARES_KEY]: ares({ messageType: undefined }) }, 40300, /must be an ARes.*missing/],
      ['an ARes without messageVersion', { [ARES_KEY]: ares({ messageVersion: undefined }) }, 40300, /no messageVersion/],
      ['an RReq without transStatus', { [RREQ_KEY]: rreq({ transStatus: undefined }) }, 40300, /no transStatus/],
      [
        'an ARes with transStatus C (challenge pending)',
        { [ARES_KEY]: ares({ transStatus: 'C', authenticationValue: undefined }) },
        40300,
        /transStatus C.*send the RReq/,
      ],
      [
        'an ARes with transStatus D (decoupled pending)',
        { [ARES_KEY]: ares({ transStatus: 'D', authenticationValue: undefined }) },
        40300,
        /transStatus D.*send the RReq/,
      ],
      ['a raw ARes with trans_status C', raw({ ...VISA_RAW, trans_status: 'C' }), 40300, /'card\[3dsecure\]\[v2\]\[raw\]\[trans_status\]'.*transStatus C/],
      ['raw for Visa without eci', raw({ ...VISA_RAW, eci: undefined }), 40300, /'card\[3dsecure\]\[v2\]\[raw\]\[eci\]' is required for Visa/],
      ['raw for Visa without av', raw({ ...VISA_RAW, av: undefined }), 40300, /'card\[3dsecure\]\[v2\]\[raw\]\[av\]' is required for Visa/],
      [
        'raw for Visa N without eci (Visa needs it whatever the status)',
        raw({ ...VISA_RAW, trans_status: 'N', eci: undefined }),
        40300,
        /\[eci\]' is required for Visa/,
      ],
      [
        'raw for Mastercard without ds_trans_id',
        { 'card[pan]': MASTERCARD, ...raw({ ...MC_RAW, ds_trans_id: undefined }) },
        40300,
        /'card\[3dsecure\]\[v2\]\[raw\]\[ds_trans_id\]' is required for Mastercard/,
      ],
      [
        'raw for Mastercard (5…) A without av',
        { 'card[pan]': '5000000000000004', ...raw({ ...MC_RAW, trans_status: 'A', av: undefined }) },
        40300,
        /\[av\]' is required for Mastercard when trans_status is A/,
      ],
      [
        'raw for Mastercard U without eci',
        { 'card[pan]': MASTERCARD, ...raw({ ...MC_RAW, trans_status: 'U', eci: undefined }) },
        40300,
        /\[eci\]' is required for Mastercard/,
      ],
      ['raw without trans_status', raw({ ...VISA_RAW, trans_status: undefined }), 40300, /\[trans_status\]' is required/],
      ['raw without message_version', raw({ ...VISA_RAW, message_version: undefined }), 40300, /\[message_version\]' is required/],
      ['raw without message_type', raw({ ...VISA_RAW, message_type: undefined }), 40300, /\[message_type\]' is required/],
      ['raw eci of one digit', raw({ ...VISA_RAW, eci: '5' }), 40300, /\[eci\]'.*\[0-9\]\{2\}/],
      ['raw av of 27 characters', raw({ ...VISA_RAW, av: 'mK225wGt2bLnnLB0UlRky0oHLnU' }), 40300, /\[av\]'.*28 characters/],
      ['raw av of 32 characters (2.3.1-style)', raw({ ...VISA_RAW, av: 'mK225wGt2bLnnLB0UlRky0oHLnUAAAA=' }), 40300, /\[av\]'/],
      ['raw av that is not base64', raw({ ...VISA_RAW, av: 'mK225wGt2bLnnLB0UlRky0oHLn-_' }), 40300, /\[av\]'/],
      ['raw trans_status in lower case', raw({ ...VISA_RAW, trans_status: 'y' }), 40300, /\[trans_status\]'.*\[A-Z\]/],
      ['raw message_version 2.10.0', raw({ ...VISA_RAW, message_version: '2.10.0' }), 40300, /\[message_version\]'/],
      ['raw message_version 1.0.2', raw({ ...VISA_RAW, message_version: '1.0.2' }), 40300, /\[message_version\]'/],
      ['raw message_type AReq', raw({ ...VISA_RAW, message_type: 'AReq' }), 40300, /\[message_type\]'.*ARes or RReq/],
      ['raw authentication_type of one digit', raw({ ...VISA_RAW, authentication_type: '2' }), 40300, /\[authentication_type\]'/],
      [
        'raw ds_trans_id that is a UUIDv1',
        { 'card[pan]': MASTERCARD, ...raw({ ...MC_RAW, ds_trans_id: 'a0bf2f11-9368-1898-be0b-fd5314c912b2' }) },
        40300,
        /\[ds_trans_id\]'.*UUIDv4/,
      ],
    ];
    for (const [name, params, code, message] of refusals) {
      test(`refused: ${name}`, async () => {
        assertRefused(await authorize(fake, params), code, message);
        assert.equal(fake.requests.at(-1)!.reply!.body!.id, undefined, 'an input error creates no transaction');
      });
    }

    test('a 3-D Secure problem is an input error: 400 even in the 201 decline style', async () => {
      fake.declineStatus = 201;
      try {
        assertRefused(await authorize(fake, { [ARES_KEY]: 'nope' }), 40300, /'card\[3dsecure\]\[v2\]\[ares\]'/);
      } finally {
        fake.declineStatus = 400;
      }
    });

    test('transStatus N or R is a 40310 decline (a transaction, in the decline style), echoed, nothing to capture', async () => {
      const notAuthenticated = await authorize(fake, { [ARES_KEY]: ares({ transStatus: 'N', authenticationValue: undefined, eci: '07' }) });
      assert.equal(notAuthenticated.status, 400);
      assert.deepEqual(notAuthenticated.json.status, { code: 40310, message: '3-D Secure authentication failure' });
      assert.deepEqual(notAuthenticated.json['3dsecure'], { version: '2.2.0', status: 'N' });
      const id = notAuthenticated.json.id;
      assert.ok(id, 'a decline is a transaction: it has an id');
      assert.equal(fake.authorization(id)!.statusCode, 40310);
      assertRefused(await follow(fake, id, 'captures'), 40000, /not approved/);
      const rejected = await authorize(fake, { [RREQ_KEY]: rreq({ transStatus: 'R', authenticationValue: undefined, eci: undefined }) });
      assert.equal(rejected.json.status.code, 40310);
      fake.declineStatus = 201;
      try {
        const raw201 = await authorize(fake, { 'card[pan]': MASTERCARD, ...raw({ ...MC_RAW, trans_status: 'R', eci: undefined, av: undefined }) });
        assert.equal(raw201.status, 201);
        assert.equal(raw201.json.status.code, 40310);
      } finally {
        fake.declineStatus = 400;
      }
    });

    test('a subsequent-in-series takes no RReq (nor CSC), however well-formed; the first-in-series may', async () => {
      const started = await authorize(fake, { 'card[pan]': MASTERCARD, 'series[type]': 'recurring', [RREQ_KEY]: rreq() });
      assert.equal(started.status, 201, started.text);
      const next = (params: Params) => authorize(fake, { 'card[pan]': MASTERCARD, 'card[csc]': undefined, 'series[previous][id]': started.json.id, ...params });
      assertRefused(await next({ [RREQ_KEY]: rreq() }), 40000, /'card\[3dsecure\]\[v2\]\[rreq\]' must not be sent on a subsequent-in-series/);
      assertRefused(await next({ 'card[csc]': '123' }), 40000, /'card\[csc\]' must not be sent on a subsequent-in-series/);
      assert.equal((await next({})).status, 201, 'the refusals did not move the series');
    });

    describe('merchant rule requireFullyThreeDSecure (40200 `not (fully 3dsecure or subsequent recurring)`)', () => {
      const STRICT_KEY = '7a1c9e3b-2d4f-4a6b-8c0d-1e2f3a4b5c6d';
      let strict: ClearhausFake;
      before(async () => {
        strict = await startClearhausFake({ merchants: [{ apiKey: STRICT_KEY, requireFullyThreeDSecure: true }, { apiKey: API_KEY }] });
      });
      after(() => strict.close());
      const strictAuthorize = (params: Params, apiKey = STRICT_KEY) => authorize(strict, params, { apiKey });

      test('without a Y result the authorization is refused 40200 with the documented message; other merchants are not', async () => {
        assertRefused(await strictAuthorize({}), 40200, /^not \(fully 3dsecure or subsequent recurring\)$/);
        assertRefused(await strictAuthorize({ [ARES_KEY]: ares({ transStatus: 'A', eci: '06' }) }), 40200, /^not \(fully 3dsecure/);
        assertRefused(await strictAuthorize({ [ARES_KEY]: ares({ transStatus: 'U', authenticationValue: undefined, eci: '07' }) }), 40200);
        assertRefused(await strictAuthorize({ sca_exemption: 'low_value_payment' }), 40200);
        assert.equal(strict.authorizations.length, 0);
        assert.equal((await strictAuthorize({}, API_KEY)).status, 201);
        const account = await call(strict, 'GET', '/account', undefined, { apiKey: STRICT_KEY });
        assert.match(account.json.transaction_rules, /not \(fully 3dsecure or subsequent recurring\)/);
      });

      test('a Y result (ARes, RReq or raw) passes; N and R are 40310 rather than the rule', async () => {
        assert.equal((await strictAuthorize({ [ARES_KEY]: DOCS_ARES })).status, 201);
        assert.equal((await strictAuthorize({ [RREQ_KEY]: rreq() })).status, 201);
        assert.equal((await strictAuthorize({ 'card[pan]': MASTERCARD, ...raw(MC_RAW) })).status, 201);
        const failed = await strictAuthorize({ [ARES_KEY]: ares({ transStatus: 'N', authenticationValue: undefined, eci: '07' }) });
        assert.equal(failed.json.status.code, 40310);
      });

      test('a subsequent of a recurring series is exempt; one of an unscheduled series is not', async () => {
        const recurring = await strictAuthorize({ 'card[pan]': MASTERCARD, 'series[type]': 'recurring', [RREQ_KEY]: rreq() });
        assert.equal(recurring.status, 201, recurring.text);
        const next = await strictAuthorize({ 'card[pan]': MASTERCARD, 'card[csc]': undefined, 'series[previous][id]': recurring.json.id });
        assert.equal(next.status, 201, next.text);
        assertRefused(await strictAuthorize({ 'card[pan]': MASTERCARD, 'series[type]': 'recurring' }), 40200, /not \(fully 3dsecure/);
        const pan = '5000000000000004';
        const unscheduled = await strictAuthorize({ 'card[pan]': pan, 'series[type]': 'unscheduled', [ARES_KEY]: DOCS_ARES });
        assert.equal(unscheduled.status, 201, unscheduled.text);
        assertRefused(
          await strictAuthorize({ 'card[pan]': pan, 'card[csc]': undefined, 'series[previous][id]': unscheduled.json.id }),
          40200,
          /not \(fully 3dsecure or subsequent recurring\)/,
        );
      });
    });
  });

  describe('test host behaviour (§4.5)', () => {
    test('magic PANs read the amount as the status code to return; an amount that is no code gives 40110', async () => {
      const declined = await authorize(fake, { 'card[pan]': '4200000000000000', amount: '40413' });
      assert.equal(declined.status, 400);
      assert.equal(declined.json.status.code, 40413);
      assert.equal(declined.json.status.message, 'Insufficient funds');
      assert.ok(declined.json.id, 'a decline is a transaction: it has an id');
      assert.equal(fake.authorization(declined.json.id)!.statusCode, 40413);
      assertRefused(await authorize(fake, { 'card[pan]': '4200000000000000', amount: '100' }), 40110);
      assertRefused(await authorize(fake, { 'card[pan]': '5555555555554444', amount: '1000' }), 40110);
      const blocked = await authorize(fake, { 'card[pan]': '5555555555554444', amount: '40420' });
      assert.equal(blocked.json.status.code, 40420);
      const approvedMagic = await authorize(fake, { 'card[pan]': '4200001234560000', amount: '20000' });
      assert.equal(approvedMagic.status, 201);
      assert.equal(approvedMagic.json.amount, 20000);
      assert.equal((await authorize(fake, { 'card[pan]': '4200000000000001', amount: '40413' })).status, 201, 'not a magic PAN');
    });

    test('declines come as 400 or, in the other style, 201; input errors are 400 either way', async () => {
      fake.declineStatus = 201;
      try {
        const declined = await authorize(fake, { 'card[pan]': '4200000000000000', amount: '40410' });
        assert.equal(declined.status, 201);
        assert.equal(declined.json.status.code, 40410);
        assertRefused(await authorize(fake, { 'card[pan]': '4200000000000000', amount: '40120' }), 40120);
        assertRefused(await authorize(fake, { currency: 'ABC' }), 40140);
      } finally {
        fake.declineStatus = 400;
      }
      const style201 = await startClearhausFake({ merchants: MERCHANTS, declineStatus: 201 });
      try {
        assert.equal((await authorize(style201, { 'card[pan]': '4200000000000000', amount: '40414' })).status, 201);
      } finally {
        await style201.close();
      }
    });

    test('CSC 987 is the only one that matches', async () => {
      assert.deepEqual((await authorize(fake, { 'card[csc]': '987' })).json.csc, { present: true, matches: true });
      assert.deepEqual((await authorize(fake, { 'card[csc]': '123' })).json.csc, { present: true, matches: false });
    });

    test("panPolicy 'test-host': Luhn-failing PANs, the special PANs and magic PANs only", async () => {
      const strict = await startClearhausFake({ merchants: MERCHANTS, panPolicy: 'test-host' });
      try {
        for (const pan of ['2221000000000009', '4111111111111111', '5000000000000004', '4111111111111112'])
          assert.equal((await authorize(strict, { 'card[pan]': pan })).status, 201, pan);
        assertRefused(await authorize(strict, { 'card[pan]': '4242424242424242' }), 40110);
      } finally {
        await strict.close();
      }
    });

    test('a card blocked by its holder answers 40420 until unblocked', async () => {
      const pan = '4111111111111129';
      fake.blockCard(pan);
      const blocked = await authorize(fake, { 'card[pan]': pan });
      assert.equal(blocked.status, 400);
      assert.equal(blocked.json.status.code, 40420);
      fake.unblockCard(pan);
      await approved(fake, { 'card[pan]': pan });
      fake.setCardOutcome(pan, 40411);
      assert.equal((await authorize(fake, { 'card[pan]': pan })).json.status.code, 40411);
      fake.setCardOutcome(pan, undefined);
    });
  });

  describe('captures, refunds and voids (§2.2–§2.4, §4.1)', () => {
    test('auth 1000 → capture 500 → capture 400 → refund 900', async () => {
      const id = await approved(fake, { amount: '1000' });
      const first = await follow(fake, id, 'captures', { amount: '500' });
      assert.equal(first.status, 201);
      assert.equal(first.json.amount, 500);
      assert.deepEqual(first.json._links.authorization, { href: `/authorizations/${id}` });
      assert.equal((await follow(fake, id, 'captures', { amount: '400' })).status, 201);
      const refund = await follow(fake, id, 'refunds', { amount: '900' });
      assert.equal(refund.status, 201);
      assert.equal(refund.json.amount, 900);
      assert.deepEqual(fake.amounts(id), { authorized: 1000, captured: 900, refunded: 900, capturable: 100, refundable: 0, voided: false });
      assertRefused(await follow(fake, id, 'refunds', { amount: '1' }), 40000, /exceeds the refundable amount left \(0\)/);
    });

    test('auth 1000 → capture 500 → capture 500 → refund 900', async () => {
      const id = await approved(fake, { amount: '1000' });
      assert.equal((await follow(fake, id, 'captures', { amount: '500' })).status, 201);
      assert.equal((await follow(fake, id, 'captures', { amount: '500' })).status, 201);
      assert.equal((await follow(fake, id, 'refunds', { amount: '900' })).status, 201);
      assert.deepEqual(fake.amounts(id), { authorized: 1000, captured: 1000, refunded: 900, capturable: 0, refundable: 100, voided: false });
      assertRefused(await follow(fake, id, 'captures', { amount: '1' }), 40000, /exceeds the capturable amount left \(0\)/);
    });

    test('auth 1000 → capture 500 → refund 500 → capture 500 allowed, a further capture refused (refunds free nothing)', async () => {
      const id = await approved(fake, { amount: '1000' });
      assert.equal((await follow(fake, id, 'captures', { amount: '500' })).status, 201);
      assert.equal((await follow(fake, id, 'refunds', { amount: '500' })).status, 201);
      assert.equal((await follow(fake, id, 'captures', { amount: '500' })).status, 201);
      assertRefused(await follow(fake, id, 'captures', { amount: '1' }), 40000, /'amount' \(1\) exceeds/);
      assertRefused(await follow(fake, id, 'captures'), 40000, /nothing capturable/);
      assert.deepEqual(fake.amounts(id), { authorized: 1000, captured: 1000, refunded: 500, capturable: 0, refundable: 500, voided: false });
      assert.equal(fake.authorization(id)!.captures.length, 2);
    });

    test('without amount, a capture takes what is left and a refund returns what is left', async () => {
      const id = await approved(fake, { amount: '1000' });
      assert.equal((await follow(fake, id, 'captures', { amount: '300' })).status, 201);
      const rest = await follow(fake, id, 'captures');
      assert.equal(rest.json.amount, 700);
      assert.equal((await follow(fake, id, 'refunds', { amount: '100' })).status, 201);
      assert.equal((await follow(fake, id, 'refunds')).json.amount, 900);
      assertRefused(await follow(fake, id, 'refunds'), 40000, /nothing refundable/);
    });

    test('amount rules of captures and refunds: positive, within what is left; a refund needs a capture', async () => {
      const id = await approved(fake, { amount: '1000' });
      assertRefused(await follow(fake, id, 'refunds', { amount: '100' }), 40000, /no capture to refund/);
      assertRefused(await follow(fake, id, 'captures', { amount: '0' }), 40000, /'amount'/);
      assertRefused(await follow(fake, id, 'captures', { amount: '1001' }), 40000, /exceeds the capturable amount left \(1000\)/);
      assertRefused(await follow(fake, id, 'captures', { amount: '10', text_on_statement: '11111' }), 40150, /'text_on_statement'/);
      assertRefused(
        await follow(fake, id, 'captures', { amount: '10', 'travel[car][pick_up_date]': '2026-01-01', 'travel[flight][departure_date]': '2026-01-01' }),
        40000,
        /travel/,
      );
      const withText = await follow(fake, id, 'captures', { amount: '10', text_on_statement: 'Shop 42 again' });
      assert.equal(withText.json.text_on_statement, 'Shop 42 again');
      const zero = await approved(fake, { amount: '0' });
      assertRefused(await follow(fake, zero, 'captures'), 40000, /nothing capturable/);
    });

    test('a void releases an authorization; no capture after it, no second void, no void after a capture', async () => {
      const id = await approved(fake);
      const voided = await follow(fake, id, 'voids', { order_id: 'ignored' });
      assert.equal(voided.status, 201);
      assert.deepEqual(voided.json.status, { code: 20000 });
      assert.deepEqual(voided.json._links.authorization, { href: `/authorizations/${id}` });
      assert.equal(fake.amounts(id).voided, true);
      assertRefused(await follow(fake, id, 'captures', { amount: '100' }), 40000, /voided/);
      assertRefused(await follow(fake, id, 'voids'), 40000, /already voided/);
      const captured = await approved(fake);
      assert.equal((await follow(fake, captured, 'captures', { amount: '1' })).status, 201);
      assertRefused(await follow(fake, captured, 'voids'), 40000, /captured/);
      const declined = (await authorize(fake, { 'card[pan]': '4200000000000000', amount: '40410' })).json.id;
      assertRefused(await follow(fake, declined, 'voids'), 40000, /declined/);
      assertRefused(await follow(fake, declined, 'captures'), 40000, /not approved/);
    });

    test('ids: malformed → 400 "invalid transaction id", unknown or another merchant\'s → 404, a capture id is no authorization id', async () => {
      for (const bad of ['z', '123']) {
        for (const operation of ['captures', 'refunds', 'voids'] as const)
          assertRefused(await follow(fake, bad, operation, { amount: '1' }), 40000, /^invalid transaction id$/);
      }
      const unknown = await follow(fake, crypto.randomUUID(), 'captures', { amount: '1' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.text, '');
      const id = await approved(fake);
      assert.equal((await follow(fake, id, 'captures', { amount: '1' }, { apiKey: OTHER_KEY })).status, 404);
      assert.equal((await call(fake, 'GET', `/authorizations/${id}`, undefined, { apiKey: OTHER_KEY })).status, 404);
      const capture = await follow(fake, id, 'captures', { amount: '1' });
      assert.equal((await follow(fake, capture.json.id, 'refunds', { amount: '1' })).status, 404);
      assert.equal((await call(fake, 'GET', '/authorizations/z')).json.status.message, 'invalid transaction id');
    });

    test('time limits: capture before 180 days, void before 30 days, refund within 365 days of the last capture', async () => {
      let clock = Date.now();
      const aged = await startClearhausFake({ merchants: MERCHANTS, now: () => clock });
      try {
        const day = 24 * 60 * 60 * 1000;
        const [a, b, c] = [await approved(aged), await approved(aged), await approved(aged)];
        assert.equal((await follow(aged, c, 'captures', { amount: '100' })).status, 201);
        clock += 30 * day;
        assertRefused(await follow(aged, a, 'voids'), 40200, /30 days/);
        clock += 150 * day;
        assertRefused(await follow(aged, b, 'captures'), 40200, /180 days/);
        clock += 186 * day;
        assertRefused(await follow(aged, c, 'refunds', { amount: '1' }), 40200, /365 days/);
      } finally {
        await aged.close();
      }
    });
  });

  describe('series (§2.1)', () => {
    const MASTERCARD = '5000000000000004';
    const first = (params: Params = {}) => authorize(fake, { 'card[pan]': MASTERCARD, 'series[type]': 'recurring', initiator: 'cardholder', ...params });
    const next = (previousId: string, params: Params = {}, options?: CallOptions) =>
      authorize(fake, { 'card[pan]': MASTERCARD, 'card[csc]': undefined, 'series[previous][id]': previousId, ...params }, options);

    test("an approved first-in-series returns its series, stores the card, and is the series' latest", async () => {
      const answer = await first({ amount: '0' });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.series.type, 'recurring');
      assert.match(answer.json.series.tid, /^[0-9]{15}$/);
      assert.match(answer.json.series.tlid, /^[A-Za-z0-9_-]{22}$/);
      const record = fake.authorization(answer.json.id)!;
      assert.equal(record.credentialOnFile, 'store', 'the default of a first-in-series');
      const series = fake.series.find((s) => s.id === record.seriesId)!;
      assert.deepEqual(series.authorizationIds, [answer.json.id]);
      assert.equal(series.pan, MASTERCARD);
    });

    test('a subsequent-in-series must name the latest approved authorization of the series', async () => {
      const one = (await first()).json.id;
      const two = await next(one);
      assert.equal(two.status, 201, two.text);
      assert.equal(two.json.series, undefined);
      assert.equal(fake.authorization(two.json.id)!.initiator, 'merchant', 'the default of a subsequent');
      assert.equal(fake.authorization(two.json.id)!.credentialOnFile, 'use');
      assertRefused(await next(one), 40000, new RegExp(`'series\\[previous\\]\\[id\\]' \\(${one}\\) is not the latest approved authorization.*${two.json.id}`));
      const three = await next(two.json.id, { 'series[previous][id]': two.json.id, initiator: 'merchant', credential_on_file: 'use' });
      assert.equal(three.status, 201, three.text);
      const series = fake.series.find((s) => s.id === fake.authorization(one)!.seriesId)!;
      assert.deepEqual(series.authorizationIds, [one, two.json.id, three.json.id]);
    });

    test('a declined subsequent does not become the latest', async () => {
      const one = (await first()).json.id;
      fake.blockCard(MASTERCARD);
      try {
        const blocked = await next(one);
        assert.equal(blocked.json.status.code, 40420);
        assertRefused(await next(blocked.json.id), 40000, /not an approved authorization of a series/);
      } finally {
        fake.unblockCard(MASTERCARD);
      }
      assert.equal((await next(one)).status, 201);
    });

    test('a subsequent: no csc, no RReq, not initiated by the cardholder, same card, same merchant, card method only', async () => {
      const one = (await first()).json.id;
      assertRefused(await next(one, { 'card[csc]': '123' }), 40000, /'card\[csc\]' must not be sent/);
      assertRefused(await next(one, { 'card[3dsecure][v2][rreq]': '{}' }), 40000, /'card\[3dsecure\]\[v2\]\[rreq\]' must not be sent/);
      assertRefused(await next(one, { initiator: 'cardholder' }), 40000, /'initiator' cannot be 'cardholder'/);
      assertRefused(await next(one, { credential_on_file: 'store' }), 40000, /'credential_on_file' cannot be 'store'/);
      assertRefused(await next(one, { 'card[pan]': '2221000000000009' }), 40000, /'card\[pan\]' is not the card the series was started with/);
      assertRefused(await next(one, {}, { apiKey: OTHER_KEY }), 40000, /names no authorization of this merchant/);
      assertRefused(await next(crypto.randomUUID()), 40000, /names no authorization of this merchant/);
      const plain = await approved(fake, { 'card[pan]': MASTERCARD });
      assertRefused(await next(plain), 40000, /not an approved authorization of a series/);
      const moto = { 'moto[pan]': MASTERCARD, 'moto[expire_month]': '06', 'moto[expire_year]': YEAR };
      assertRefused(
        await authorize(fake, {
          'card[pan]': undefined,
          'card[expire_month]': undefined,
          'card[expire_year]': undefined,
          'card[csc]': undefined,
          ...moto,
          'series[previous][id]': one,
        }),
        40000,
        /moto/,
      );
      assert.equal((await next(one)).status, 201, 'none of those moved the series');
    });

    test('the untrusted partner still sends its subsequents without CSC', async () => {
      const started = await authorize(fake, { 'card[pan]': MASTERCARD, 'series[type]': 'unscheduled' }, { apiKey: UNTRUSTED_KEY });
      assert.equal(started.status, 201, started.text);
      assert.equal((await next(started.json.id, {}, { apiKey: UNTRUSTED_KEY })).status, 201);
    });

    test('initiator=merchant outside a series needs an earlier approved credential_on_file=store of the card', async () => {
      const pan = '4111111111111137';
      assertRefused(await authorize(fake, { 'card[pan]': pan, initiator: 'merchant', 'card[csc]': undefined }), 40200, /credential_on_file=store/);
      await approved(fake, { 'card[pan]': pan, credential_on_file: 'store' });
      await approved(fake, { 'card[pan]': pan, initiator: 'merchant', 'card[csc]': undefined });
      assertRefused(await authorize(fake, { 'card[pan]': pan, initiator: 'merchant' }, { apiKey: OTHER_KEY }), 40200, /credential_on_file=store/);
    });
  });

  describe('credits (§2.5)', () => {
    const credit = (params: Params = {}) =>
      call(fake, 'POST', '/credits', { amount: '50000', currency: 'EUR', 'card[pan]': VISA, 'card[expire_month]': '06', 'card[expire_year]': YEAR, ...params });

    test('a credit pays out to a card', async () => {
      const answer = await credit({ reference: 'win-1', 'card[name]': 'Jane Doe 2' });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(answer.json.status, { code: 20000 });
      assert.equal(answer.json.amount, 50000);
      assert.equal(answer.json.currency, 'EUR');
      assert.equal(fake.credits.find((c) => c.id === answer.json.id)!.reference, 'win-1');
    });

    test('credit parameters', async () => {
      assertRefused(await credit({ amount: '0' }), 40000, /'amount'/);
      assertRefused(await credit({ amount: undefined }), 40000, /'amount' is required/);
      assertRefused(await credit({ currency: 'XXX' }), 40140, /'currency'/);
      assertRefused(await credit({ 'card[name]': 'Jane Doe!' }), 40000, /'card\[name\]'/);
      assertRefused(await credit({ 'card[name]': 'J'.repeat(31) }), 40000, /'card\[name\]'/);
      assertRefused(await credit({ 'card[expire_year]': undefined }), 40000, /'card\[expire_year\]' is required/);
      assertRefused(await credit({ 'card[csc]': '12' }), 40120, /'card\[csc\]'/);
      assertRefused(await credit({ text_on_statement: '0000' }), 40150, /'text_on_statement'/);
      assert.equal((await credit({ 'card[csc]': '123' })).status, 201);
      assert.equal((await credit({ 'card[pan]': '4200000000000000', amount: '40413' })).json.status.code, 40413);
    });
  });

  describe('scripted failures', () => {
    const captureOf = (id: string) => ({ method: 'POST', path: `/authorizations/${id}/captures` });
    const timeout = (err: any) => err.name === 'TimeoutError';

    test('hang: the request is read and carried out, and never answered', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: 'hang' });
      await assert.rejects(follow(fake, id, 'captures', { amount: '500' }, { signal: AbortSignal.timeout(500) }), timeout);
      assert.equal(fake.amounts(id).captured, 500, 'Clearhaus captured although the client never heard');
      const [request] = fake.requestsTo(`/authorizations/${id}/captures`);
      assert.equal(request!.answered, false);
      assert.equal(request!.reply!.status, 201);
      assert.equal(request!.scripted, 'hang');
    });

    test('hang with applied: false: nothing happened', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: 'hang', applied: false });
      await assert.rejects(follow(fake, id, 'captures', { amount: '500' }, { signal: AbortSignal.timeout(200) }), timeout);
      assert.equal(fake.amounts(id).captured, 0);
      assert.equal(fake.requestsTo(`/authorizations/${id}/captures`)[0]!.processed, false);
    });

    test('reset-after-read: the body is read, the request carried out, the connection reset', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: 'reset-after-read' });
      await assert.rejects(follow(fake, id, 'captures', { amount: '400' }), TypeError);
      assert.equal(fake.amounts(id).captured, 400);
      fake.script({ ...captureOf(id), action: 'reset-after-read', applied: false });
      await assert.rejects(follow(fake, id, 'captures', { amount: '100' }), TypeError);
      assert.equal(fake.amounts(id).captured, 400);
      assert.equal(fake.requestsTo(`/authorizations/${id}/captures`).length, 2);
    });

    test('http-500: a 5xx with no useful body, not carried out unless said so', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: 'http-500' });
      const answer = await follow(fake, id, 'captures', { amount: '300' });
      assert.equal(answer.status, 500);
      assert.notEqual(answer.contentType, HAL_CONTENT_TYPE);
      assert.equal(answer.json, undefined);
      assert.equal(fake.amounts(id).captured, 0);
      fake.script({ ...captureOf(id), action: 'http-500', applied: true, status: 502 });
      assert.equal((await follow(fake, id, 'captures', { amount: '300' })).status, 502);
      assert.equal(fake.amounts(id).captured, 300);
    });

    test('status-50000 on an authorization: a JSON 50000 with an id, an authorization that can be voided and not captured', async () => {
      fake.script({ method: 'POST', path: /^\/authorizations$/, action: 'status-50000' });
      const answer = await authorize(fake);
      assert.equal(answer.status, 400);
      assert.equal(answer.contentType, HAL_CONTENT_TYPE);
      assert.equal(answer.json.status.code, 50000);
      const id = answer.json.id;
      assert.ok(id);
      assert.equal(fake.authorization(id)!.statusCode, 50000);
      assert.equal((await call(fake, 'GET', `/authorizations/${id}`)).json.status.code, 50000);
      assertRefused(await follow(fake, id, 'captures'), 40000, /not approved/);
      assert.equal((await follow(fake, id, 'voids')).status, 201);
      assert.equal(fake.amounts(id).voided, true);
    });

    test('status-50000 on a capture: the id is named; with applied: true the money moved anyway', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: 'status-50000', status: 500 });
      const lost = await follow(fake, id, 'captures', { amount: '200' });
      assert.equal(lost.status, 500);
      assert.equal(lost.json.status.code, 50000);
      assert.ok(lost.json.id);
      assert.equal(fake.amounts(id).captured, 0);
      fake.script({ ...captureOf(id), action: 'status-50000', applied: true });
      const moved = await follow(fake, id, 'captures', { amount: '200' });
      assert.equal(moved.json.status.code, 50000);
      assert.equal(fake.amounts(id).captured, 200);
    });

    test('slow: carried out on arrival, answered after the delay', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: { slow: 300 } });
      const started = Date.now();
      const pending = follow(fake, id, 'captures', { amount: '250' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(fake.amounts(id).captured, 250, 'already applied while the answer is pending');
      const answer = await pending;
      assert.equal(answer.status, 201);
      assert.ok(Date.now() - started >= 290, `answered after ${Date.now() - started} ms`);
    });

    test('slow with applied: false: carried out only if the client still waits when the answer goes out', async () => {
      const id = await approved(fake);
      fake.script({ ...captureOf(id), action: { slow: 300 }, applied: false });
      await assert.rejects(follow(fake, id, 'captures', { amount: '250' }, { signal: AbortSignal.timeout(100) }), timeout);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(fake.amounts(id).captured, 0);
      fake.script({ ...captureOf(id), action: { slow: 100 }, applied: false });
      assert.equal((await follow(fake, id, 'captures', { amount: '250' })).status, 201);
      assert.equal(fake.amounts(id).captured, 250);
    });

    test('a script takes the next matching request only (method, path, form predicate, times)', async () => {
      const handle = fake.script({ method: 'POST', path: '/authorizations', when: (form) => form.amount === '777', action: 'http-500', times: 2 });
      assert.equal((await authorize(fake, { amount: '1000' })).status, 201);
      assert.equal((await call(fake, 'GET', '/account')).status, 200);
      assert.equal((await authorize(fake, { amount: '777' })).status, 500);
      assert.equal(handle.done, false);
      assert.equal((await authorize(fake, { amount: '777' })).status, 500);
      assert.equal(handle.done, true);
      assert.equal(handle.hits, 2);
      assert.equal((await authorize(fake, { amount: '777' })).status, 201);
      const cancelled = fake.script({ path: '/', action: 'http-500' });
      cancelled.cancel();
      assert.equal((await call(fake, 'GET', '/')).status, 200);
    });

    test('a script never hides a request Clearhaus would refuse at the door (auth, signature, format)', async () => {
      const handle = fake.script({ path: '/authorizations', action: 'hang' });
      assert.equal((await authorize(fake, {}, { apiKey: crypto.randomUUID() })).status, 401);
      assertRefused(await authorize(fake, {}, { signature: false }), 40000, /must be signed/);
      assertRefused(await call(fake, 'POST', '/authorizations', '{}', { contentType: 'application/json' }), 40000);
      assert.equal(handle.hits, 0);
      handle.cancel();
    });

    test('refuse: nothing listens (ECONNREFUSED) until resume; refusedUrl is such a place', async () => {
      const id = await approved(fake);
      await fake.refuse();
      await assert.rejects(follow(fake, id, 'captures', { amount: '1' }), (err: any) => err.cause?.code === 'ECONNREFUSED');
      await fake.resume();
      assert.equal((await follow(fake, id, 'captures', { amount: '1' })).status, 201);
      assert.equal(fake.amounts(id).captured, 1);
      const nowhere = await refusedUrl();
      await assert.rejects(call(fake, 'GET', '/', undefined, { url: nowhere }), (err: any) => err.cause?.code === 'ECONNREFUSED');
    });
  });

  describe('inspection', () => {
    test('requestsTo counts the requests to a path; reset forgets everything', async () => {
      const own = await startClearhausFake({ merchants: MERCHANTS });
      try {
        const id = await approved(own);
        await follow(own, id, 'captures', { amount: '100' });
        await follow(own, id, 'captures', { amount: '100' });
        assert.equal(own.requestsTo('/authorizations').length, 1);
        assert.equal(own.requestsTo(`/authorizations/${id}/captures`).length, 2);
        assert.equal(own.requestsTo(/\/captures$/).length, 2);
        assert.equal(own.requestsTo('/authorizations', 'GET').length, 0);
        assert.equal(own.requests.length, 3);
        assert.equal(own.requests[1]!.merchantApiKey, API_KEY);
        assert.equal(own.requests[1]!.form.amount, '100');
        assert.equal(own.authorizations.length, 1);
        own.reset();
        assert.equal(own.requests.length, 0);
        assert.equal(own.authorizations.length, 0);
      } finally {
        await own.close();
      }
    });
  });
});
