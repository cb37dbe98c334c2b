/**
 * The client's verifyDelivery against signatures made by the reference implementation of Standard
 * Webhooks (the `standardwebhooks` package): it accepts what the reference signs, with either secret
 * of a rotation, and refuses a changed body, id or timestamp, another secret, and a timestamp out
 * of the 5-minute tolerance.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { DeliveryVerificationError, verifyDelivery } from '@payments-service/client';
import { Webhook } from 'standardwebhooks';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const secret = newSecret();
const body = JSON.stringify({ event: 'transaction.success.v1', data: { transaction: { id: 'LDG7M4WW44G', amount: 1000, text: 'æøå "quoted"' } } });
const id = '2f0b7c1e-6d52-4a8e-9a51-7c3b0e8f1d24';
const at = new Date('2026-12-02T12:00:00.000Z');
const nowMs = at.getTime();

/** The headers the reference implementation would send for `secrets` (each signing). */
function signed(secrets: string[], options: { id?: string; at?: Date; body?: string } = {}): Record<string, string> {
  const when = options.at ?? at;
  return {
    'webhook-id': options.id ?? id,
    'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(options.id ?? id, when, options.body ?? body)).join(' '),
  };
}

const refused = (fn: () => void, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof DeliveryVerificationError && pattern.test(err.message), `expected ${pattern}`);

describe('verifyDelivery (client) against the standardwebhooks reference', () => {
  test('accepts what the reference signs: plain headers, mixed-case names, a Fetch Headers object', () => {
    const headers = signed([secret]);
    verifyDelivery(body, headers, secret, { now: nowMs });
    verifyDelivery(body, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v])), secret, { now: nowMs });
    verifyDelivery(body, new Headers(headers), secret, { now: nowMs });
    // And the reference accepts the same headers: the two agree.
    const realNow = Date.now;
    Date.now = () => nowMs;
    try {
      new Webhook(secret).verify(body, headers);
    } finally {
      Date.now = realNow;
    }
  });

  test('during a rotation (two signatures) either secret verifies; a third does not', () => {
    const previous = newSecret();
    const headers = signed([secret, previous]);
    verifyDelivery(body, headers, secret, { now: nowMs });
    verifyDelivery(body, headers, previous, { now: nowMs });
    refused(() => verifyDelivery(body, headers, newSecret(), { now: nowMs }), /no webhook-signature matches/);
    // Several header lines are one list; versions other than v1 are skipped.
    const [first, second] = headers['webhook-signature']!.split(' ');
    verifyDelivery(body, { ...headers, 'webhook-signature': [`v2,${second!.slice(3)}`, first!] }, secret, { now: nowMs });
    refused(() => verifyDelivery(body, { ...headers, 'webhook-signature': `v2,${first!.slice(3)}` }, secret, { now: nowMs }), /no webhook-signature matches/);
  });

  test('refuses a changed body, id or timestamp, and another secret', () => {
    const headers = signed([secret]);
    refused(() => verifyDelivery(body.replace('1000', '1001'), headers, secret, { now: nowMs }), /no webhook-signature matches/);
    refused(() => verifyDelivery(body, { ...headers, 'webhook-id': 'another' }, secret, { now: nowMs }), /no webhook-signature matches/);
    refused(
      () => verifyDelivery(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }, secret, { now: nowMs }),
      /no webhook-signature matches/,
    );
    refused(() => verifyDelivery(body, headers, newSecret(), { now: nowMs }), /no webhook-signature matches/);
    refused(() => verifyDelivery(body, { ...headers, 'webhook-signature': 'v1,' }, secret, { now: nowMs }), /no webhook-signature matches/);
  });

  test('5-minute tolerance either way by default; toleranceSeconds changes it', () => {
    const headers = signed([secret]);
    verifyDelivery(body, headers, secret, { now: nowMs + 300_000 });
    verifyDelivery(body, headers, secret, { now: nowMs - 300_000 });
    refused(() => verifyDelivery(body, headers, secret, { now: nowMs + 301_000 }), /too old/);
    refused(() => verifyDelivery(body, headers, secret, { now: nowMs - 301_000 }), /too new/);
    verifyDelivery(body, headers, secret, { now: nowMs + 3_600_000, toleranceSeconds: 3600 });
    refused(() => verifyDelivery(body, headers, secret, { now: nowMs + 11_000, toleranceSeconds: 10 }), /too old/);
    // Without `now`, the receiver's clock: a delivery signed just now passes, one from an hour ago does not.
    verifyDelivery(body, signed([secret], { at: new Date() }), secret);
    refused(() => verifyDelivery(body, signed([secret], { at: new Date(Date.now() - 3_600_000) }), secret), /too old/);
  });

  test('missing or malformed headers are named', () => {
    const headers = signed([secret]);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _dropped, ...rest } = headers;
      refused(() => verifyDelivery(body, rest, secret, { now: nowMs }), new RegExp(`missing header ${name}`));
    }
    refused(() => verifyDelivery(body, { ...headers, 'webhook-timestamp': '2026-12-02T12:00:00Z' }, secret, { now: nowMs }), /not unix seconds/);
    assert.throws(() => verifyDelivery(body, headers, 'whsec_', { now: nowMs }), TypeError);
  });
});
