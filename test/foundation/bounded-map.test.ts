import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BoundedMap } from '../../src/shared/bounded-map.js';

describe('BoundedMap', () => {
  test('keeps the last `limit` entries set, dropping the oldest first', () => {
    const map = new BoundedMap<string, number>(3);
    for (const [i, key] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(key, i);
    assert.equal(map.size, 3);
    assert.deepEqual(
      ['a', 'b', 'c', 'd', 'e'].map((key) => map.get(key)),
      [undefined, undefined, 2, 3, 4],
    );
  });

  test('a key set again is the newest: the older setting does not push it out', () => {
    const map = new BoundedMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    map.set('c', 4);
    // The ring now holds a(old), b, a, c → setting d pushes out b, the oldest still there; a stays.
    map.set('d', 5);
    assert.equal(map.get('a'), 3);
    assert.equal(map.get('b'), undefined);
    assert.deepEqual([map.get('c'), map.get('d')], [4, 5]);
    map.set('e', 6);
    map.set('f', 7);
    // a was set before c, d, e, f: with room for 3 it is gone now, with c.
    assert.deepEqual(
      ['a', 'c', 'd', 'e', 'f'].map((key) => map.get(key)),
      [undefined, undefined, 5, 6, 7],
    );
    assert.equal(map.size, 3);
  });

  test('deleted entries leave room without pushing out others', () => {
    const map = new BoundedMap<number, string>(2);
    map.set(1, 'one');
    map.set(2, 'two');
    assert.equal(map.delete(1), true);
    assert.equal(map.delete(1), false);
    map.set(3, 'three');
    assert.deepEqual([map.get(1), map.get(2), map.get(3)], [undefined, 'two', 'three']);
    assert.equal(map.size, 2);
  });

  test('stays within its limit over many sets, the newest kept', () => {
    const map = new BoundedMap<number, number>(100);
    for (let i = 0; i < 10_000; i++) {
      map.set(i, i);
      if (i % 7 === 0) map.delete(i - 50);
    }
    assert.ok(map.size <= 100);
    for (let i = 9_900; i < 10_000; i++) if ((i + 50) % 7 !== 0) assert.equal(map.get(i), i);
    assert.equal(map.get(9_899), undefined);
  });

  test('refuses a limit that is not a positive integer', () => {
    assert.throws(() => new BoundedMap(0), /not a positive integer/);
    assert.throws(() => new BoundedMap(1.5), /not a positive integer/);
  });
});
