/** Ids: time-ordered UUIDs for every record but the transaction, whose id the interface fixes. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId, newTransactionId, newUnguessableId, TRANSACTION_ID_PATTERN } from '../../src/shared/ids.js';

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

  test('newId strictly increases within a process, also within one millisecond and past 4,096 in it', () => {
    // Rows written in one commit share their timestamp; their ids keep the order they were made in.
    const ids = Array.from({ length: 20_000 }, () => newId());
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]} at ${i}`);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('a transaction id is 11 upper-case Crockford characters', () => {
    assert.match(newTransactionId(), new RegExp(TRANSACTION_ID_PATTERN));
    assert.match(newUnguessableId(), new RegExp(TRANSACTION_ID_PATTERN));
  });

  test('transaction ids of one second share their first 5 characters, which grow with the second; the other 6 are random', () => {
    const second = Date.UTC(2026, 10, 28, 1, 2, 3);
    const ids = Array.from({ length: 10_000 }, (_, i) => newTransactionId(second + (i % 1000)));
    assert.equal(new Set(ids.map((id) => id.slice(0, 5))).size, 1, 'one prefix for the second');
    // 30 random bits: among 10 000 ids of one second two are alike once in about 20 runs (the
    // service makes a taken id again, NEW_ID_TRIES); an id whose last 6 characters were not random
    // would repeat by the thousand.
    assert.ok(new Set(ids).size >= 9_990, `nearly all distinct within it: ${new Set(ids).size}`);
    const next = newTransactionId(second + 1000);
    assert.ok(next.slice(0, 5) > ids[0]!.slice(0, 5), `${next} after ${ids[0]}`);
    // The prefix is the second modulo 2^25, in base 32.
    const prefix = ids[0]!.slice(0, 5);
    const decoded = [...prefix].reduce((n, c) => n * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);
    assert.equal(decoded, Math.floor(second / 1000) % 2 ** 25);
  });

  test('an unguessable id shares no prefix with the time: its 11 characters are random', () => {
    const ids = Array.from({ length: 2000 }, () => newUnguessableId());
    assert.ok(new Set(ids.map((id) => id.slice(0, 5))).size > 1900, 'prefixes spread over 32^5');
  });
});
