/**
 * Clearhaus status codes → errorCode (INTERFACE §12.3), one assertion per code of the table, and
 * the currency list: every currency both Clearhaus and the service know has one exponent.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyStatusCode, errorCodeFor, externalCodes, messageFor, STATUS_CODES } from '../../src/connectors/clearhaus/codes.js';
import { CLEARHAUS_CURRENCY_EXPONENTS, isCurrencyAccepted } from '../../src/connectors/clearhaus/currencies.js';
import { CURRENCY_EXPONENTS } from '../../src/shared/currencies.js';
import { TRANSACTION_ERROR_CODES } from '../../src/shared/errors.js';

/** INTERFACE §12.3, as written there. */
const INTERFACE_TABLE: Array<[number, string]> = [
  [40110, 'INVALID_CARD_NUMBER'],
  [40120, 'INVALID_CVC'],
  [40130, 'CARD_EXPIRED'],
  [40135, 'CARD_EXPIRED'],
  [40410, 'DECLINED_BY_ISSUER_OR_SCHEME'],
  [40411, 'CARD_RESTRICTED'],
  [40412, 'CARD_LOST_OR_STOLEN'],
  [40413, 'INSUFFICIENT_FUNDS'],
  [40414, 'SUSPECTED_FRAUD'],
  [40415, 'AMOUNT_LIMIT_EXCEEDED'],
  [40416, 'SCA_REQUIRED'],
  [40300, 'REJECTED_BY_SCA'],
  [40310, 'REJECTED_BY_SCA'],
  [40420, 'CARD_BLOCKED'],
  [40400, 'ISSUER_DOWN'],
  // "any other 4xxxx": the rest of clearhaus.md §3.1, 40190 of older docs, and unpublished ones.
  [40000, 'ACQUIRER_DECLINED'],
  [40111, 'ACQUIRER_DECLINED'],
  [40140, 'ACQUIRER_DECLINED'],
  [40150, 'ACQUIRER_DECLINED'],
  [40190, 'ACQUIRER_DECLINED'],
  [40200, 'ACQUIRER_DECLINED'],
  [42900, 'ACQUIRER_DECLINED'],
  [49999, 'ACQUIRER_DECLINED'],
  [50000, 'ACQUIRER_DOWN'],
];

describe('Clearhaus status codes', () => {
  for (const [code, errorCode] of INTERFACE_TABLE) {
    test(`${code} → ${errorCode}`, () => {
      assert.equal(errorCodeFor(code), errorCode);
      assert.equal(externalCodes(code).acquirer, String(code));
      assert.ok(messageFor(code).length > 0);
    });
  }

  test('only 20000 approves; 4xxxx declines; 5xxxx is a Clearhaus error; anything else is unknown', () => {
    assert.equal(classifyStatusCode(20000), 'approved');
    for (const code of [40000, 40410, 42900, 49999]) assert.equal(classifyStatusCode(code), 'declined');
    for (const code of [50000, 50001]) assert.equal(classifyStatusCode(code), 'clearhaus_error');
    for (const code of [0, 200, 20001, 30000, 60000, 39999]) assert.equal(classifyStatusCode(code), 'unknown');
  });

  test('every published code has a row with a message, and each errorCode is one a transaction can carry', () => {
    const published = [
      20000, 40000, 40110, 40111, 40120, 40130, 40135, 40140, 40150, 40200, 40300, 40310, 40400, 40410, 40411, 40412, 40413, 40414, 40415, 40416, 40420, 50000,
    ];
    for (const code of published) assert.ok(STATUS_CODES.has(code), String(code));
    const allowed = new Set<string>(TRANSACTION_ERROR_CODES);
    for (const [code, { errorCode, message }] of STATUS_CODES) {
      if (code !== 20000) assert.ok(allowed.has(errorCode), `${code} → ${errorCode}`);
      assert.match(message, /^[A-Z0-9].*\.$/);
    }
  });

  test('an unknown code gets a message naming it', () => {
    assert.equal(messageFor(42900), 'Clearhaus answered status 42900.');
    assert.equal(externalCodes(null).acquirer, null);
  });
});

describe('Clearhaus currencies', () => {
  test("Clearhaus's list at 63da699: exponents 0 and 3 as published, BGN withdrawn", () => {
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.get('JPY'), 0);
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.get('ISK'), 0);
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.get('KWD'), 3);
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.get('EUR'), 2);
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.has('BGN'), false);
    assert.equal(CLEARHAUS_CURRENCY_EXPONENTS.size, 155);
    assert.deepEqual(
      [...CLEARHAUS_CURRENCY_EXPONENTS.entries()].filter(([, e]) => e === 3).map(([c]) => c),
      ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'],
    );
  });

  test('every currency both lists hold has the same exponent (amounts go to Clearhaus unconverted)', () => {
    const differing = [...CLEARHAUS_CURRENCY_EXPONENTS].filter(([code, exponent]) => CURRENCY_EXPONENTS.has(code) && CURRENCY_EXPONENTS.get(code) !== exponent);
    assert.deepEqual(differing, []);
  });

  test('accepted: listed by Clearhaus and known to the service; refused otherwise', () => {
    for (const code of ['EUR', 'DKK', 'JPY', 'KWD', 'XCG']) assert.ok(isCurrencyAccepted(code), code);
    for (const code of ['BGN', 'CLF', 'UYW', 'XAU', 'ABC', 'eur', 'CNH']) assert.ok(!isCurrencyAccepted(code), code);
  });
});
