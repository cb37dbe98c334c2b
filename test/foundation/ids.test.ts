/** Ids: time-ordered UUIDs for every record but the transaction, whose id the interface fixes. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId, newTransactionId, TRANSACTION_ID_PATTERN } from '../../src/shared/ids.js';

describe('ids', () => {
  test('newId is a UUID version 7 whose first 48 bits are the creation millisecond', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    assert.ok(ms >= before && ms <= after, `${ms} within [${before}, ${after}]`);
  });

  test('newId sorts by creation time across milliseconds and is unique within one', async () => {
    const first = newId();
    await new Promise((r) => setTimeout(r, 3));
    assert.ok(first < newId());
    assert.equal(new Set(Array.from({ length: 10_000 }, () => newId())).size, 10_000);
  });

  test('a transaction id is 11 upper-case Crockford characters', () => {
    assert.match(newTransactionId(), new RegExp(TRANSACTION_ID_PATTERN));
  });
});
