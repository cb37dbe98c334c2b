/**
 * Acquirer agreements, INTERFACE §12.1, refusals on both stores: every invalid PUT is a 422
 * VALIDATION_ERROR naming the field with a contract rule and what is expected; fields the agreement
 * does not have are refused by name; `clearhaus` without the deployment's signing key is a 422 on
 * `acquirer` (and 200 with it, in the happy suite); nothing is written or kept for the
 * Idempotency-Key by a refusal; unknown accounts and accounts without an agreement are 404; a
 * deleted account gets no new agreement (409).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import { API, startTestRuntime, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { agreementUrl, createAccount, newApiKey, ok, putAgreement } from './support.js';

const UNKNOWN_ACCOUNT = '0b6f2a7e-3c1d-4e5f-8a9b-112233445566';

/** A 422 VALIDATION_ERROR whose `errors` name exactly `fields`, each message a contract rule. */
function refused(res: TestResponse, fields: string[], what: string): Record<string, string[]> {
  assert.equal(res.status, 422, `${what}: ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.errorCode, 'VALIDATION_ERROR', what);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), `${what}: ${res.text}`);
  for (const messages of Object.values(res.body.errors as Record<string, string[]>)) {
    for (const message of messages) assert.match(message, FIELD_RULE_PATTERN, `${what}: ${message}`);
  }
  return res.body.errors;
}

for (const kind of await availableStores()) {
  describe(`acquirer agreements: errors (${kind})`, () => {
    let t: TestRuntime;
    let withKey: TestRuntime;
    let accountId: string;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      withKey = await startTestRuntime(kind, {}, { startWorkers: false, clearhausAvailable: true });
      accountId = await createAccount(withKey);
    });
    after(async () => {
      await t?.close();
      await withKey?.close();
    });

    const put = (body: unknown, key?: string) => putAgreement(withKey.operator, accountId, body, key);
    const clearhaus = (extra: Record<string, unknown> = {}) => ({ acquirer: 'clearhaus', apiKey: newApiKey(), mcc: '5999', ...extra });

    test('acquirer: missing, unknown or not a string → 422 on acquirer', async () => {
      assert.match(refused(await put({}), ['acquirer'], 'missing').acquirer![0]!, /^\[required\]/);
      assert.deepEqual(refused(await put({ acquirer: 'adyen' }), ['acquirer'], 'unknown').acquirer, [
        '[in:sandbox,clearhaus]: must be one of sandbox,clearhaus',
      ]);
      refused(await put({ acquirer: 7 }), ['acquirer'], 'a number');
      refused(await put({ acquirer: 'SANDBOX' }), ['acquirer'], 'upper case');
    });

    test('clearhaus: apiKey and mcc are required, each named with what it must be', async () => {
      const errors = refused(await put({ acquirer: 'clearhaus' }), ['apiKey', 'mcc'], 'both missing');
      assert.deepEqual(errors.apiKey, ['[required]: is required for clearhaus and must be the Clearhaus API key, a UUID']);
      assert.deepEqual(errors.mcc, ['[required]: is required for clearhaus and must be 4 digits, e.g. 5999']);
      refused(await put({ acquirer: 'clearhaus', mcc: '5999' }), ['apiKey'], 'no apiKey');
      refused(await put({ acquirer: 'clearhaus', apiKey: newApiKey() }), ['mcc'], 'no mcc');
    });

    test('apiKey must be a UUID: said in words, never echoed', async () => {
      for (const apiKey of ['not-a-key', `${newApiKey()}x`, newApiKey().replace(/-/g, ''), '', ' ' + newApiKey()]) {
        const res = await put(clearhaus({ apiKey }));
        assert.deepEqual(refused(res, ['apiKey'], JSON.stringify(apiKey)).apiKey, ['[uuid]: must be the Clearhaus API key, a UUID']);
        if (apiKey.length > 3) assert.ok(!res.text.includes(apiKey.trim()), 'the value is not repeated');
      }
      refused(await put(clearhaus({ apiKey: 12345 })), ['apiKey'], 'a number');
      refused(await put(clearhaus({ apiKey: null })), ['apiKey'], 'null');
    });

    test('mcc must be 4 digits (a string), on either acquirer', async () => {
      for (const mcc of ['599', '59999', '59a9', ' 5999', '٥٩٩٩']) {
        assert.deepEqual(refused(await put(clearhaus({ mcc })), ['mcc'], mcc).mcc, ['[regex]: must be 4 digits, e.g. 5999']);
        refused(await put({ acquirer: 'sandbox', mcc }), ['mcc'], `sandbox ${mcc}`);
      }
      refused(await put(clearhaus({ mcc: 5999 })), ['mcc'], 'a number is not exact text');
    });

    test('textOnStatement: 2–22 printable ASCII characters, or null', async () => {
      for (const textOnStatement of ['x', 'A'.repeat(23), 'Café Øresund', 'line\nbreak', 'tab\there']) {
        const errors = refused(await put(clearhaus({ textOnStatement })), ['textOnStatement'], JSON.stringify(textOnStatement));
        assert.deepEqual(errors.textOnStatement, ['[regex]: must be 2–22 printable ASCII characters']);
      }
      refused(await put({ acquirer: 'sandbox', textOnStatement: 42 }), ['textOnStatement'], 'a number');
      ok(await put(clearhaus({ textOnStatement: 'AB' })), 'two characters');
      ok(await put(clearhaus({ textOnStatement: 'A'.repeat(22) })), 'twenty-two');
      ok(await put(clearhaus({ textOnStatement: '~Shop #1 (DK) & Co.!' })), 'printable punctuation');
    });

    test('fields an agreement does not have are refused by name; an apiKey on a sandbox agreement too', async () => {
      const errors = refused(await put({ acquirer: 'sandbox', apikey: newApiKey(), merchantId: 'x' }), ['apikey', 'merchantId'], 'unknown fields');
      assert.match(errors.apikey![0]!, /^\[in:acquirer,apiKey,mcc,textOnStatement,threeDSecure\]: is not a field of this request; did you mean apiKey\?$/);
      const sandboxKey = refused(await put({ acquirer: 'sandbox', apiKey: newApiKey() }), ['apiKey'], 'sandbox with a key');
      assert.match(sandboxKey.apiKey![0]!, /clearhaus only/);
      // Names Object.prototype has are fields like any other.
      refused(
        await put({ acquirer: 'sandbox', constructor: 1, toString: 'x', hasOwnProperty: null }),
        ['constructor', 'toString', 'hasOwnProperty'],
        'prototype names',
      );
      assert.equal(
        (await withKey.operator.request('PUT', agreementUrl(accountId), { raw: '{"acquirer":"sandbox","__proto__":{"x":1}}', contentType: 'application/json' }))
          .status,
        400,
      );
      // Several problems at once are all named; an unknown field is refused by the body's schema, before the rules of an agreement.
      refused(await put({ acquirer: 'clearhaus', mcc: '12', textOnStatement: 'x' }), ['apiKey', 'mcc', 'textOnStatement'], 'all at once');
      refused(await put({ acquirer: 'clearhaus', mcc: '12', textOnStatement: 'x', extra: 1 }), ['extra'], 'an unknown field first');
    });

    test('threeDSecure: clearhaus only, provider 3dsecure.io, apiKey a UUID, no other fields; refusals write nothing', async () => {
      const accountId = await createAccount(t);
      const base = { acquirer: 'clearhaus', apiKey: newApiKey(), mcc: '5411' };
      const cases: Array<[unknown, string, RegExp]> = [
        [{ provider: '3dsecure.io' }, 'threeDSecure.apiKey', /^\[required\]: is required and must be the merchant's 3dsecure.io API key, a UUID/],
        [{ provider: '3dsecure.io', apiKey: 'not-a-key' }, 'threeDSecure.apiKey', /^\[uuid\]: must be the merchant's 3dsecure.io API key, a UUID/],
        [{ provider: 'netcetera', apiKey: newApiKey() }, 'threeDSecure.provider', /^\[in:3dsecure\.io\]: must be one of 3dsecure\.io/],
        [{ apiKey: newApiKey() }, 'threeDSecure.provider', /^\[required\]/],
        [{ provider: '3dsecure.io', apiKey: newApiKey(), url: 'https://x' }, 'threeDSecure.url', /^\[in:provider,apiKey\]: is not a field of threeDSecure/],
      ];
      for (const [threeDSecure, field, rule] of cases) {
        const res = await putAgreement(t.operator, accountId, { ...base, threeDSecure });
        assert.equal(res.status, 422, JSON.stringify(threeDSecure));
        const errors = res.body.errors as Record<string, string[]>;
        assert.match(errors[field]?.[0] ?? JSON.stringify(errors), rule);
        assert.ok(!res.text.includes('not-a-key'), 'the value is not echoed');
      }
      const sandbox = await putAgreement(t.operator, accountId, { acquirer: 'sandbox', threeDSecure: { provider: '3dsecure.io', apiKey: newApiKey() } });
      assert.equal(sandbox.status, 422);
      assert.match((sandbox.body.errors as Record<string, string[]>).threeDSecure![0]!, /^\[in:clearhaus\]: is taken with acquirer clearhaus only/);
      assert.equal((await t.operator.get(agreementUrl(accountId))).status, 404, 'nothing was written');
    });

    test('not a JSON object → 422 or 400, never a 5xx', async () => {
      refused(await withKey.operator.request('PUT', agreementUrl(accountId), { raw: '[]', contentType: 'application/json' }), ['body'], 'an array');
      refused(await withKey.operator.request('PUT', agreementUrl(accountId), { raw: '"sandbox"', contentType: 'application/json' }), ['body'], 'a string');
      assert.equal((await withKey.operator.request('PUT', agreementUrl(accountId), { raw: '{', contentType: 'application/json' })).status, 400);
      assert.equal(
        (await withKey.operator.request('PUT', agreementUrl(accountId), { raw: 'acquirer=sandbox', contentType: 'application/x-www-form-urlencoded' })).status,
        400,
      );
    });

    test('clearhaus while the deployment has no Clearhaus signing key → 422 on acquirer; sandbox still works there', async () => {
      const account = await createAccount(t);
      const res = await putAgreement(t.operator, account, clearhaus());
      const errors = refused(res, ['acquirer'], 'no signing key');
      assert.match(errors.acquirer![0]!, /^\[in:sandbox\]: clearhaus is not available: this deployment has no Clearhaus signing key/);
      assert.equal((await t.operator.get(agreementUrl(account))).status, 404, 'nothing was stored');
      assert.equal(await t.runtime.store.acquirerAgreements.current(account), null);
      ok(await putAgreement(t.operator, account, { acquirer: 'sandbox' }), 'sandbox');
      // A refused clearhaus PUT leaves the current agreement as it was.
      refused(await putAgreement(t.operator, account, clearhaus()), ['acquirer'], 'again');
      assert.equal(ok(await t.operator.get(agreementUrl(account)), 'GET').acquirerAgreement.acquirer, 'sandbox');
    });

    test('a refused PUT writes nothing and does not keep its Idempotency-Key: the corrected request with the same key goes through', async () => {
      const account = await createAccount(withKey);
      refused(await putAgreement(withKey.operator, account, { acquirer: 'clearhaus', apiKey: 'nope', mcc: '5999' }, 'fix-and-retry'), ['apiKey'], 'bad');
      assert.equal(await withKey.runtime.store.acquirerAgreements.current(account), null);
      const fixed = await putAgreement(withKey.operator, account, clearhaus(), 'fix-and-retry');
      ok(fixed, 'fixed with the same key');
      assert.equal(fixed.headers['idempotent-replayed'], undefined);
    });

    test('404: an unknown account on PUT, GET and DELETE; an account without an agreement on GET and DELETE', async () => {
      for (const res of [
        await putAgreement(withKey.operator, UNKNOWN_ACCOUNT, { acquirer: 'sandbox' }),
        await withKey.operator.get(agreementUrl(UNKNOWN_ACCOUNT)),
        await withKey.operator.delete(agreementUrl(UNKNOWN_ACCOUNT)),
      ]) {
        assert.equal(res.status, 404, res.text);
        assert.deepEqual(res.body, { success: false, errorCode: 'NOT_FOUND', message: 'The account does not exist.' });
      }
      const bare = await createAccount(withKey);
      for (const res of [await withKey.operator.get(agreementUrl(bare)), await withKey.operator.delete(agreementUrl(bare))]) {
        assert.equal(res.status, 404, res.text);
        assert.deepEqual(res.body, { success: false, errorCode: 'NOT_FOUND', message: 'The acquirer agreement does not exist.' });
      }
      refused(await withKey.operator.get(`${API}/partner/accounts/not-a-uuid/acquirer-agreement`), ['accountId'], 'a malformed account id');
      assert.equal(await withKey.runtime.store.acquirerAgreements.current(UNKNOWN_ACCOUNT), null);
    });

    test('a deleted account gets no new agreement (409); its current one can still be read and removed', async () => {
      const account = await createAccount(withKey);
      ok(await putAgreement(withKey.operator, account, { acquirer: 'sandbox' }), 'PUT');
      ok(await withKey.operator.delete(`${API}/partner/accounts/${account}`), 'delete the account');
      const res = await putAgreement(withKey.operator, account, { acquirer: 'sandbox', mcc: '4816' });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.errorCode, 'CONFLICT');
      assert.equal(ok(await withKey.operator.get(agreementUrl(account)), 'GET').acquirerAgreement.mcc, '5999');
      ok(await withKey.operator.delete(agreementUrl(account)), 'DELETE');
    });
  });
}
