/**
 * Query templates (src/storage/query-template.ts): built and compiled once per dialect, then only
 * bound; the same results as the plain Kysely query on both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { keyedTemplates, queryTemplate, type Params } from '../../src/storage/query-template.js';
import type { Database } from '../../src/storage/schema.js';
import { availableStores } from '../support/stores.js';
import { iso, openTestStore, T0, type TestStore } from './fixtures.js';

interface JobParams {
  id: string;
  kind: string;
  payload: string;
  dedupeKey: string | null;
  at: string;
}

const insertJob = queryTemplate((db: Kysely<Database>, p: Params<JobParams>) =>
  db
    .insertInto('jobs')
    .values({
      id: p.id,
      kind: p.kind,
      payload: p.payload,
      state: 'queued',
      dedupeKey: p.dedupeKey,
      runAt: p.at,
      maxAttempts: 5,
      createdAt: p.at,
      updatedAt: p.at,
    })
    .onConflict((oc) => oc.column('dedupeKey').doNothing()),
);
const selectJob = queryTemplate((db: Kysely<Database>, p: Params<{ id: string }>) => db.selectFrom('jobs').selectAll().where('id', '=', p.id));
const finishJob = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; at: string }>) =>
  db.updateTable('jobs').set({ state: 'done', finishedAt: p.at, updatedAt: p.at }).where('id', '=', p.id).where('state', '=', 'queued'),
);
const finishJobReturning = queryTemplate((db: Kysely<Database>, p: Params<{ id: string; at: string }>) =>
  db.updateTable('jobs').set({ state: 'done', finishedAt: p.at, updatedAt: p.at }).where('id', '=', p.id).returningAll(),
);
const plainInsert = (db: Kysely<Database>, p: JobParams) =>
  db
    .insertInto('jobs')
    .values({
      id: p.id,
      kind: p.kind,
      payload: p.payload,
      state: 'queued',
      dedupeKey: p.dedupeKey,
      runAt: p.at,
      maxAttempts: 5,
      createdAt: p.at,
      updatedAt: p.at,
    })
    .onConflict((oc) => oc.column('dedupeKey').doNothing());

const job = (over: Partial<JobParams> = {}): JobParams => ({ id: newId(), kind: 'tpl.test', payload: '{"a":1}', dedupeKey: null, at: iso(T0), ...over });

for (const kind of await availableStores()) {
  describe(`query templates (${kind})`, () => {
    let t: TestStore;
    let db: Kysely<Database>;
    /** Runs `fn` on a fresh Kysely instance of the same connection (a transaction / a group commit's closure). */
    let inTransaction: <T>(fn: (trx: Kysely<Database>) => Promise<T>) => Promise<T>;
    before(async () => {
      t = await openTestStore(kind);
      db = t.store.db;
      inTransaction = (fn) => (t.store.batcher ? t.store.batcher.run(fn) : db.transaction().execute(fn));
    });
    after(() => t.close());

    test('insert, select and update give what the plain Kysely query gives', async () => {
      const a = job({ dedupeKey: `k-${newId()}` });
      const b = job({ dedupeKey: `k-${newId()}` });
      const viaTemplate = await insertJob.execute(db, a);
      const viaPlain = await plainInsert(db, b).execute();
      assert.equal(viaTemplate.length, 1);
      assert.equal(viaTemplate[0]!.numInsertedOrUpdatedRows, viaPlain[0]!.numInsertedOrUpdatedRows);
      assert.equal(viaTemplate[0]!.numInsertedOrUpdatedRows, 1n);
      // The conflict clause is kept: a second insert with the dedupe key changes nothing.
      const again = await insertJob.executeTakeFirst(db, { ...job(), dedupeKey: a.dedupeKey });
      assert.equal(again?.numInsertedOrUpdatedRows, 0n);

      const rowA = await selectJob.executeTakeFirst(db, { id: a.id });
      const plainA = await db.selectFrom('jobs').selectAll().where('id', '=', a.id).executeTakeFirst();
      assert.deepEqual(rowA, plainA);
      assert.equal(rowA?.dedupeKey, a.dedupeKey, 'camelCase keys');
      assert.equal(rowA?.state, 'queued', 'constants kept');
      assert.equal(rowA?.maxAttempts, 5);
      assert.deepEqual(await selectJob.execute(db, { id: newId() }), []);

      const done = await finishJob.executeTakeFirst(db, { id: a.id, at: iso(T0 + 1) });
      const plainDone = await db
        .updateTable('jobs')
        .set({ state: 'done', finishedAt: iso(T0 + 1), updatedAt: iso(T0 + 1) })
        .where('id', '=', b.id)
        .where('state', '=', 'queued')
        .executeTakeFirst();
      assert.equal(done?.numUpdatedRows, 1n);
      assert.equal(plainDone.numUpdatedRows, 1n);
      assert.equal((await finishJob.executeTakeFirst(db, { id: a.id, at: iso(T0 + 2) }))?.numUpdatedRows, 0n, 'where constant kept');

      const returned = await finishJobReturning.executeTakeFirst(db, { id: a.id, at: iso(T0 + 3) });
      const plainReturned = await db.selectFrom('jobs').selectAll().where('id', '=', a.id).executeTakeFirst();
      assert.deepEqual(returned, plainReturned);
      assert.equal(returned?.finishedAt, iso(T0 + 3));
      assert.equal(await finishJobReturning.executeTakeFirst(db, { id: newId(), at: iso(T0) }), undefined);
    });

    test('null is a value; undefined and expressions are refused at execute', async () => {
      const a = job({ dedupeKey: null });
      await insertJob.execute(db, a);
      assert.equal((await selectJob.executeTakeFirst(db, { id: a.id }))?.dedupeKey, null);
      await assert.rejects(insertJob.execute(db, { ...job(), dedupeKey: undefined as unknown as null }), /"dedupeKey" is undefined/);
      await assert.rejects(selectJob.execute(db, { id: sql<string>`'x'` as unknown as string }), /expression/);
    });

    test('compiles once per dialect, also across transactions and group-commit closures', async () => {
      const tpl = queryTemplate((d: Kysely<Database>, p: Params<{ id: string }>) => d.selectFrom('jobs').select('id').where('id', '=', p.id));
      const a = job();
      await insertJob.execute(db, a);
      for (let i = 0; i < 3; i++) assert.deepEqual(await tpl.execute(db, { id: a.id }), [{ id: a.id }]);
      assert.equal(tpl.compiles, 1);
      const rows = await inTransaction((trx) => tpl.execute(trx, { id: a.id }));
      await inTransaction((trx) => tpl.execute(trx, { id: a.id }));
      assert.deepEqual(rows, [{ id: a.id }]);
      assert.equal(tpl.compiles, 1, 'a transaction shares its root instance compile');
      // The inserts in a transaction are seen there and committed with it.
      const b = job();
      await inTransaction(async (trx) => {
        await insertJob.execute(trx, b);
        assert.equal((await selectJob.executeTakeFirst(trx, { id: b.id }))?.id, b.id);
      });
      assert.equal((await selectJob.executeTakeFirst(db, { id: b.id }))?.id, b.id);
      // Another plugin list compiles anew (withoutPlugins: results as the driver gives them — on
      // SQLite its statements name the properties already, prenamed-rows.ts; pg gives column names).
      const bare = db.withoutPlugins();
      const raw = await selectJob.executeTakeFirst(bare as Kysely<Database>, { id: a.id });
      assert.equal((raw as Record<string, unknown> | undefined)?.[kind === 'sqlite' ? 'dedupeKey' : 'dedupe_key'], null);
      assert.equal(tpl.compiles, 1);
    });

    test('the compiled statement is the plain one with the parameters bound', async () => {
      const p = job({ dedupeKey: 'dk' });
      const compiled = insertJob.compile(db, p);
      const plain = plainInsert(db, p).compile();
      assert.equal(compiled.sql, plain.sql);
      assert.deepEqual(compiled.parameters, plain.parameters);
      // executeQuery of a compiled query applies the plugins' result transforms (camelCase).
      const rows = await db.executeQuery(CompiledQuery.raw(selectJob.compile(db, { id: newId() }).sql, ['none']));
      assert.deepEqual(rows.rows, []);
    });

    test('a template whose shape depends on a value throws at its first compile', async () => {
      const branch = queryTemplate((d: Kysely<Database>, p: Params<{ id: string; all: boolean }>) => {
        const q = d.selectFrom('jobs').select('id').where('id', '=', p.id);
        return p.all ? q : q.limit(1);
      });
      await assert.rejects(branch.execute(db, { id: 'x', all: true }), /placeholder "all" is not a parameter/);
      const transformed = queryTemplate((d: Kysely<Database>, p: Params<{ id: string }>) => d.selectFrom('jobs').select('id').where('id', '=', `${p.id}-x`));
      await assert.rejects(transformed.execute(db, { id: 'x' }), /transformed/);
      const inText = queryTemplate((d: Kysely<Database>, p: Params<{ column: string }>) => d.selectFrom('jobs').select(sql.ref<string>(p.column).as('c')));
      await assert.rejects(inText.execute(db, { column: 'id' }), /SQL text/);
      const literal = queryTemplate((d: Kysely<Database>, p: Params<{ id: string }>) => d.selectFrom('jobs').select('id').where('id', '=', sql.lit(p.id)));
      await assert.rejects(literal.execute(db, { id: 'x' }), /SQL text/);
    });

    test('keyed templates: one compile per set of defined keys', async () => {
      const update = keyedTemplates((d: Kysely<Database>, p: Params<{ id: string; lastError?: string | null; leasedBy?: string | null }>) => {
        const { id, ...set } = p;
        return d.updateTable('jobs').set(set).where('id', '=', id);
      });
      const a = job();
      await insertJob.execute(db, a);
      await update.execute(db, { id: a.id, lastError: 'e1' });
      await update.execute(db, { id: a.id, lastError: 'e2', leasedBy: undefined });
      await update.execute(db, { id: a.id, leasedBy: 'w1' });
      const row = await selectJob.executeTakeFirst(db, { id: a.id });
      assert.equal(row?.lastError, 'e2');
      assert.equal(row?.leasedBy, 'w1');
      assert.equal(update.template({ id: a.id, lastError: null }).template.compiles, 1);
      assert.equal(update.template({ id: a.id, leasedBy: null }).template.compiles, 1);
    });

    test('keyed templates: the shape is the defined keys in their order, however many shapes take turns', async () => {
      const update = keyedTemplates((d: Kysely<Database>, p: Params<Record<string, string | null | undefined>>) => {
        const { id, ...set } = p;
        return d.updateTable('jobs').set(set).where('id', '=', id!);
      });
      const columns = ['lastError', 'leasedBy', 'kind', 'dedupeKey', 'runAt', 'payload'];
      // One shape per column (more than the shapes remembered as recent), each asked for twice in turn.
      const first = columns.map((c) => update.template({ id: 'x', [c]: null }).template);
      const again = columns.map((c) => update.template({ id: 'x', [c]: null }).template);
      assert.deepEqual(again, first);
      assert.equal(new Set(first).size, columns.length, 'a template per shape');
      // An undefined key is not part of the shape; a key missing or added is another shape; order counts.
      assert.equal(update.template({ id: 'x', lastError: undefined, leasedBy: null }).template, first[1]);
      assert.notEqual(update.template({ id: 'x' }).template, first[0]);
      assert.notEqual(update.template({ id: 'x', lastError: null, leasedBy: null }).template, first[0]);
      assert.notEqual(update.template({ leasedBy: null, id: 'x' }).template, first[1]);
      const a = job();
      await insertJob.execute(db, a);
      for (const [i, c] of ['lastError', 'leasedBy', 'lastError'].entries()) await update.execute(db, { id: a.id, [c]: `v${i}` });
      const row = await selectJob.executeTakeFirst(db, { id: a.id });
      assert.equal(row?.lastError, 'v2');
      assert.equal(row?.leasedBy, 'v1');
    });
  });
}
