/**
 * Clearhaus request bodies: bracket keys with raw brackets, values percent-encoded, fields in a
 * fixed order (the docs' signing example comes out byte for byte), and the rules each optional
 * field must meet before it is sent.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  authorizationFields,
  type AuthorizationForm,
  captureFields,
  cardholderIp,
  cardName,
  creditFields,
  encodeForm,
  expireMonth,
  expireYear,
  isValidTextOnStatement,
  pickTextOnStatement,
  referenceFor,
  refundFields,
} from '../../src/connectors/clearhaus/form.js';
import { newId, newTransactionId } from '../../src/shared/ids.js';

const card = { pan: '4111111111111111', expiryMonth: 6, expiryYear: 2022, csc: '123' };
const plain: AuthorizationForm = {
  amount: 2050,
  currency: 'EUR',
  reference: null,
  textOnStatement: null,
  ip: '1.1.1.1',
  initiator: null,
  credentialOnFile: null,
  seriesType: null,
  previousAuthorizationId: null,
  method: 'card',
  card,
  threeDSecure: null,
};

describe('Clearhaus form encoding', () => {
  test("the docs' signing example comes out byte for byte (vector 1 of clearhaus.md §4.4)", () => {
    assert.equal(
      encodeForm(authorizationFields(plain)),
      'amount=2050&currency=EUR&ip=1.1.1.1&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2022&card[csc]=123',
    );
  });

  test('a 3-D Secure ARes goes last, as card[3dsecure][v2][ares], its JSON percent-encoded byte for byte', () => {
    const ares = '{"messageType":"ARes","transStatus":"Y","authenticationValue":"mK225wGt2bLnnLB0UlRky0oHLnU="}';
    const body = encodeForm(authorizationFields({ ...plain, threeDSecure: { kind: 'ares', message: ares } }));
    assert.ok(body.endsWith(`&card[3dsecure][v2][ares]=${encodeURIComponent(ares)}`), body);
    assert.equal(new URLSearchParams(body).get('card[3dsecure][v2][ares]'), ares);
    const rreq = encodeForm(authorizationFields({ ...plain, threeDSecure: { kind: 'rreq', message: '{"messageType":"RReq"}' } }));
    assert.ok(rreq.includes('card[3dsecure][v2][rreq]='));
  });

  test('brackets stay raw; key segments and values are percent-encoded as encodeURIComponent does', () => {
    assert.equal(encodeForm([['text_on_statement', 'Shop & Co+ 100%/é']]), 'text_on_statement=Shop%20%26%20Co%2B%20100%25%2F%C3%A9');
    assert.equal(encodeForm([['a b[c&d][e]', 'x=y']]), 'a%20b[c%26d][e]=x%3Dy');
    assert.equal(encodeForm([]), '', 'no fields: the empty body of a void');
  });

  test('a first-in-series CIT, in the documented order', () => {
    const body = encodeForm(
      authorizationFields({
        ...plain,
        reference: '0ABCD1234EF',
        textOnStatement: 'My Shop',
        ip: null,
        initiator: 'cardholder',
        credentialOnFile: 'store',
        seriesType: 'recurring',
        card: { ...card, expiryYear: 2030 },
      }),
    );
    assert.equal(
      body,
      'amount=2050&currency=EUR&reference=0ABCD1234EF&text_on_statement=My%20Shop&initiator=cardholder&credential_on_file=store&series[type]=recurring' +
        '&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2030&card[csc]=123',
    );
  });

  test('a subsequent MIT as the docs example: series[previous][id], the card without CSC', () => {
    const body = encodeForm(
      authorizationFields({
        ...plain,
        ip: null,
        previousAuthorizationId: '1b722683-92ad-4c6b-85da-e119d550670d',
        card: { ...card, expiryYear: 2026, csc: null },
      }),
    );
    assert.equal(
      body,
      'amount=2050&currency=EUR&series[previous][id]=1b722683-92ad-4c6b-85da-e119d550670d&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2026',
    );
  });

  test('MOTO: the moto method, never a CSC', () => {
    const body = encodeForm(authorizationFields({ ...plain, ip: null, method: 'moto' }));
    assert.equal(body, 'amount=2050&currency=EUR&moto[pan]=4111111111111111&moto[expire_month]=06&moto[expire_year]=2022');
  });

  test('capture, refund, credit', () => {
    assert.equal(encodeForm(captureFields({ amount: 1000, textOnStatement: null })), 'amount=1000');
    assert.equal(encodeForm(captureFields({ amount: 1000, textOnStatement: 'Shop' })), 'amount=1000&text_on_statement=Shop');
    assert.equal(encodeForm(refundFields({ amount: 500 })), 'amount=500');
    assert.equal(
      encodeForm(creditFields({ amount: 50000, currency: 'EUR', reference: 'R1', textOnStatement: null, card: { ...card, name: 'Jane Doe' } })),
      'amount=50000&currency=EUR&reference=R1&card[pan]=4111111111111111&card[expire_month]=06&card[expire_year]=2022&card[name]=Jane%20Doe',
      'a credit never carries the CSC',
    );
  });

  test('expiry: month zero-padded to two digits, year four digits', () => {
    assert.equal(expireMonth(6), '06');
    assert.equal(expireMonth(12), '12');
    assert.equal(expireYear(2031), '2031');
    assert.equal(expireYear(31), '2031');
  });
});

describe('Clearhaus field rules', () => {
  test('text_on_statement: 2–22 printable ASCII, not all digits, not one repeated character, not a sequential run', () => {
    for (const ok of ['ab1', 'My Shop', 'shop.example', 'Aa', 'x'.repeat(21) + 'y', 'abd', '12a']) assert.ok(isValidTextOnStatement(ok), ok);
    for (const bad of [null, undefined, '', 'a', 'x'.repeat(21) + 'yz', '12345', 'aaaa', '   ', 'abc', 'ABCDEF', '6789', 'cba', 'Café', 'tab\there']) {
      assert.ok(!isValidTextOnStatement(bad), String(bad));
    }
  });

  test("the payment's statement text first, else the agreement's, else none", () => {
    assert.equal(pickTextOnStatement('Order 7', 'Agreement'), 'Order 7');
    assert.equal(pickTextOnStatement('abc', 'Agreement'), 'Agreement');
    assert.equal(pickTextOnStatement(null, 'Agreement'), 'Agreement');
    assert.equal(pickTextOnStatement('1234', '9999'), null);
    assert.equal(pickTextOnStatement(null, null), null);
  });

  test('ip: a valid IPv4 or IPv6 address only', () => {
    for (const ok of ['1.1.1.1', '203.0.113.7', '::1', '2001:db8::1', '::ffff:192.0.2.1']) assert.equal(cardholderIp(ok), ok);
    for (const bad of [null, '', '1.1.1', '999.1.1.1', 'localhost', 'fe80::1%eth0', '1.1.1.1 ', 'g::1']) assert.equal(cardholderIp(bad), null, String(bad));
  });

  test('reference: our transaction ids (11 characters) go unchanged; anything longer is cut deterministically to 30', () => {
    const id = newTransactionId();
    assert.equal(referenceFor(id), id);
    const uuid = newId();
    const derived = referenceFor(uuid)!;
    assert.equal(derived, uuid.replace(/-/g, '').slice(-30));
    assert.equal(derived.length, 30);
    assert.equal(referenceFor(uuid), derived, 'the same id gives the same reference');
    assert.equal(referenceFor('x'.repeat(30)), 'x'.repeat(30));
    assert.equal(referenceFor(''), null);
  });

  test('card[name]: [A-Za-z0-9 ]{1,30}, else left out', () => {
    assert.equal(cardName('Jane Doe 2'), 'Jane Doe 2');
    for (const bad of [null, '', 'Jöns', "O'Brien", 'x'.repeat(31)]) assert.equal(cardName(bad), null, String(bad));
  });
});
