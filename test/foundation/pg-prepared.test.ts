/**
 * Server-side prepared statements on PostgreSQL (src/storage/pg-prepared.ts): a parameterized
 * text goes out as a named statement, the same name every time and on every client; statements
 * without parameters and non-text queries go as they came; past the cap texts go unnamed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PreparedNames } from '../../src/storage/pg-prepared.js';

function recordingClient() {
  const sent: unknown[][] = [];
  return { sent, client: { query: (...args: unknown[]) => sent.push(args) } };
}

test('a parameterized text is sent as a named statement, one name per text across clients', () => {
  const names = new PreparedNames();
  const a = recordingClient();
  const b = recordingClient();
  names.prepareOn(a.client);
  names.prepareOn(b.client);
  a.client.query('select * from "t" where "id" = $1', [1]);
  b.client.query('select * from "t" where "id" = $1', [2]);
  a.client.query('update "t" set "x" = $1', ['y']);
  assert.deepEqual(a.sent, [
    [{ name: 's1', text: 'select * from "t" where "id" = $1', values: [1] }],
    [{ name: 's2', text: 'update "t" set "x" = $1', values: ['y'] }],
  ]);
  assert.deepEqual(b.sent, [[{ name: 's1', text: 'select * from "t" where "id" = $1', values: [2] }]]);
});

test('BEGIN/COMMIT, statements without parameters, config objects and callbacks go as they came', () => {
  const names = new PreparedNames();
  const { sent, client } = recordingClient();
  names.prepareOn(client);
  const callback = () => undefined;
  const cursor = { text: 'select 1', submit() {} };
  client.query('begin');
  client.query('select 1', []);
  client.query(cursor);
  client.query('select $1', [1], callback);
  assert.deepEqual(sent, [['begin'], ['select 1', []], [cursor], ['select $1', [1], callback]]);
});

test('past the cap, new texts go unnamed; the named ones keep their names', () => {
  const names = new PreparedNames();
  for (let i = 0; i < 2000; i++) assert.equal(names.nameOf(`select ${i} where $1`), `s${i + 1}`);
  assert.equal(names.nameOf('select 0 where $1'), 's1');
  assert.equal(names.nameOf('select 2000 where $1'), null);
});
