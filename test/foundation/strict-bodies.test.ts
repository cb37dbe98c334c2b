/**
 * Strict bodies and errors that say how to fix (issue 46): a JSON body field that neither INTERFACE
 * nor the production reference defines is a 422 VALIDATION_ERROR naming it (with a near name when
 * it is a typo) and changes nothing; fields production defines and the service ignores stay
 * accepted; maps stay open. Every 422 rule text says what is expected, and the message names each
 * field with its rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { citBody, mitBody, ok, storedCard } from '../online/cit-flows.js';

const CB = 'http://localhost:9/cb';

for (const kind of await availableStores()) {
  describe(`strict bodies (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let subscriptionId: string;

    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant({ physical: false });
      subscriptionId = (await storedCard(t, m, 'cust-strict')).subscriptionId;
    });
    after(() => t.close());

    const transactionsWith = async (reference: string) => ok(await m.api.get(`${API}/transactions?reference=${reference}`), 'list').items as unknown[];

    test('POST /mit with "currancy": 422 naming the field, a near name offered, nothing charged', async () => {
      const body: Record<string, unknown> = mitBody(subscriptionId, CB, { reference: 'strict-typo' });
      delete body.currency;
      body.currancy = 'EUR';
      const res = await m.api.post(`${API}/mit`, body);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
      const [rule] = res.body.errors.currancy as string[];
      assert.match(rule!, /^\[in:[^\]]*\bcurrency\b[^\]]*\]: is not a field of this request; did you mean currency\?$/);
      assert.match(res.body.message, /currancy is not a field of this request; did you mean currency\?/);
      assert.deepEqual(await transactionsWith('strict-typo'), [], 'nothing was created');
    });

    test('an unknown field inside a nested object is named by its dot path', async () => {
      const res = await m.api.post(`${API}/cit`, citBody(m, { subscription: { type: 'UNSCHEDULED', intervall: { period: 'MONTH' } } }));
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body.errors), ['subscription.intervall']);
      assert.match(res.body.errors['subscription.intervall'][0], /^\[in:[^\]]+\]: is not a field of subscription; did you mean interval\?$/);
    });

    test('a MIT batch entry with an unknown field fails alone, as the single request would', async () => {
      const res = ok(
        await m.api.post(`${API}/mit/batch`, {
          transactions: [mitBody(subscriptionId, CB, { reference: 'strict-b1' }), mitBody(subscriptionId, CB, { reference: 'strict-b2', amuont: 5 })],
        }),
        'batch',
      );
      assert.ok(res.transactions[0].transaction, 'the valid entry is accepted');
      assert.equal(res.transactions[1].error.errorCode, 'VALIDATION_ERROR');
      assert.match(res.transactions[1].error.errors.amuont[0], /is not a field of this request; did you mean amount\?/);
    });

    test('an unknown top-level field of the batch body itself is refused', async () => {
      const res = await m.api.post(`${API}/mit/batch`, { transactions: [mitBody(subscriptionId, CB)], entries: [] });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body.errors), ['entries']);
    });

    test('fields production defines and the service ignores stay accepted (processor); attributes take any key', async () => {
      ok(await m.api.post(`${API}/cit`, citBody(m, { processor: ['NETS'], attributes: { anyKey: 'v', other: 'w' } })), 'POST /cit with processor');
    });

    test('amount "10.00": the rule says an integer in minor units with an example; the message names field and rule', async () => {
      const res = await m.api.post(`${API}/mit`, mitBody(subscriptionId, CB, { amount: '10.00' }));
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(res.body.errors.amount, ['[int]: must be an integer in minor units, e.g. 1000 = 10.00 DKK, not a string']);
      assert.equal(res.body.message, 'The request is invalid: amount must be an integer in minor units, e.g. 1000 = 10.00 DKK, not a string.');
      const fraction = await m.api.post(`${API}/mit`, mitBody(subscriptionId, CB, { amount: 10.5 }));
      assert.match(fraction.body.errors.amount[0], /^\[int\]: must be an integer in minor units, e\.g\. 1000 = 10\.00 DKK/);
    });

    test('every rule text of a mixed bad body follows "[rule]: text" and says what is expected', async () => {
      const res = await m.api.post(`${API}/cit`, { pointOfSaleId: 'nope', amount: -1, currency: 'dkk', timeout: 0, reportFailure: 'yes', extra: 1 });
      assert.equal(res.status, 422, res.text);
      for (const [field, rules] of Object.entries(res.body.errors as Record<string, string[]>)) {
        for (const rule of rules) {
          assert.match(rule, FIELD_RULE_PATTERN, `${field}: ${rule}`);
          assert.doesNotMatch(rule, /must be of type|is invalid$/, `${field}: ${rule} says what is expected`);
          assert.ok(res.body.message.includes(`${field} `), `the message names ${field}: ${res.body.message}`);
        }
      }
      assert.deepEqual(Object.keys(res.body.errors).sort(), ['amount', 'currency', 'extra', 'pointOfSaleId', 'reportFailure', 'timeout']);
      assert.match(res.body.errors.reportFailure[0], /must be true or false, not a string/);
      assert.match(res.body.errors.amount[0], /must be at least 0 \(minor units\)/);
    });
  });
}
