/**
 * The numeric bounds of INTERFACE §11, read from the contract's text, against the request schemas
 * that enforce them (issue 46): a bound changed on one side only fails here. The contract is kept
 * in docs/contract/INTERFACE.md; where the owner's copy sits beside the repository
 * (../shared/INTERFACE.md), the two must be the same text.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BillingAgreementRecord } from '../../src/modules/billing/agreements.schemas.js';
import { CreateMultiLinkBody, OrderLineInput } from '../../src/modules/multi-links/multi-links.schemas.js';
import { CreatePaymentLinkBody } from '../../src/modules/payment-links/payment-links.schemas.js';
import { PAYMENT_LINK_TIMEOUT_MINUTES } from '../../src/modules/payment-links/payment-link.js';
import { SaleBody, SaleTerminal } from '../../src/modules/sales/sales.schemas.js';
import { AgeVerificationInput, CitSubscriptionInput, CreateCitBody } from '../../src/modules/sessions/sessions.schemas.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VENDORED = path.join(ROOT, 'docs/contract/INTERFACE.md');
const OWNERS = path.join(ROOT, '../shared/INTERFACE.md');
const contract = fs.readFileSync(VENDORED, 'utf8');
const section11 = contract.slice(contract.indexOf('## 11.'), contract.indexOf('## 12.'));

type Json = Record<string, any>;

/** The schema of `property`, through Optional and Nullable (anyOf with null). */
function prop(schema: Json, property: string): Json {
  const found = schema.properties?.[property] as Json | undefined;
  assert.ok(found, `no property ${property}`);
  return (found.anyOf?.find((s: Json) => s.type !== 'null') as Json | undefined) ?? found;
}

/** The integers of the first match of `pattern` in §11 (thousands separators dropped). */
function stated(pattern: RegExp): number[] {
  const match = pattern.exec(section11);
  assert.ok(match, `INTERFACE §11 no longer says ${pattern}`);
  return match.slice(1).map((n) => Number(n.replaceAll(',', '')));
}

const range = (schema: Json) => [schema.minimum as number, schema.maximum as number];

describe('INTERFACE §11 bounds in the request schemas', () => {
  test('the vendored contract is the owner’s text', (t) => {
    if (!fs.existsSync(OWNERS)) return t.skip('no ../shared/INTERFACE.md beside this checkout');
    assert.equal(contract, fs.readFileSync(OWNERS, 'utf8'), 'docs/contract/INTERFACE.md is out of date: copy ../shared/INTERFACE.md');
  });

  test('session timeout 1–120 minutes (POST /cit); payment links up to 86,400, the 60-day default', () => {
    const [min, max, linkMax] = stated(/`timeout`: minutes, (\d+)–(\d+) \(payment links: up to ([\d,]+), default 60 days\)/);
    assert.deepEqual(range(prop(CreateCitBody, 'timeout')), [min, max]);
    assert.deepEqual(range(prop(CreatePaymentLinkBody, 'timeout')), [min, linkMax]);
    assert.equal(PAYMENT_LINK_TIMEOUT_MINUTES.default, 60 * 24 * 60, '60 days in minutes');
    assert.equal(PAYMENT_LINK_TIMEOUT_MINUTES.max, linkMax);
  });

  test('reference 1–36 letters, digits and hyphens on /cit, /payment-links, /multi-links and /sale', () => {
    const [pattern] = /`reference`: `(\^[^`]+\$)`/.exec(section11)!.slice(1);
    for (const body of [CreateCitBody, CreatePaymentLinkBody, CreateMultiLinkBody, prop(SaleBody, 'transaction')])
      assert.equal(prop(body, 'reference').pattern, pattern);
  });

  test('ageVerification.minimumAge 0–99', () => {
    const [min, max] = stated(/`ageVerification \{minimumAge: (\d+)–(\d+)/);
    assert.deepEqual(range(prop(AgeVerificationInput, 'minimumAge')), [min, max]);
    assert.deepEqual(range(prop(prop(CreateMultiLinkBody, 'ageVerification'), 'minimumAge')), [min, max]);
  });

  test('subscription.amount ≥ 0', () => {
    const [min] = stated(/`subscription\.amount` \(≥ (\d+)\)/);
    assert.equal(prop(CitSubscriptionInput, 'amount').minimum, min);
  });

  test('multi-links: timeout 1–120 minutes each started session lives', () => {
    const [min, max] = stated(/`timeout` \((\d+)–(\d+), minutes each started session lives\)/);
    assert.deepEqual(range(prop(CreateMultiLinkBody, 'timeout')), [min, max]);
  });

  test('order lines: description 1–255, quantity ≥ 0, unitPrice ≤ 200000000, totalAmount 0–200000000', () => {
    const [descMin, descMax, quantityMin, unitMax, totalMin, totalMax] = stated(
      /`\{description \((\d+)–(\d+)\), imageUrl\?, quantity \(≥ (\d+)\), unitPrice \(≤ (\d+)\), totalAmount\s+\((\d+)–(\d+)\)/,
    );
    const description = prop(OrderLineInput, 'description');
    assert.deepEqual([description.minLength, description.maxLength], [descMin, descMax]);
    assert.equal(prop(OrderLineInput, 'quantity').minimum, quantityMin);
    assert.equal(prop(OrderLineInput, 'unitPrice').maximum, unitMax);
    assert.deepEqual(range(prop(OrderLineInput, 'totalAmount')), [totalMin, totalMax]);
  });

  test('terminal: switchBackTimeout ≥ 0 ms, activityToResume ≤ 255', () => {
    const [switchMin, activityMax] = stated(/`switchBackTimeout` \(integer ms ≥ (\d+) or null\), `activityToResume` \(string ≤ (\d+) or null\)/);
    assert.equal(prop(SaleTerminal, 'switchBackTimeout').minimum, switchMin);
    assert.equal(prop(SaleTerminal, 'activityToResume').maxLength, activityMax);
  });

  test('billing agreements: desiredDate 1–31', () => {
    const [min, max] = stated(/`desiredDate` is an integer day of the month \((\d+)–(\d+)\)/);
    assert.deepEqual(range(prop(BillingAgreementRecord, 'desiredDate')), [min, max]);
  });
});
