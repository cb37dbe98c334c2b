/**
 * The workers' pace (jobs/drain-meter.ts): jobs settled per second over a sliding window of wall
 * time, and the lag bound it gives the backlog gauge (jobs/backlog.ts: PAYMENTS_MAX_LAG_MS).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BacklogGauge, MIN_LAG_BACKLOG } from '../../src/jobs/backlog.js';
import { DRAIN_WINDOW_MS, DrainMeter } from '../../src/jobs/drain-meter.js';

function meterAt(start = 10_000_000) {
  let wall = start;
  const meter = new DrainMeter(DRAIN_WINDOW_MS, () => wall);
  return { meter, advance: (ms: number) => (wall += ms) };
}

describe('DrainMeter', () => {
  test('nothing settled: 0 per second', () => {
    assert.equal(meterAt().meter.ratePerSecond(), 0);
  });

  test('jobs settled within the window, per second of the window', () => {
    const { meter, advance } = meterAt();
    for (let i = 0; i < 10; i++) {
      meter.record(100);
      advance(400);
    }
    // 1 000 jobs in 4 s, inside a 5 s window.
    assert.equal(meter.ratePerSecond(), 1000 / (DRAIN_WINDOW_MS / 1000));
  });

  test('what settled before the window no longer counts; a long idle spell empties it', () => {
    const { meter, advance } = meterAt();
    meter.record(500);
    advance(DRAIN_WINDOW_MS - 300);
    meter.record(100);
    assert.equal(meter.ratePerSecond(), 600 / 5);
    advance(400);
    assert.equal(meter.ratePerSecond(), 100 / 5, 'the first slot left the window');
    advance(60 * 60_000);
    assert.equal(meter.ratePerSecond(), 0);
    meter.record(5);
    assert.equal(meter.ratePerSecond(), 1, 'counts again after the spell');
  });
});

describe('the lag bound (BacklogGauge with maxLagMs and the workers’ pace)', () => {
  const gaugeWith = (figure: number, rate: number, maxLagMs: number, bound = 50_000) =>
    new BacklogGauge({ bound, now: () => 0, refreshMs: 0, count: async () => figure, maxLagMs, drainRate: () => rate });

  test('the bound in force is the backlog the workers settle in maxLagMs at their pace, under PAYMENTS_MAX_BACKLOG', async () => {
    // 1 500 jobs a second, 2 s: 3 000.
    assert.equal(gaugeWith(0, 1500, 2000).effectiveBound(), 3000);
    assert.equal(await gaugeWith(2999, 1500, 2000).isOverloaded(), false);
    assert.equal(await gaugeWith(3000, 1500, 2000).isOverloaded(), true, 'refused at two seconds of work, far below 50 000');
    assert.equal(gaugeWith(0, 100_000, 2000, 50_000).effectiveBound(), 50_000, 'never above PAYMENTS_MAX_BACKLOG');
  });

  test('no pace yet (idle, just started): at least MIN_LAG_BACKLOG is accepted', async () => {
    assert.equal(gaugeWith(0, 0, 2000).effectiveBound(), MIN_LAG_BACKLOG);
    assert.equal(await gaugeWith(MIN_LAG_BACKLOG - 1, 0, 2000).isOverloaded(), false);
    assert.equal(gaugeWith(0, 0, 2000, 100).effectiveBound(), 100, 'a smaller fixed bound still wins');
  });

  test('maxLagMs 0 or no pace to measure (a process without workers): the fixed bound alone', async () => {
    assert.equal(gaugeWith(0, 1500, 0).effectiveBound(), 50_000);
    const apiOnly = new BacklogGauge({ bound: 50_000, now: () => 0, refreshMs: 0, count: async () => 10_000, maxLagMs: 2000 });
    assert.equal(apiOnly.effectiveBound(), 50_000);
    assert.equal(await apiOnly.isOverloaded(), false);
  });
});
