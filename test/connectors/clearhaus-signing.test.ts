/**
 * Clearhaus signing: the published test vectors of clearhaus.md §4.4 (RS256-hex over the exact
 * body bytes, the docs' 512-bit example key), the header's form, and a key loader that stops the
 * start with a message naming CLEARHAUS_SIGNING_KEY_FILE and never shows the key.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { after, describe, test } from 'node:test';
import { loadSigningKey, SigningKey, SigningKeyError, signatureHeader } from '../../src/connectors/clearhaus/signing.js';

/** The docs' published example key (test use only), and its public half. */
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
const DOCS_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBALYK0zmwuYkH3YWcFNLLddx5cwDxEY7G
i1xITuQqRrU4yD3uSw+JWYKknb4Tbndb6iEHY+e6gIGD+49TojnNeIUCAwEAAQ==
-----END PUBLIC KEY-----
`;

const VECTORS = [
  {
    name: '1 (current docs)',
    body: 'amount=2050&currency=EUR&ip=1.1.1.1&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2022&card[csc]=123',
    signature: '7ae0e14d35b2a15a7ff812a1899d7f0a5d28063f0c276081876a51fc3773f499459f944f8b57c6e0e76b47c218b20ebaad7c6250dcd1804dd19c87fb7f1216ba',
  },
  {
    name: '2 (2015 docs, card[number])',
    body: 'amount=2050&currency=EUR&ip=1.1.1.1&card[number]=4111111111111111&card[expire_month]=06&card[expire_year]=2018&card[csc]=123',
    signature: 'af30dfbca8ae965accde234e49f93ced184feb612faf440d12a3993bcce747b729069241dd1b6e68420607301d737c6828289b9889c38727a6cc853dbfcae103',
  },
  {
    name: '3 (ActiveMerchant, percent-encoded brackets)',
    body: 'amount=2050&card%5Bcsc%5D=123&card%5Bexpire_month%5D=06&card%5Bexpire_year%5D=2018&card%5Bpan%5D=4111111111111111&currency=EUR',
    signature: '8ecc11eba5becdb416e8a5b714b5f365529b9796b7c86b9eb774489b92d5bd92006c832640b222a2f21cfa55aa7ca633ebe46fc4877d0925f8283c3cc43911d7',
  },
  {
    name: '4 (ActiveMerchant pre-2018, card[number])',
    body: 'amount=2050&card%5Bcsc%5D=123&card%5Bexpire_month%5D=06&card%5Bexpire_year%5D=2018&card%5Bnumber%5D=4111111111111111&currency=EUR',
    signature: '078a0772cba9b78b92e0972cec446f4ed44d57f02b31d93723f4c54160cd653deaa919a863121bb514e67a8a69c1d2ebc141969ec7241302f56ed1f6c60cdefd',
  },
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clearhaus-signing-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, content: string, mode = 0o600): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content, { mode });
  return file;
};

describe('Clearhaus signing: the published test vectors', () => {
  const key = SigningKey.fromPem(DOCS_PRIVATE_KEY);
  for (const vector of VECTORS) {
    test(`vector ${vector.name} signs to the published hex exactly, on the event loop and off it`, async () => {
      assert.equal(key.sign(vector.body), vector.signature);
      assert.equal(await key.signOffLoop(vector.body), vector.signature);
      assert.equal(key.sign(Buffer.from(vector.body)), vector.signature, 'bytes and their string sign alike');
      assert.ok(verify('sha256', Buffer.from(vector.body), createPublicKey(DOCS_PUBLIC_KEY), Buffer.from(vector.signature, 'hex')));
    });
  }

  test('the header: "<signing key id> RS256-hex <lowercase hex>"', () => {
    const header = signatureHeader('4390aec7-f76a-4c2f-8597-c87c2d06cb4f', key, VECTORS[0]!.body);
    assert.equal(header, `4390aec7-f76a-4c2f-8597-c87c2d06cb4f RS256-hex ${VECTORS[0]!.signature}`);
    assert.match(header.split(' ')[2]!, /^[0-9a-f]+$/);
  });

  test('the empty body (a void) is signed too, and verifies', () => {
    const signature = key.sign('');
    assert.match(signature, /^[0-9a-f]{128}$/);
    assert.ok(verify('sha256', Buffer.alloc(0), createPublicKey(DOCS_PUBLIC_KEY), Buffer.from(signature, 'hex')));
  });

  test('one changed byte gives another signature: the exact bytes are signed', () => {
    assert.notEqual(key.sign(VECTORS[0]!.body.replace('card[pan]', 'card%5Bpan%5D')), VECTORS[0]!.signature);
  });
});

describe('Clearhaus signing: the key loader', () => {
  test('a PKCS#1 PEM file loads and signs as the vectors say', () => {
    const key = loadSigningKey(write('pkcs1.pem', DOCS_PRIVATE_KEY));
    assert.equal(key.sign(VECTORS[0]!.body), VECTORS[0]!.signature);
  });

  test('a PKCS#8 PEM file of the same key loads too, and signs alike', () => {
    const pkcs8 = createPrivateKey(DOCS_PRIVATE_KEY).export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.match(pkcs8, /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(loadSigningKey(write('pkcs8.pem', pkcs8)).sign(VECTORS[0]!.body), VECTORS[0]!.signature);
  });

  test('a missing file: the error names the setting and the path', () => {
    const file = path.join(dir, 'absent.pem');
    assert.throws(
      () => loadSigningKey(file),
      (err: Error) => err instanceof SigningKeyError && /^CLEARHAUS_SIGNING_KEY_FILE: cannot read .*absent\.pem \(no such file\)$/.test(err.message),
    );
  });

  test('an unreadable path (a directory) names the setting', () => {
    assert.throws(
      () => loadSigningKey(dir),
      (err: Error) => err instanceof SigningKeyError && /^CLEARHAUS_SIGNING_KEY_FILE: cannot read .* \(is a directory\)$/.test(err.message),
    );
  });

  test('a file without permission to read names the setting', { skip: process.getuid?.() === 0 ? 'root reads any file' : false }, () => {
    const file = write('private.pem', DOCS_PRIVATE_KEY, 0o000);
    assert.throws(
      () => loadSigningKey(file),
      (err: Error) => err instanceof SigningKeyError && /CLEARHAUS_SIGNING_KEY_FILE: .*permission denied/.test(err.message),
    );
  });

  const notRsa: Array<[string, string]> = [
    ['garbage', 'not a key at all'],
    ['an empty file', ''],
    ['a public key', DOCS_PUBLIC_KEY],
    ['an EC private key', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
    ['an Ed25519 private key', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
    [
      'an encrypted RSA key',
      generateKeyPairSync('rsa', { modulusLength: 1024 })
        .privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })
        .toString(),
    ],
  ];
  for (const [what, content] of notRsa) {
    test(`${what}: refused, the error names the setting and quotes nothing of the file`, () => {
      const file = write(`${what.replace(/\W+/g, '-')}.pem`, content);
      assert.throws(
        () => loadSigningKey(file),
        (err: Error) => {
          assert.ok(err instanceof SigningKeyError);
          assert.match(err.message, /^CLEARHAUS_SIGNING_KEY_FILE \(.*\): /);
          assert.match(err.message, /RSA private key/);
          assert.ok(!err.message.includes('BEGIN'), err.message);
          for (const line of content.split('\n').filter((l) => l.length > 20)) assert.ok(!err.message.includes(line));
          return true;
        },
      );
    });
  }

  test('the key object never prints its key: String, JSON, util.inspect, template literals', () => {
    const key = loadSigningKey(write('shown.pem', DOCS_PRIVATE_KEY));
    const holder = { signingKey: key, signingKeyId: 'id' };
    const shown = [String(key), `${key}`, JSON.stringify(key), JSON.stringify(holder), inspect(key), inspect(holder, { showHidden: true, depth: 5 })];
    const body = DOCS_PRIVATE_KEY.split('\n')[1]!;
    for (const text of shown) {
      assert.ok(!text.includes(body) && !text.includes('BEGIN'), text);
    }
    assert.equal(String(key), '[Clearhaus signing key]');
    assert.deepEqual(Object.keys(key), []);
  });
});
