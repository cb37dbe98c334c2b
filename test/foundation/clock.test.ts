/**
 * The sandbox clock is shared by every process of a deployment: a move made through one runtime
 * reaches another runtime on the same database by itself (within about a second), and wakes its
 * schedulers there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ServiceClock } from '../../src/clock.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startTestRuntime, testConfig, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';

for (const kind of await availableStores()) {
  describe(`the sandbox clock across runtimes (${kind})`, () => {
    let t: TestRuntime;
    let sibling: Runtime;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      const config = testConfig(t.database, { operatorKey: t.operatorKey });
      sibling = await createRuntime(config, {
        logger: createLogger('silent'),
        connectOptions: t.database.schema ? { schema: t.database.schema } : {},
        startWorkers: false,
      });
    });
    after(async () => {
      await sibling?.close();
      await t.close();
    });

    test('a move made through one runtime reaches the other by itself, and fires its jump listeners', async () => {
      let jumps = 0;
      const stop = sibling.clock.onJump(() => jumps++);
      const target = (await t.runtime.clock.advance(3 * 86_400)) as number;
      assert.ok(sibling.clock.now() < target - 86_400, 'not yet seen');
      const deadline = Date.now() + 5000;
      while (sibling.clock.now() < target - 1000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      stop();
      assert.ok(sibling.clock.now() >= target - 1000, `the other runtime follows (${sibling.clock.nowIso()} vs ${new Date(target).toISOString()})`);
      assert.ok(jumps >= 1, 'its schedulers were told');
    });
  });
}

test('a re-read that started before a local move does not undo it: service time never goes back', async () => {
  let stored = 0;
  let releaseRead: (value: number) => void = () => undefined;
  const store = {
    // The first read is slow and sees the offset from before the move.
    loadOffsetMs: () => new Promise<number>((resolve) => (releaseRead = resolve)),
    saveOffsetMs: async (offset: number) => {
      stored = offset;
    },
  };
  const clock = new ServiceClock(store, true);
  const reading = clock.refresh();
  const moved = await clock.advance(3600);
  releaseRead(0);
  await reading;
  assert.ok(stored >= 3_600_000 - 1000);
  assert.ok(clock.now() >= moved - 1000, 'the stale read left the move in place');
});

for (const kind of await availableStores()) {
  test(`the stored clock offset never goes down: of two moves made at once, the later time stays (${kind})`, async () => {
    const t = await startTestRuntime(kind, {}, { startWorkers: false });
    try {
      const settings = t.runtime.store.settings;
      await settings.saveOffsetMs(7_200_000);
      await settings.saveOffsetMs(3_600_000); // a process that had not seen the first move yet
      assert.equal(await settings.loadOffsetMs(), 7_200_000);
      await settings.saveOffsetMs(10_800_000);
      assert.equal(await settings.loadOffsetMs(), 10_800_000);
    } finally {
      await t.close();
    }
  });
}
