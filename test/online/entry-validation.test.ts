/** A batch entry's schema check (entry-validation.ts): lengths in code points, patterns, the same messages as a single request. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateEntry } from '../../src/modules/mit/entry-validation.js';
import { MitBody } from '../../src/modules/mit/mit.schemas.js';

const entry = (overrides: Record<string, unknown> = {}) => ({
  subscriptionId: '01a2182a-13f6-70c0-bb40-5dddce88cf87',
  amount: 100,
  notificationUrl: 'https://example.com/cb',
  ...overrides,
});

describe('MIT batch entry validation', () => {
  test('string lengths count code points: 39 emoji fit textOnStatement (78 UTF-16 units), 40 do not', () => {
    assert.deepEqual(validateEntry(MitBody, entry({ textOnStatement: '😀'.repeat(39) })), {});
    assert.deepEqual(Object.keys(validateEntry(MitBody, entry({ textOnStatement: '😀'.repeat(40) }))), ['textOnStatement']);
    assert.deepEqual(Object.keys(validateEntry(MitBody, entry({ textOnStatement: 'x'.repeat(40) }))), ['textOnStatement']);
    assert.deepEqual(Object.keys(validateEntry(MitBody, entry({ reference: '' }))), ['reference']);
  });

  test('patterns and formats are checked on every entry, the same as on the first', () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(validateEntry(MitBody, entry({ currency: 'DKK' })), {});
      assert.deepEqual(Object.keys(validateEntry(MitBody, entry({ currency: 'dkk' }))), ['currency']);
      assert.deepEqual(Object.keys(validateEntry(MitBody, entry({ subscriptionId: 'nope' }))), ['subscriptionId']);
    }
  });
});
