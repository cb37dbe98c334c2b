/**
 * The job catalogue (src/jobs/catalogue.ts) is the one place where job kinds, payloads and
 * policies live: every job the service registers comes from it with its policy, what the service
 * enqueues matches its kind's schema, and a claimed job whose payload does not is dead at once
 * without reaching its handler.
 */
import type { DriveRecord } from '../../src/modules/transactions/transactions.repository.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { defineJob, JOB_CATALOGUE, type JobKind, newJob } from '../../src/jobs/catalogue.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/logger.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { openTestStore, type TestStore } from './fixtures.js';

const KINDS = Object.keys(JOB_CATALOGUE) as JobKind[];

test('every job the service registers is a catalogue kind with the catalogue policy and payload schema', async () => {
  const t = await startTestRuntime('sqlite', {}, { startWorkers: false });
  try {
    const registered = t.runtime.services.jobs;
    assert.deepEqual(registered.map((d) => d.kind).sort(), [...KINDS].sort(), 'one definition per catalogue kind, no other');
    for (const definition of registered) {
      const spec = JOB_CATALOGUE[definition.kind as JobKind];
      assert.equal(definition.maxAttempts, spec.maxAttempts, definition.kind);
      assert.equal(definition.leaseMs, spec.leaseMs, definition.kind);
      assert.equal(definition.payload, spec.payload, definition.kind);
      for (const failures of [1, 2, 5, 20]) {
        const [a, b] = [definition.backoff(failures), spec.backoff(failures)];
        // Callback schedules are jittered: the same band, not the same number.
        assert.ok(Math.abs(a - b) <= 0.2 * Math.max(a, b) + 1000, `${definition.kind} backoff(${failures}): ${a} vs ${b}`);
      }
    }
  } finally {
    await t.close();
  }
});

test('newJob takes the attempts from the catalogue and keeps the payload as given', () => {
  const job = newJob('payment.drive', { operationId: 'op-1', attempt: 2 }, { runAt: 5, dedupeKey: 'k' });
  assert.deepEqual(job, { kind: 'payment.drive', payload: { operationId: 'op-1', attempt: 2 }, maxAttempts: 1000, runAt: 5, dedupeKey: 'k', known: undefined });
});

/** Only its shape on the job matters here. */
const SOME_DRIVE_RECORD = {} as DriveRecord;

test('known is typed by the kind (KnownByKind): what the first run would read, nothing for a kind that declares nothing', () => {
  // @ts-expect-error a drive job's known is what findForDrive reads, not any object
  newJob('payment.drive', { operationId: 'op-1' }, { known: { any: 1 } });
  // @ts-expect-error a kind that declares nothing takes nothing
  newJob('session.expire', { sessionId: 's' }, { known: {} });
  assert.equal(newJob('session.expire', { sessionId: 's' }).known, undefined);
});

test('every new job has the same fields in the same order, whichever options it was given (one shape: docs/object-shapes.md)', () => {
  const shapes = [
    newJob('payment.drive', { operationId: 'op-1', attempt: 2 }),
    newJob('payment.drive', { operationId: 'op-1', attempt: 2 }, { known: SOME_DRIVE_RECORD }),
    newJob('payment.drive', { operationId: 'op-1', attempt: 2 }, { dedupeKey: 'k', known: SOME_DRIVE_RECORD, runAt: 5 }),
  ].map((job) => Object.keys(job).join(','));
  assert.deepEqual(shapes, Array(3).fill('kind,payload,maxAttempts,runAt,dedupeKey,known'));
});

for (const store of await availableStores()) {
  describe(`job catalogue at work (${store})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(store, {}, { startWorkers: false });
    });
    after(() => t.close());

    test('what a payment enqueues matches its kind’s payload schema', async () => {
      const m = await t.createMerchant();
      const res = await m.api.post(`${API}/moto`, {
        transaction: { pointOfSaleId: m.onlinePointOfSaleId, amount: 1000, currency: 'DKK', reference: 'catalogue', notificationUrl: 'http://localhost:9/cb' },
        card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
      });
      assert.equal(res.status, 200, res.text);
      const rows = await t.runtime.store.db.selectFrom('jobs').select(['kind', 'payload', 'maxAttempts']).execute();
      assert.ok(rows.some((r) => r.kind === 'payment.drive') && rows.some((r) => r.kind === 'callback.deliver'), JSON.stringify(rows.map((r) => r.kind)));
      for (const row of rows) {
        const spec = JOB_CATALOGUE[row.kind as JobKind];
        assert.ok(spec, `${row.kind} is in the catalogue`);
        assert.ok(Value.Check(spec.payload, JSON.parse(row.payload)), `${row.kind} payload ${row.payload}`);
        assert.equal(row.maxAttempts, spec.maxAttempts, row.kind);
      }
    });
  });

  describe(`a payload that does not match its schema (${store})`, () => {
    let t: TestStore;
    before(async () => {
      t = await openTestStore(store);
    });
    after(() => t.close());

    test('is dead at its first claim with the reason, and its handler never runs', async () => {
      let handled = 0;
      const runner = new JobRunner({
        store: t.store.jobs,
        clock: { now: () => t.clock.ms, nowIso: () => new Date(t.clock.ms).toISOString() },
        wallNow: () => t.clock.ms,
        logger: createLogger('silent'),
        definitions: [defineJob('sales.dispatch', async () => void handled++)] as never[],
      });
      await t.store.jobs.enqueue({ kind: 'sales.dispatch', payload: { transactionId: 42 }, maxAttempts: 25 });
      await runner.drain();
      const row = await t.store.db.selectFrom('jobs').select(['state', 'lastError']).where('kind', '=', 'sales.dispatch').executeTakeFirstOrThrow();
      assert.equal(row.state, 'dead');
      assert.match(row.lastError ?? '', /payload does not match the catalogue's schema of sales\.dispatch: \/transactionId/);
      assert.equal(handled, 0);
    });
  });
}
