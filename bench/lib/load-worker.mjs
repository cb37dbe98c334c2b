// Load generator in its own thread, so that it never shares the event loop of the server under
// test. autocannon drives the connections; latencies are taken from its per-response timings
// (float milliseconds from hrtime), because its own histogram keeps whole milliseconds only.
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

const { url, headers, connections, warmupSeconds, durationSeconds } = workerData;

function run(seconds, record) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, headers, connections, duration: seconds, pipelining: 1 }, (err, result) => {
      if (err) reject(err);
      else resolve(result);
    });
    if (record) {
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) record.push(responseTime);
        else record.bad.set(statusCode, (record.bad.get(statusCode) ?? 0) + 1);
      });
    }
  });
}

// Warm-up: JIT, statement caches, database pages; nothing of it is kept.
if (warmupSeconds > 0) await run(warmupSeconds, null);
const samples = [];
samples.bad = new Map();
const result = await run(durationSeconds, samples);
const latencies = Float64Array.from(samples).sort();
parentPort.postMessage({
  latencies,
  durationSeconds: result.duration,
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: Object.fromEntries(samples.bad),
});
