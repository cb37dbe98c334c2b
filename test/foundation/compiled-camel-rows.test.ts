/**
 * PostgreSQL's row renaming (postgres/camel-rows.ts) gives the rows and counts Kysely's
 * CamelCasePlugin gives, whatever the columns: the same names, values, nesting and counts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CamelCasePlugin, type QueryResult, type UnknownRow } from 'kysely';
import { CompiledCamelCasePlugin } from '../../src/storage/postgres/camel-rows.js';

const when = new Date('2026-11-29T00:00:00Z');
const results: QueryResult<UnknownRow>[] = [
  { rows: [] },
  { rows: [], numAffectedRows: 3n },
  {
    rows: [
      { id: 'a', point_of_sale_id: 'p', amount: 1000, sealed_pan: null, created_at: when, flag: true },
      { id: 'b', point_of_sale_id: 'q', amount: 5, sealed_pan: 'x', created_at: when, flag: false },
    ],
  },
  { rows: [{ pm_id: 'one', nested_value: { inner_key: 1, list_of: [{ deep_key: 2 }, 3] }, plain_list: [1, 'two_three'] }], numAffectedRows: 1n },
  { rows: [{ ['__proto__']: 'column', pm_id: 'a', pmId: 'b' }] },
];

test('rows renamed as CamelCasePlugin renames them: names, values, nested objects, counts', async () => {
  const compiled = new CompiledCamelCasePlugin();
  const plugin = new CamelCasePlugin();
  for (const result of results) {
    // Twice: the second time through the compiled mapper kept for the columns.
    for (let run = 0; run < 2; run++) {
      const args = { result, queryId: { queryId: 'q' } };
      const mine = await compiled.transformResult(args);
      const theirs = await plugin.transformResult(args);
      assert.deepEqual(mine.rows, theirs.rows);
      assert.equal(mine.numAffectedRows, theirs.numAffectedRows);
      assert.equal(Object.getPrototypeOf(mine.rows[0] ?? {}), Object.prototype);
    }
  }
});
